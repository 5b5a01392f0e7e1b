// The busiest PS NIC's bytes for the scaling outlook (issue 44 item 3; analyzers/outlook.h).
// Thread-safety: pure functions.
#pragma once

#include <vector>

#include "analyzers/nic_rate.h"
#include "analyzers/outlook_links.h"  // PsLinkEvidence
#include "analyzers/replay.h"

namespace tfdiag {

// The busiest PS NIC's bytes per worker step, either direction, with `fix` applied (0 without
// bytes): a fix that moves work between PS spreads all the bytes evenly over the PS after it.
// `*ps` gets that PS's index into m.ps (0 for a spreading fix; -1 none).
double WorstNicBytes(const ReplayModel& m, const NicDemand& d, const Fix& fix, int* ps);

// The least rate the PS receive rows show, bytes/s: a link moving a PS's gradient bytes per
// worker step (`d.in`) times `captured_steps_per_s` in the share of the capture it had one in
// flight (PsLinkEvidence::recv_share) moved them that fast while receiving. The least over the PS
// that receive; `*ps` (optional) gets that PS's index into `links` (-1 none). An estimate, not a
// bound: the rows span each transfer, latency included, which reads it low, but the bytes per
// step are the capture's sizes (mirrored from the other direction where it sizes one only) and a
// row can miss part of a transfer, which read it high: gen2 report9 2010 reads 12 Gb/s on 10 Gb/s
// links, gen2 report10 2209 1.1 Gb/s on 1 Gb/s (both mirrored; the largest over-read of 64 gen2
// report9/10 links, 2028, 43-50 Gb/s on 25). 0 where no PS's receives are sized and seen
// (`d.known` false, or receives that count as the PS's work). The outlook reads it where the
// estimate or assumption is under what the busiest link carried: gen2 report10 2213 (25 Gb/s
// links, 61 KB answers) was estimated at 0.06 Gb/s from transfers that were mostly latency,
// raised to the 0.068 it carried (the link 100% busy where its receives were in flight 0.3% of
// the capture: -50%/-75% at 2x/4x), and reads 8.8 Gb/s so (2x/4x within 1%).
double ReceiveBusyFloor(const NicDemand& d, const std::vector<PsLinkEvidence>& links,
                        double captured_steps_per_s, int* ps = nullptr);

}  // namespace tfdiag
