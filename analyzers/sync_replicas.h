// sync-replicas: time workers and PS spend in SyncReplicasOptimizer's accumulators and token queue
// (domain.md "Synchronous replicas"). Thresholds: rules/default.rules.json.
#pragma once

#include <vector>

#include "analyzers/analysis.h"

namespace tfdiag {

std::vector<Finding> RunSyncReplicas(const AnalysisInput& in, const Rule& rule);

}  // namespace tfdiag
