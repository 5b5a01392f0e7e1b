// The scaling outlook's sentences on the PS NICs (analyzers/outlook.h): which bandwidth it
// assumed and where that came from, one sentence each for `Outlook::assumptions`.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "analyzers/nic_rate.h"  // NicRateEstimate

namespace tfdiag {

// What the outlook took for the PS NICs.
struct NicAssumed {
  bool known = false;            // the capture sizes the PS transfers (NicDemand::known)
  bool mirrored = false;         // one direction taken as the other's size (NicDemand::mirrored)
  bool estimated = false;        // `est` gives the bandwidth
  bool sync = false;             // SyncReplicasOptimizer (the estimate is the burst's fit)
  double bytes_per_s = 0;        // the bandwidth used, bytes/s one direction of one NIC
  NicRateEstimate est;           // est.bytes_per_s: the estimate's own figure
  double burst_bytes_per_s = 0;  // the sync burst's reading (SyncBurst), 0 none
  // Raised to the busiest link's carried rate (`carried_bytes_per_s`, `carried_task` its PS), or
  // (busy_floor) to the least rate a PS's receives moved bytes at (ReceiveBusyFloor,
  // outlook_nic_worst.h; `floor_task` that PS).
  bool floored = false;
  bool busy_floor = false;
  double carried_bytes_per_s = 0;
  std::string carried_task, floor_task;
};

// Appends the NIC sentences for `a` to `*out`.
void AppendNicAssumptions(const NicAssumed& a, std::vector<std::string>* out);

}  // namespace tfdiag
