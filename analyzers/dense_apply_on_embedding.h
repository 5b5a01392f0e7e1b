// dense-optimizer-on-embedding: a dense optimizer apply (ApplyAdam, ResourceApplyAdam, ...) updates
// a variable that is also gathered from (an embedding), so every row is updated every step
// (docs/rules/dense-optimizer-on-embedding.md). Thresholds: rules/default.rules.json.
#pragma once

#include <vector>

#include "analyzers/analysis_input.h"
#include "analyzers/replay.h"

namespace tfdiag {

std::vector<Finding> RunDenseApplyOnEmbedding(const AnalysisInput& in, const Rule& rule);

// dense-optimizer-on-embedding's fix model (a sparse apply): the dense apply's time beyond the
// same variable's gathers leaves each PS (Fix::ps_demand_cut); not modelled without steps.
FixPlan DenseApplyOnEmbeddingFix(const AnalysisInput& in, const ReplayModel& m, const Finding& f,
                                 const Rule& rule);

}  // namespace tfdiag
