// straggler-worker: workers whose median step time is an outlier against the other workers'.
// Thresholds: rules/default.rules.json.
#pragma once

#include <vector>

#include "analyzers/analysis_input.h"

namespace tfdiag {

std::vector<Finding> RunStragglerWorker(const AnalysisInput& in, const Rule& rule);

}  // namespace tfdiag
