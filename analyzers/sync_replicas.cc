#include "analyzers/sync_replicas.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "analyzers/capture_queries.h"
#include "analyzers/op_names.h"

namespace tfdiag {

std::vector<Finding> RunSyncReplicas(const AnalysisInput& in, const Rule& rule) {
  std::vector<Finding> out;
  const Capture& c = in.capture;
  TimeNs worker_sync = 0, worker_steps = 0, ps_sync = 0;
  int64_t sync_ops = 0;
  std::map<std::string, TimeNs> by_name;
  StringTest sync_type(c, IsSyncReplicasOpType), sync_name(c, IsSyncReplicasOpName);
  for (const TaskStats& t : in.stats.tasks) {
    const bool training = IsTrainingTask(t.kind);
    if (!training && t.kind != JobKind::kPs) continue;
    ForEachOpOfTask(c, t, [&](const OpRow& op) {
      if (!sync_type(c.OpType(op)) && !sync_name(c.OpName(op))) return;
      ++sync_ops;
      (training ? worker_sync : ps_sync) += op.dur();
      by_name[std::string(c.Str(c.OpName(op)))] += op.dur();
    });
    if (training) worker_steps += t.step_mean_ns * t.steps;
  }
  if (sync_ops == 0 || worker_steps == 0) return out;
  const double share = 100.0 * worker_sync / worker_steps;
  if (share < rule.Param("min_worker_share_pct")) return out;
  Finding f = MakeFinding(rule, "job", "job");
  f.summary = fmt::format(
      "SyncReplicasOptimizer machinery takes {:.0f}% of worker step time ({} ops: accumulators "
      "and the sync token queue); workers wait for the slowest replica every step",
      share, sync_ops);
  f.evidence = {{"sync ops", double(sync_ops), "count"},
                {"sync time on workers", worker_sync / 1e3, "us"},
                {"share of worker step time", share, "%"},
                {"sync time on PS", ps_sync / 1e3, "us"}};
  std::vector<std::pair<TimeNs, std::string>> top;
  for (const auto& [name, ns] : by_name) top.emplace_back(ns, name);
  std::sort(top.rbegin(), top.rend());
  for (size_t i = 0; i < top.size() && i < 4; ++i) f.ops.push_back(top[i].second);
  f.range_start = c.start;
  f.range_end = c.end;
  out.push_back(std::move(f));
  return out;
}

namespace {
// A PS's op time after the fix, as a share of today's step on its threads, from which what going
// asynchronous buys is not predicted (see SyncReplicasFix).
constexpr double kMaxLoadAfter = 0.5;
// The workers' wait the PS queue does not explain, as a share of the measured step, above which
// an asynchronous prediction is not `high` (kMaxUnexplainedHigh) or not made
// (kMaxUnexplainedAsync). Under SyncReplicasOptimizer every worker pulls at once after the
// barrier: that wait (the burst on the PS NICs, the order a PS serves the pulls in) is held
// fixed in the asynchronous replay, whose workers no longer pull together (independent suite,
// tune seeds: at 5.7% and 7.1% of the step, 13% and 10% off at `high`; at 16%, 37% off; at
// 0.6-4.8%, within 6%; at 13-14%, within 7%).
constexpr double kMaxUnexplainedHigh = 0.05;
constexpr double kMaxUnexplainedAsync = 0.15;

}  // namespace

FixPlan SyncReplicasFix(const AnalysisInput& in, const ReplayModel& m, const Finding& f,
                        const Rule&) {
  FixPlan plan;
  if (!m.sync) return plan;
  // Asynchronous training (the rule's fix): no barrier, each push applied on its own.
  plan.fix.to_async = true;
  plan.what = fmt::format(
      "SyncReplicasOptimizer removed: no barrier, no accumulators, each of the {} workers' "
      "gradients applied as they arrive (the applies run once per worker step instead of once "
      "per step of the job); staleness caveat: asynchronous workers compute on variables up to "
      "{} updates old, so each step may buy less convergence (throughput predicted, not "
      "accuracy)",
      m.workers.size(), m.workers.size() - 1);
  // The PS's load after the fix: asynchronous applies run once per push, so each PS's demand
  // per worker step becomes its reads plus its applies x the workers. A PS that busy queues the
  // requests of every worker, and there the replay is optimistic: it serves each PS's requests
  // in arrival order on the threads (and the cores the ops' slowdown shows, replay_cores.h) the
  // capture's lighter load showed, where a real PS runs the ops of many requests at once and out
  // of order, a worker's pull done only with its last op. From half the PS's capacity at today's
  // step, no prediction is made (independent suite, tune seeds: async predicted 27%, 40% and 14%
  // faster than its twin at 61%, 84% and 54%; within 13% at 5-45%).
  if (m.measured_step_ns > 0) {
    const double nw = double(m.workers.size());
    for (const ReplayModel::Ps& p : m.ps) {
      const double u = (p.pull_ns - p.sync_ns + p.push_ns * nw) * nw /
                       double(std::max(1, p.threads)) / m.measured_step_ns;
      if (u < kMaxLoadAfter) continue;
      plan.why = fmt::format(
          "asynchronous applies (once per push) would keep {} busy {:.0f}% of today's step on its "
          "{} thread(s){}: a PS that busy queues every worker's requests, which the replay serves "
          "in arrival order at the capacity the capture's lighter load showed, so what going "
          "asynchronous buys is not predicted",
          in.capture.TaskLabelOf(p.task), 100 * u, std::max(1, p.threads),
          m.ps_cores > 0 && m.ps_threads > m.ps_cores
              ? fmt::format(" ({} threads on {} core(s) fitted from the ops' slowdown)",
                            m.ps_threads, m.ps_cores)
              : "");
      plan.what.clear();
      plan.fix = Fix{};
      return plan;
    }
  }
  const double unexplained = UnexplainedWaitShare(m);
  if (unexplained > kMaxUnexplainedAsync) {
    plan.why = fmt::format(
        "{:.0f}% of the step is wait the PS queue does not explain (over {:.0f}%): under "
        "SyncReplicasOptimizer every worker pulls at once after the barrier, and that wait (the "
        "burst on the network, the order the PS serve the pulls in) would be held fixed in an "
        "asynchronous replay whose workers no longer pull together, so what going asynchronous "
        "buys is not predicted",
        100 * unexplained, 100 * kMaxUnexplainedAsync);
    plan.what.clear();
    plan.fix = Fix{};
    return plan;
  }
  if (unexplained > kMaxUnexplainedHigh) {
    plan.estimated = fmt::format(
        "{:.0f}% of the step is wait the PS queue does not explain, held fixed though "
        "asynchronous workers no longer pull together after a barrier",
        100 * unexplained);
  }
  return plan;
}

}  // namespace tfdiag
