#pragma once
// The PS links the scaling outlook replays (issue 44 item 3) where its plain replay does not
// reproduce the capture: the links ComputeImpacts chooses (ChooseLinks, analyzers/
// replay_nic_bytes.h: the receive links' rate, the answers' estimate, or the links in their own
// time), where that replay reproduces the capture as is. Pure function.
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

// The links for `m` (the outlook's model, its PS threads set), tried only where the plain replay
// misses the step (`plain_fits` false), and replayed where the links replay of the capture as is
// is within kMaxBaselineMiss of the measured step (gen3 report7 1927 and gen2 report7 1620,
// withheld before: -2%/-1% and -7%/-22% at 2x/4x). Not where the plain replay fits and only its
// transfers or unexplained wait would call for links, as ComputeImpacts does: gen3 report6 1701
// (1 PS, its link in its own time) went from -0%/-6% to +20%/+13%, the receive link's bound
// (outlook_links.h) already covering it.
OutlookLinks ChooseOutlookLinks(const AnalysisInput& in, const ReplayModel& m, bool plain_fits);

}  // namespace tfdiag
