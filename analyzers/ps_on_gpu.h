// ps-on-gpu: GPU devices under /job:ps; PS work is memory-bound and pays host-to-device copies
// (docs/rules/ps-on-gpu.md). Thresholds: rules/default.rules.json.
#pragma once

#include <vector>

#include "analyzers/analysis_input.h"

namespace tfdiag {

std::vector<Finding> RunPsOnGpu(const AnalysisInput& in, const Rule& rule);

}  // namespace tfdiag
