// The scaling outlook's texts (issue 44 item 3; analyzers/outlook.h): its one-line verdict and
// the assumption its PS receive links make. Pure functions.
#pragma once

#include <string>
#include <vector>

#include "analyzers/outlook.h"
#include "analyzers/outlook_links.h"

namespace tfdiag {

// "Adding workers pays up to about N workers: R saturates at M (scaling efficiency under 60%)",
// or "Scales: ...", and after Fix first where there is one; from `o`'s points and saturation.
std::string OutlookVerdict(const Outlook& o);

// The assumption line of the PS receive links (outlook_links.h RecvLinkCap) for the busiest
// PS whose receives carry at least a worker's sends; "" when none does. `m` the outlook's model,
// `links` PsLinks(in, m), `nic_estimated` whether the NICs' bandwidth was estimated (the
// asynchronous convoy stays off then).
std::string RecvLinksAssumption(const AnalysisInput& in, const ReplayModel& m,
                                const std::vector<PsLinkEvidence>& links, bool nic_estimated);

}  // namespace tfdiag
