// The busiest PS NIC's bytes for the scaling outlook (issue 44 item 3; analyzers/outlook.h).
// Thread-safety: pure functions.
#pragma once

#include "analyzers/nic_rate.h"
#include "analyzers/replay.h"

namespace tfdiag {

// The busiest PS NIC's bytes per worker step, either direction, with `fix` applied (0 without
// bytes): a fix that moves work between PS spreads all the bytes evenly over the PS after it.
// `*ps` gets that PS's index into m.ps (0 for a spreading fix; -1 none).
double WorstNicBytes(const ReplayModel& m, const NicDemand& d, const Fix& fix, int* ps);

}  // namespace tfdiag
