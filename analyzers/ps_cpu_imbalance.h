// ps-cpu-imbalance: PS tasks whose CPU use is far apart: the hot PS seen from the CPU side
// (docs/rules/ps-cpu-imbalance.md; vivo: one PS busy, the others under 10% CPU). Reads live samples
// (bundles from tfdiag attach); thresholds: rules/default.rules.json.
#pragma once

#include <vector>

#include "analyzers/analysis_input.h"

namespace tfdiag {

std::vector<Finding> RunPsCpuImbalance(const AnalysisInput& in, const Rule& rule);

}  // namespace tfdiag
