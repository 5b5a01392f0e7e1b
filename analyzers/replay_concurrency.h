#pragma once
// How many ops a PS task really ran at once, for the replay's PS threads (analyzers/replay.h).
// Internal to the replay (namespace replay_detail). Thread-safety: pure function.
#include "analyzers/task_stats.h"
#include "core/capture.h"

namespace tfdiag::replay_detail {

// The concurrency `t`'s ops really reached: the most ops running at once for at least 5% of its
// busy time (over all its devices and lanes; an op ending when another starts does not overlap
// it), so a brief overlap of two small ops does not double a PS's capacity. Each device's ops
// are in start order (Capture): sweeps the devices' starts merged in time order with a min-heap
// of the running ops' ends, so memory is the ops running at once, not every op of the task.
int AchievedConcurrency(const Capture& c, const TaskStats& t);

}  // namespace tfdiag::replay_detail
