// idle-ps: PS tasks whose busy time is below max_fraction_of_hottest x the busiest PS's
// (vivo: "the others under 10% CPU"), or that ran no op at all. When the busiest PS stands out
// alone (outlier_ratio x the next: hot-ps reports it), the next busiest is the reference.
#pragma once

#include <vector>

#include "analyzers/analysis_input.h"
#include "analyzers/replay.h"

namespace tfdiag {

std::vector<Finding> RunIdlePs(const AnalysisInput& in, const Rule& rule);

// idle-ps's fix model, as its fix text says: the idle PS removed and the variables partitioned
// over the PS left (Fix::drop_ps and Fix::ps_count: all PS work spread evenly).
FixPlan IdlePsFix(const AnalysisInput& in, const ReplayModel& m, const Finding& f,
                  const Rule& rule);

}  // namespace tfdiag
