#include "analyzers/sync_replicas.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analyzers/capture_queries.h"
#include "analyzers/op_names.h"
#include "analyzers/replay_concurrency.h"
#include "analyzers/replay_cores.h"
#include "core/duration.h"
#include "core/median.h"

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
  Finding f = MakeFinding(rule, "job", "job");
  f.summary = fmt::format(
      "SyncReplicasOptimizer machinery takes {:.0f}% of worker step time ({} ops: accumulators "
      "and the sync token queue); workers wait for the slowest replica every step",
      share, sync_ops);
  // Under min_worker_share_pct the machinery's own ops are a small share of the step, but what
  // synchronous training costs is not only their time: every worker pulls at once after the
  // barrier, a burst its receive waits show, and the fix's prediction says what going
  // asynchronous buys (independent suite, tune2 3037: the machinery 4% of the step, async 53%
  // faster, no finding before). The finding is then LOW.
  if (share < rule.Param("min_worker_share_pct")) {
    f.severity = Severity::kLow;
    f.summary += fmt::format(
        "; severity low: under {:.0f}% of the step in its own ops (what the barrier costs beyond "
        "them is what the prediction of its fix weighs)",
        rule.Param("min_worker_share_pct"));
  }
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

// The variable an apply op updates: its first input (the variable), else its name less the last
// component ("emb/part_0/SparseApplyAdagrad" -> "emb/part_0").
std::string_view AppliedVariable(const Capture& c, const OpRow& op) {
  const NodeRow& n = c.Node(op);
  if (n.inputs_count > 0) return c.Str(c.inputs[n.inputs_begin]);
  const std::string_view name = c.Str(n.name);
  const size_t slash = name.rfind('/');
  return slash == std::string_view::npos ? name : name.substr(0, slash);
}

// Whether `path` holds `var` as whole components ('/'-separated; '|' separates two names).
bool NamesVariable(std::string_view path, std::string_view var) {
  if (var.empty()) return false;
  for (size_t at = path.find(var); at != std::string_view::npos; at = path.find(var, at + 1)) {
    const size_t end = at + var.size();
    const bool starts = at == 0 || path[at - 1] == '/' || path[at - 1] == '|';
    if (starts && (end == path.size() || path[end] == '/' || path[end] == '|')) return true;
  }
  return false;
}

}  // namespace

namespace {

// An accumulator's take of the aggregate (the chief's, once per global step).
bool IsAccumulatorTake(std::string_view type) {
  return type == "AccumulatorTakeGradient" || type == "SparseAccumulatorTakeGradient";
}

// Per variable of PS `t` (its applies' name or first input): its applies and accumulator ops.
struct Var {
  double apply_ns = 0;             // the applies' op time
  double dense_ns = 0;             // of which dense applies (IsDenseApplyOpType)
  double push_ns = 0, pushes = 0;  // AccumulatorApplyGradient: op time, ops
  double take_ns = 0, takes = 0;   // AccumulatorTakeGradient: op time, ops
};
std::map<std::string, Var> AccumulatedVars(const Capture& c, const TaskStats& t,
                                           bool (*is_apply)(std::string_view)) {
  std::map<std::string, Var> vars;
  std::vector<std::pair<std::string, bool>> accum;  // (name or first input, a take) per op
  std::vector<double> accum_ns;
  StringTest apply_type(c, is_apply);
  ForEachOpOfTask(c, t, [&](const OpRow& op) {
    const std::string_view type = c.Str(c.OpType(op));
    const bool push =
        type == "AccumulatorApplyGradient" || type == "SparseAccumulatorApplyGradient";
    const bool take = IsAccumulatorTake(type);
    if (push || take) {
      const NodeRow& n = c.Node(op);
      const std::string_view key =
          n.inputs_count > 0 ? c.Str(c.inputs[n.inputs_begin]) : c.Str(n.name);
      // The accumulator (its first input) and the op's own name: either may name the variable.
      accum.emplace_back(std::string(key) + "|" + std::string(c.Str(n.name)), take);
      accum_ns.push_back(double(op.dur()));
    } else if (apply_type(c.OpType(op))) {
      Var& v = vars[std::string(AppliedVariable(c, op))];
      v.apply_ns += double(op.dur());
      if (IsDenseApplyOpType(type)) v.dense_ns += double(op.dur());
    }
  });
  for (size_t i = 0; i < accum.size(); ++i) {
    Var* best = nullptr;
    size_t best_len = 0;
    for (auto& [name, v] : vars) {
      if (name.size() > best_len && NamesVariable(accum[i].first, name)) {
        best = &v, best_len = name.size();
      }
    }
    if (best == nullptr) continue;
    if (accum[i].second) {
      best->take_ns += accum_ns[i], ++best->takes;
    } else {
      best->push_ns += accum_ns[i], ++best->pushes;
    }
  }
  return vars;
}

}  // namespace

