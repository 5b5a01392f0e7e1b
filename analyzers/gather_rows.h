// gather-on-worker's rows estimate: where show_memory does not size a worker gather's output (the
// rows it reads), the bytes one lookup of the job's other tables pulls from their PS, read from
// the sized outputs of their PS-side gathers (analyzers/gather_on_worker.h).
#pragma once

#include <set>
#include <string>

#include "analyzers/analysis_input.h"

namespace tfdiag {

// The job's tables looked up on their PS (a gather op on a PS task whose params input is not
// received from another task) whose gathers' outputs show_memory sizes, every part of a
// partitioned table summed: the rows' bytes one worker step's lookup of that table pulls.
struct PeerLookups {
  int tables = 0;         // peer tables with every seen part's gather sized
  double mean_bytes = 0;  // mean over those tables of the bytes per lookup
  double max_bytes = 0;   // the largest table's bytes per lookup
};

// Peer lookups over the PS tasks of `in`, leaving out the tables (partition bases) in `exclude`.
PeerLookups FindPeerLookups(const AnalysisInput& in,
                            const std::set<std::string, std::less<>>& exclude);

}  // namespace tfdiag
