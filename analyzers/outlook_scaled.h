#pragma once
// The scaling outlook's model at another worker count (issue 44 item 3; analyzers/outlook.h).
// Pure function.
#include "analyzers/replay.h"

namespace tfdiag {

// `m` with `workers` workers: the captured ones, then copies of the median worker (by its input
// and compute per step): a worker added to the job runs on a machine of its own, like the
// typical one, not like a straggler the capture shows. A copy keeps its original's task index,
// so a fix naming that worker (prefetch) applies to the copies too. Under SyncReplicasOptimizer
// each PS's apply keeps its own time per global step; `aggregate_kept` (the barrier stays) lets an
// embedding's aggregated apply grow with the replicas (AggregateGrowth, outlook_sync.h).
ReplayModel Scaled(const ReplayModel& m, int workers, bool aggregate_kept);

}  // namespace tfdiag
