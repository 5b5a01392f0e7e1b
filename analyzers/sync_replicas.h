// sync-replicas: time workers and PS spend in SyncReplicasOptimizer's accumulators and token queue
// (docs/rules/sync-replicas.md). Thresholds: rules/default.rules.json.
#pragma once

#include <vector>

#include "analyzers/analysis_input.h"
#include "analyzers/replay.h"

namespace tfdiag {

std::vector<Finding> RunSyncReplicas(const AnalysisInput& in, const Rule& rule);

// sync-replicas's fix model (asynchronous training): no barrier, no accumulators, each push
// applied on its own (Fix::to_async), with the staleness caveat in `what`; not modelled when the
// replay model shows no SyncReplicasOptimizer. Not predicted (FixPlan::why) where the
// asynchronous applies would keep a PS busy half of today's step or more, or where over 15% of the
// step is wait the PS queue does not explain; at most medium (FixPlan::estimated) over 5%
// (independent suite, tune seeds; analyzers/sync_replicas.cc).
FixPlan SyncReplicasFix(const AnalysisInput& in, const ReplayModel& m, const Finding& f,
                        const Rule& rule);

}  // namespace tfdiag