double PushFixedCost(const Capture& c, const std::vector<TaskStats>& tasks,
                     bool (*is_apply)(std::string_view)) {
  std::vector<double> fixed_ns;
  for (const TaskStats& t : tasks) {
    if (t.kind != JobKind::kPs) continue;
    for (const auto& [name, v] : AccumulatedVars(c, t, is_apply)) {
      if (v.pushes <= 0 || v.takes <= 0) continue;
      const double excess = v.push_ns / v.pushes - v.take_ns / v.takes;
      if (excess >= 0) fixed_ns.push_back(excess);
    }
  }
  return fixed_ns.empty() ? 0 : MedianInPlace(&fixed_ns);
}

double AsyncApplyShare(const Capture& c, const TaskStats& t, bool (*is_apply)(std::string_view),
                       double fixed) {
  const std::map<std::string, Var> vars = AccumulatedVars(c, t, is_apply);
  if (vars.empty()) return 1;
  double all = 0, async = 0;
  for (const auto& [name, v] : vars) {
    all += v.apply_ns;
    if (v.pushes > 0 && v.takes > 0 && v.take_ns > 0) {
      // Per push: the aggregated apply times one push's share of the bytes, plus the fixed cost.
      // A dense apply (ApplyAdam, ...) updates every element of the variable whatever rows the
      // push holds: all of it per push, also on an embedding whose accumulator holds rows (gen3
      // report25 5719, spent: a dense Adam over a 41 MB embedding at half its time per push,
      // sync-replicas predicted -7% where its twin went 20% slower; `high`, -23% off).
      const double share =
          v.dense_ns >= v.apply_ns ? 1.0 : (v.push_ns / v.pushes - fixed) / (v.take_ns / v.takes);
      async += v.apply_ns * std::clamp(share, 0.0, 1.0) + fixed * v.takes;
    } else {
      async += v.apply_ns;  // no accumulator matched: its whole time per push
    }
  }
  return all > 0 ? std::clamp(async / all, 0.0, 1.0) : 1;
}

namespace {

// The op time (ns) of the accumulators' takes (AccumulatorTakeGradient,
// SparseAccumulatorTakeGradient) on PS task `task` over the capture; 0 where it has none or
// where it runs an apply op (IsDenseApplyOpType, IsSparseApplyOpType: the update is there).
double TakeNs(const AnalysisInput& in, uint32_t task) {
  const TaskStats* t = in.stats.Find(in.capture.TaskLabelOf(task));
  if (t == nullptr) return 0;
  double ns = 0;
  bool applies = false;
  ForEachOpOfTask(in.capture, *t, [&](const OpRow& op) {
    const std::string_view type = in.capture.Str(in.capture.OpType(op));
    if (IsAccumulatorTake(type)) ns += double(op.dur());
    applies = applies || IsDenseApplyOpType(type) || IsSparseApplyOpType(type);
  });
  return applies ? 0 : ns;
}

}  // namespace

