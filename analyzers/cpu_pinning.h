// cpu-pinning: a CPU-limited pod whose cpuset spans the whole node (CFS shares and quota,
// "cpushare") instead of exclusive cores (docs/rules/cpu-pinning.md; Mogujie: cpuset
// beat cpushare by 20%+). Reads live samples (bundles from tfdiag attach); thresholds:
// rules/default.rules.json.
#pragma once

#include <vector>

#include "analyzers/analysis_input.h"

namespace tfdiag {

std::vector<Finding> RunCpuPinning(const AnalysisInput& in, const Rule& rule);

}  // namespace tfdiag
