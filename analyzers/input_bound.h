// input-bound: share of each worker's step time spent waiting for input (IteratorGetNext and
// friends); TensorBoard's profiler calls a step input-bound at 5% (moderate) and 20% (high).
// Thresholds: rules/default.rules.json.
#pragma once

#include <vector>

#include "analyzers/analysis.h"

namespace tfdiag {

std::vector<Finding> RunInputBound(const AnalysisInput& in, const Rule& rule);

}  // namespace tfdiag
