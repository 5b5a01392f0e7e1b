// sync-replicas: time workers and PS spend in SyncReplicasOptimizer's accumulators and token queue
// (docs/rules/sync-replicas.md). Thresholds: rules/default.rules.json.
#pragma once

#include <vector>

#include "analyzers/analysis_input.h"
#include "analyzers/replay.h"

namespace tfdiag {

std::vector<Finding> RunSyncReplicas(const AnalysisInput& in, const Rule& rule);

// Under SyncReplicasOptimizer, what PS `t`'s applies (`is_apply` op types) would cost once
// asynchronous, as a share of the workers x their op time per step of the job, in [0, 1]: each
// variable's aggregated apply covers the gradients of every replica, and one worker's push
// covers its own. An embedding's aggregate holds every replica's rows (each push a share of
// them), a dense variable's has the variable's shape (each push all of it). The capture shows
// that ratio per variable as the accumulator's op time per push (AccumulatorApplyGradient: one
// worker's gradient) over its op time per step of the job (AccumulatorTakeGradient: the
// aggregate), both in proportion to the tensor's bytes, so an apply's time once asynchronous is
// its aggregated time times that ratio (at most 1) per push. A variable is matched to its
// accumulator where the accumulator op's name or first input names the variable (the apply's
// first input, else its name less the last component) as whole path components; an apply with no
// match keeps its whole time per push (ratio 1, the dense case), and so does a variable whose
// applies are all dense (IsDenseApplyOpType: ApplyAdam and the like update every element whatever
// rows a push holds, TF's training_ops). 1 when `t` has no apply.
// `fixed` (ns, PushFixedCost): the cost a push pays whatever its bytes, taken out of the push's
// time before the ratio and paid once by each asynchronous apply. The share stays at most 1, so
// on a PS of dense variables only (ratio 1 each) the fixed cost adds nothing: such a PS's
// asynchronous applies are under-costed by `fixed` per push (not measured on the spent sets).
double AsyncApplyShare(const Capture& c, const TaskStats& t, bool (*is_apply)(std::string_view),
                       double fixed = 0);

// The fixed cost (ns) of an op a worker's gradient runs on a PS (its RPC and dispatch), which the
// take the chief runs there does not pay: a dense variable's push and take carry the same bytes,
// so its push's mean time per op beyond its take's is that cost; the median over the dense
// variables of the PS tasks in `tasks` (those whose push takes at least its take), 0 without any.
// Counted in proportion to the bytes, it made each asynchronous apply pay it (apply / accumulate
// time per byte) times over (gen3 report4 1302: 48 workers on 11 PS of one thread, a push's
// applies replayed at 1.28 ms where the twin's cost 0.46 ms; sync-replicas withheld as
// saturating ps:0, twin +35%). On a real timeline a take blocks until enough gradients are in,
// so its time includes that wait, no push runs longer than its take and the cost is 0 (the
// bytes-proportional share, as before).
double PushFixedCost(const Capture& c, const std::vector<TaskStats>& tasks,
                     bool (*is_apply)(std::string_view));

// Under SyncReplicasOptimizer, a PS whose receives were in flight over this share of the capture
// (replay_concurrency.h ReceiveBusyShare): the workers' wait for the answers is its link's time,
// not only the burst after the barrier that the asynchronous replay drops. Set on gen2 report9
// (2018 at 0.39 and 2026 at 0.35 predicted -39% and -23% of their twins; 2007, 2029 at 0.02-0.05
// and gen3 report8 2107, 2131 at 0.17-0.20 within 18%); checked on gen2 report8 (1801 at 0.49:
// -63%, 1812 at 0.46: -22%, now withheld) and gen3 report7 (1926 at 0.49, -8%, withheld too).
inline constexpr double kMaxSyncLinkShare = 0.30;

// sync-replicas's fix model (asynchronous training): no barrier, no accumulators, each push
// applied on its own, the exposed receive wait after the barrier's burst of pulls dropped
// (Fix::to_async), with the staleness caveat in `what`; not modelled when the replay model shows
// no SyncReplicasOptimizer. The busiest PS after the fix (its reads plus its applies once per
// push) and the step at which it is the rule's max_busy_after_pct busy is FixPlan::busy_floor_ns:
// where the replay predicts a shorter step the prediction is that floor, at most medium, or
// withheld (replay_impact_gates.h BoundByBusierPs). Not predicted (FixPlan::why) where the
// workers' token wait beyond the replayed barrier (held fixed) is over max_held_tail_pct of the
// step, or where a PS's receives (waits on its link) were in flight over kMaxSyncLinkShare of the
// capture; at most medium (FixPlan::estimated) over high_max_held_tail_pct (rules/: set on the
// independent suite's tune sets, docs/rules/sync-replicas.md). Runs no replay.
FixPlan SyncReplicasFix(const AnalysisInput& in, const ReplayModel& m, const Finding& f,
                        const Rule& rule);

}  // namespace tfdiag
