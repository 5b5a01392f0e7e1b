// The replay with none of the workers' waits held (QueuedWaits), moved out of
// analyzers/replay_impact.cc as it was. Thread-safety: a pure function.
#pragma once

#include "analyzers/replay.h"

namespace tfdiag {

// The replay with none of the workers' waits held (issue 44 item 1): where the waits the PS model
// does not explain one by one (Worker::recv_ns, tail_ns: a worker's receive time beyond its
// replayed pull wait, its idle time beyond its replayed push wait) are a large share of the step,
// or hold the replay as is off the measured step, they may still be the replayed queues' waits
// split otherwise: a PS serving its queue out of arrival order makes some pulls wait less and
// some pushes more than in order (gen2 report4 1018: 16 saturated PS of 1 thread, 18 ms of
// idle tail beyond the in-order push wait, none beyond the total), and a NIC that the transfers
// share queues them (1006: three PS packed on one node). Over the links, the waits held count
// the transfers twice where the links explain them (indep report8 16003 and 16006, sync jobs:
// the links replay with the waits held +20% and +25% off the measured step, with none held +3%
// and +2%). The model with none held (`model`) is the replay of the PS queues (and links) alone;
// `ok` when it reproduces the measured step within kMaxBaselineMiss on its own (`base`): nothing
// in it is fitted to the step, so a job whose waits are something else (input stalls, pauses)
// fails it and stays withheld. ComputeImpacts uses it only where the replay with the waits held
// would withhold, and at most at `medium` (set on gen2 report4 and indep report8).
struct QueuedWaits {
  ReplayModel model;
  Baseline base;
  bool ok = false;
};

QueuedWaits WithNoWaitsHeld(const ReplayModel& m);

}  // namespace tfdiag
