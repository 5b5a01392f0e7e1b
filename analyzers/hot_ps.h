// hot-ps: one PS task does most of the PS work (docs/rules/hot-ps.md; vivo, Mogujie).
// Fires on a PS whose share of all PS busy time is >= min_share_over_fair x 1/N and whose busy
// time is >= min_ratio_to_next x the next busiest PS (it stands out alone); names the variables
// that make it hot (their share of its op time) and the edges and bytes it serves. Where no PS
// stands out, the busiest PS is hot when its hottest variable is a part of a partitioned
// variable at >= uneven_part_min_ratio x the mean op time of its parts and >=
// uneven_part_min_share of its op time (cause "an unevenly loaded partitioned variable").
// Bundles with eBPF traffic rows take a bytes path first: measured bytes between workers and
// each PS (share, imbalance, the workers driving it; params bytes_*); the timeline path is
// unchanged and runs when the bytes path finds nothing.
#pragma once

#include <vector>

#include "analyzers/analysis_input.h"
#include "analyzers/replay.h"

namespace tfdiag {

std::vector<Finding> RunHotPs(const AnalysisInput& in, const Rule& rule);

// hot-ps's fix model (the fix text: partition the variable across all PS): each hot PS the
// finding names has its hottest variable cut into one part per PS of the cluster
// (Fix::partition); an uneven part's finding has the variable's parts evened out (the op time
// above the mean part of every PS holding one spread over all PS); not modelled on the bytes
// path (eBPF traffic rows).
FixPlan HotPsFix(const AnalysisInput& in, const ReplayModel& m, const Finding& f, const Rule& rule);

}  // namespace tfdiag
