// sync-replicas: time workers and PS spend in SyncReplicasOptimizer's accumulators and token queue
// (docs/rules/sync-replicas.md). Thresholds: rules/default.rules.json.
#pragma once

#include <vector>

#include "analyzers/analysis_input.h"
#include "analyzers/replay.h"

namespace tfdiag {

std::vector<Finding> RunSyncReplicas(const AnalysisInput& in, const Rule& rule);

// sync-replicas's fix model (asynchronous training): no barrier, no accumulators, each push
// applied on its own, the exposed receive wait after the barrier's burst of pulls dropped
// (Fix::to_async), with the staleness caveat in `what`; not modelled when the replay model shows
// no SyncReplicasOptimizer. Not predicted (FixPlan::why) where the asynchronous applies would keep
// a PS busy the rule's max_busy_after_pct or more of the step the replay predicts, or where the
// workers' token wait beyond the replayed barrier (held fixed) is over max_held_tail_pct of the
// step; at most medium (FixPlan::estimated) over high_max_held_tail_pct (rules/: set on the
// independent suite's tune sets, docs/rules/sync-replicas.md). Runs two replays of `m`.
FixPlan SyncReplicasFix(const AnalysisInput& in, const ReplayModel& m, const Finding& f,
                        const Rule& rule);

}  // namespace tfdiag
