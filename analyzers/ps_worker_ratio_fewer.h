// ps-worker-ratio's fewer PS, checked by replay (issue 44: outputs a person can rely on). Where
// the band says too many PS, its count (workers / the band's low end) is replayed before it is
// suggested: on the spent twin sets 21 such suggestions (indep report25-38, gen2 report34) were
// predicted, LOW, to lengthen the step by 11-334%, and the twins agreed (indep report38 46013:
// 12 -> 1 PS predicted +280%, its twin +376%). The text then named a count its own prediction
// showed to cost time. Thread-safety: pure functions.
#pragma once

#include <string>

#include "analyzers/replay.h"

namespace tfdiag {

struct FewerPsCheck {
  bool judged = false;    // the FIFO replay reproduces the job (FifoRefused), so it judges
  int count = 0;          // the fewest PS in [band count, captured) within the loss; 0: none is
  double band_loss = 0;   // the band's count's replayed step over the replay as is, less 1
  double least_loss = 0;  // with `count` 0: the loss at one PS fewer than captured
  std::string why_not;    // why not judged ("" when judged)
};

// The fewest PS from `band_count` (>= 1) up to one under the captured m.ps whose replayed median
// step (every variable re-partitioned over the count, Fix::ps_count) is at most `max_loss`
// (share) over the replay as is, in every reading ComputeImpacts weighs for a PS count: at the
// PS's own cost per op (ReplayModel::Ps::op_floor_ns) and at TF's dispatch cost per part op
// (AtDispatchCost), and where the capture
// does not show the order its PS serve in (ReplayModel::order_unseen, asynchronous, no links), a
// PS taking a random waiting op at both; the losses reported are the largest of the readings.
// The counts between are searched by halving (the step grows as the PS get fewer; the count
// returned is within the loss even where it does not), so each reading replays the job as is
// once and at most about log2(m.ps) + 2 counts, ReplaySteps(m) steps each. Not judged where
// FifoRefused refuses the replay, or where m.ps <= band_count. The replay of fewer PS is optimistic
// where threads exceed the cores the capture shows (FewerPsNotModelled), so a loss it shows is at
// least that.
FewerPsCheck CheckFewerPs(const ReplayModel& m, int band_count, double max_loss);

}  // namespace tfdiag
