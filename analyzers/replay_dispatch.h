// The dispatch-cost copy of a replay model: what a fix that adds part ops (partitioning, another
// PS count) replays again at, to see how much its prediction rests on a per-op cost the capture
// cannot show (ComputeImpacts' part-op sensitivity check, analyzers/replay_impact.cc, and
// ps-worker-ratio's measured count, analyzers/ps_worker_ratio_measured.cc). Thread-safety: a pure
// function.
#pragma once

#include "analyzers/replay.h"

namespace tfdiag {

// `m` with each PS's fixed cost per op (ReplayModel::Ps::op_floor_ns, ns; measured from the PS's
// NoOps, a few us) raised to at least kPartOpDispatchNs (20 us, analyzers/replay.h: TF's executor
// dispatch per op, about 10-20 us); everything else as in `m`.
ReplayModel AtDispatchCost(const ReplayModel& m);

}  // namespace tfdiag
