// idle-ps: PS tasks whose busy time is below max_fraction_of_hottest x the busiest PS's
// (vivo: "the others under 10% CPU"), or that ran no op at all. When the busiest PS stands out
// alone (outlier_ratio x the next: hot-ps reports it), the next busiest is the reference.
#pragma once

#include <vector>

#include "analyzers/analysis_input.h"

namespace tfdiag {

std::vector<Finding> RunIdlePs(const AnalysisInput& in, const Rule& rule);

}  // namespace tfdiag
