#pragma once
// The PS links the scaling outlook replays (issue 44 item 3): the links ComputeImpacts chooses
// (ChooseLinks, analyzers/replay_nic_bytes.h: the receive links' rate, the answers' estimate, or
// the links in their own time), where the transfers or the unexplained wait need them and that
// replay reproduces the capture as is. Pure function.
#include <string>

#include "analyzers/nic_rate.h"
#include "analyzers/replay.h"

namespace tfdiag {

struct AnalysisInput;  // analyzers/analysis_input.h

struct OutlookLinks {
  bool replayed = false;  // true: `linked` is the model the outlook replays, over its PS links
  ReplayModel linked;     // the model with its links set (SetLinks), when `replayed`
  NicDemand demand;       // each PS's bytes (or link busy ns, `in_time`) per worker step
  NicRateEstimate nic;    // the links' rate, bytes/s per direction (in_time: 1 byte/ns)
  bool in_time = false;   // the links in their own time (RecvLinkTimeDemand)
  Baseline base;          // the links replay of the capture as is
  std::string refused;    // why no links were replayed, "" when they were or were not needed
};

// The links for `m` (the outlook's model, its PS threads set). Tried where the transfers the
// plain replay holds fixed exceed kMaxFixedTransferShare, its unexplained wait exceeds
// kMaxUnexplainedShare, or the plain replay misses the step (`plain_fits` false); replayed
// where the links replay of the capture as is is within kMaxBaselineMiss of the measured step.
OutlookLinks ChooseOutlookLinks(const AnalysisInput& in, const ReplayModel& m, bool plain_fits);

}  // namespace tfdiag
