// dense-optimizer-on-embedding: a dense optimizer apply (ApplyAdam, ResourceApplyAdam, ...) updates
// a variable that is also gathered from (an embedding), so every row is updated every step
// (docs/rules/dense-optimizer-on-embedding.md). Thresholds: rules/default.rules.json.
#pragma once

#include <vector>

#include "analyzers/analysis_input.h"

namespace tfdiag {

std::vector<Finding> RunDenseApplyOnEmbedding(const AnalysisInput& in, const Rule& rule);

}  // namespace tfdiag
