// allreduce-candidate: a dense model whose variables, with known sizes, would fit on one GPU: ring
// all-reduce beats PS (docs/rules/allreduce-candidate.md). Thresholds:
// rules/default.rules.json.
#pragma once

#include <vector>

#include "analyzers/analysis_input.h"

namespace tfdiag {

std::vector<Finding> RunAllreduceCandidate(const AnalysisInput& in, const Rule& rule);

}  // namespace tfdiag
