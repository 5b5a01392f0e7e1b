// idle-ps: PS tasks whose busy time is below max_fraction_of_hottest x the busiest PS's
// (vivo: "the others under 10% CPU"), or that ran no op at all.
#pragma once

#include <vector>

#include "analyzers/analysis.h"

namespace tfdiag {

std::vector<Finding> RunIdlePs(const AnalysisInput& in, const Rule& rule);

}  // namespace tfdiag