FixPlan SyncReplicasFix(const AnalysisInput& in, const ReplayModel& m, const Finding& f,
                        const Rule& rule) {
  FixPlan plan;
  if (!m.sync) return plan;
  // Asynchronous training (the rule's fix): no barrier, each push applied on its own. The
  // receive time the PS queue does not explain (Worker::recv_ns) is not held: under
  // SyncReplicasOptimizer every worker pulls at once after the barrier, and that wait is the
  // burst (on the PS NICs, in the order the PS serve the pulls in) which workers that no longer
  // pull together do not meet (the replay drops it with the barrier, analyzers/replay_plan.cc).
  plan.fix.to_async = true;
  plan.what = fmt::format(
      "SyncReplicasOptimizer removed: no barrier, no accumulators, each of the {} workers' "
      "gradients applied as they arrive (the applies run once per worker step instead of once "
      "per step of the job), the wait after the barrier's burst of pulls gone; staleness "
      "caveat: asynchronous workers compute on variables up to {} updates old, so each step may "
      "buy less convergence (throughput predicted, not accuracy)",
      m.workers.size(), m.workers.size() - 1);
  // The PS's load after the fix: asynchronous applies run once per push, so each PS's demand
  // per worker step becomes its reads plus its applies x the workers. A PS near saturation
  // queues the requests of every worker, and there the replay is optimistic: it serves each PS's
  // requests in arrival order on the threads the capture's lighter load showed, where a real PS
  // runs the ops of many requests at once and out of order, a worker's pull done only with its
  // last op (tune sets: 21-38% fast on three of four jobs at 96-110% busy). The busiest PS's
  // step at max_busy_after_pct is the floor the impact predicts at where the replay's step is
  // shorter (FixPlan::busy_floor_ns; spent pools, session 61: the seven such fixes that buy
  // something, six of them withheld before, were predicted from 11% under their twins to 15%
  // over).
  const double nw = double(m.workers.size());
  const double limit = rule.Param("max_busy_after_pct") / 100;
  for (const ReplayModel::Ps& p : m.ps) {
    double async_push = p.push_ns * nw * std::clamp(p.async_apply_share, 0.0, 1.0);
    // A PS that takes aggregates but shows no apply op: the update's applies, which the chief
    // runs after each take, are not in the capture (or ran inside the take), so the take's time
    // stands for its apply, once per push after the fix (exact for a dense variable, whose apply
    // touches every element whatever a push holds; more than a sparse push's rows cost). Without
    // it the applies were no work (gen2 report41 8617, spent: 8 PS under a CFS quota, going
    // asynchronous predicted -36%, its twin 74% slower). The take's time as measured, not at the
    // PS's work scale: it runs once every push is in, its PS's other ops of the step done, so it
    // ran alone (the scale, 0.21 on 8617's ps:2, is read from ops slowed beside each other); a
    // take that waited for its replicas overstates it, which withholds rather than promises.
    const double takes = (p.push_ns > 0 || m.steps <= 0) ? 0 : TakeNs(in, p.task);
    if (takes > 0) async_push = takes / double(m.steps) * nw;
    const double demand =
        (p.pull_ns - p.sync_ns + async_push) * nw / double(std::max(1, p.threads));
    if (limit <= 0 || demand / limit <= plan.busy_floor_ns) continue;
    plan.busy_floor_ns = demand / limit;
    plan.busy_limit = limit;
    plan.busy_what = fmt::format(
        "{}, whose applies run once per push after the fix ({} of op time per worker step on its "
        "{} thread(s){}{})",
        in.capture.TaskLabelOf(p.task), FormatDurationShort(demand), std::max(1, p.threads),
        ThreadsOverFittedCores(m)
            ? fmt::format(", {} threads on {} core(s) fitted from the ops' slowdown", m.ps_threads,
                          m.ps_cores)
            : "",
        takes > 0 ? "; the capture shows no apply op there, each apply taken at its aggregate's "
                    "take's time"
                  : "");
  }
  // The PS links: the async replay drops each worker's receive wait beyond the replayed PS
  // queue as the barrier's burst of pulls. Where a PS's receives (waits on its link,
  // replay_concurrency.h ReceivesAreWaits) were in flight over kMaxSyncLinkShare of the
  // capture, that wait is its link's own time, which asynchronous workers still spend (the
  // same gradients and answers each step), and the capture cannot tell the burst from it.
  for (const ReplayModel::Ps& p : m.ps) {
    const TaskStats* t = in.stats.Find(in.capture.TaskLabelOf(p.task));
    if (t == nullptr) continue;
    const double r = replay_detail::ReceiveBusyShare(in.capture, *t, in.stats.span_ns);
    if (r <= kMaxSyncLinkShare) continue;
    plan.why = fmt::format(
        "{} receives gradients {:.0f}% of the capture (its receives in flight; over {:.0f}%): the "
        "workers' wait for the PS answers is then its link's time, which asynchronous workers "
        "still spend, not "
        "only the burst after the barrier that the asynchronous replay drops, and the capture "
        "does not tell the two apart, so what going asynchronous buys is not predicted",
        in.capture.TaskLabelOf(p.task), 100 * r, 100 * kMaxSyncLinkShare);
    plan.what.clear();
    plan.fix = Fix{};
    return plan;
  }
  // What the replay still holds fixed: each worker's tail (its token wait beyond the replayed
  // barrier), as a share of the step.
  const double held = HeldTailShare(m);
  if (held > rule.Param("max_held_tail_pct") / 100) {
    plan.why = fmt::format(
        "{:.0f}% of the step is token wait beyond the replayed barrier (over {:.0f}%), held "
        "fixed though asynchronous workers wait for no token, so what going asynchronous buys is "
        "not predicted",
        100 * held, rule.Param("max_held_tail_pct"));
    plan.what.clear();
    plan.fix = Fix{};
    return plan;
  }
  if (held > rule.Param("high_max_held_tail_pct") / 100) {
    plan.estimated = fmt::format(
        "{:.0f}% of the step is token wait beyond the replayed barrier, held fixed though "
        "asynchronous workers wait for no token",
        100 * held);
  }
  return plan;
}

}  // namespace tfdiag
