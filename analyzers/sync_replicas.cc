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
  return plan;
}

}  // namespace tfdiag
