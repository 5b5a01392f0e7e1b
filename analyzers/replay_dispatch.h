// The dispatch-cost copy of a replay model: what a fix that adds part ops (partitioning, another
// PS count) replays again at, to see how much its prediction rests on a per-op cost the capture
// cannot show (ComputeImpacts' part-op sensitivity check, analyzers/replay_impact.cc, and
// ps-worker-ratio's measured count, analyzers/ps_worker_ratio_measured.cc); and the random-order
// copies a new PS count is weighed at besides. Thread-safety: pure functions.
#pragma once

#include "analyzers/replay.h"

namespace tfdiag {

// `m` with each PS's fixed cost per op (ReplayModel::Ps::op_floor_ns, ns; measured from the PS's
// NoOps, a few us, or its dense variables' ops) raised to at least kPartOpDispatchNs (20 us,
// analyzers/replay.h: TF's executor dispatch per op, about 10-20 us); everything else as in `m`.
ReplayModel AtDispatchCost(const ReplayModel& m);

// Where a new PS count is replayed in a random service order too: the capture does not show the
// order its PS serve in (ReplayModel::order_unseen), in an asynchronous job replayed without the
// PS links (the out-of-order replay models neither the barrier nor the links).
bool OrderUnseenReadings(const ReplayModel& m);

// `m` served out of arrival order (ReplayModel::any_order: a PS taking a random waiting op, as
// TF's inter-op threads may), at its own fixed cost per op (`*any`) and at the dispatch cost
// (`*any_dear`, AtDispatchCost): the readings ComputeImpacts and CheckFewerPs
// (analyzers/ps_worker_ratio_fewer.h) weigh beside `m` and AtDispatchCost(m) where
// OrderUnseenReadings(m).
void AnyOrderReadings(const ReplayModel& m, ReplayModel* any, ReplayModel* any_dear);

}  // namespace tfdiag
