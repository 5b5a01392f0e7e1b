// sync-replicas: time workers and PS spend in SyncReplicasOptimizer's accumulators and token queue
// (docs/rules/sync-replicas.md). Thresholds: rules/default.rules.json.
#pragma once

#include <vector>

#include "analyzers/analysis_input.h"

namespace tfdiag {

std::vector<Finding> RunSyncReplicas(const AnalysisInput& in, const Rule& rule);

}  // namespace tfdiag
