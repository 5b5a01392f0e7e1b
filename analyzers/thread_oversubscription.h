// thread-oversubscription: runnable and total threads of a TF task against its CPU limit (CFS quota
// / period), with involuntary context switches per core and CFS throttling
// (docs/rules/thread-oversubscription.md; Mogujie). Reads live samples (bundles from tfdiag
// attach); thresholds: rules/default.rules.json.
#pragma once

#include <vector>

#include "analyzers/analysis_input.h"

namespace tfdiag {

std::vector<Finding> RunThreadOversubscription(const AnalysisInput& in, const Rule& rule);

}  // namespace tfdiag
