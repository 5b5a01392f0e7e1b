// oversharding: dense variables split into more part_<k> partitions than there are PS tasks, each
// small, so each worker waits on many transfers before a layer can run
// (docs/rules/oversharding.md). Thresholds: rules/default.rules.json.
#pragma once

#include <vector>

#include "analyzers/analysis_input.h"
#include "analyzers/replay.h"

namespace tfdiag {

std::vector<Finding> RunOversharding(const AnalysisInput& in, const Rule& rule);

// oversharding's fix model: each over-partitioned variable cut to one part per PS
// (fixed_size_partitioner(num_ps)); each worker's receive time scales by the share of its waits
// the parts' arrival ended times (1 - parts after / parts before): small parts cost per
// transfer, and the bytes stay (Fix::recv_cut); at most `medium` (FixPlan::estimated) where the
// transfers held fixed are over kMaxFixedTransferShare of the step. Not modelled without worker
// steps.
FixPlan OvershardingFix(const AnalysisInput& in, const ReplayModel& m, const Finding& f,
                        const Rule& rule);

}  // namespace tfdiag
