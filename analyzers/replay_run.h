#pragma once
// The FIFO replay of a ReplayModel, and the runs the public API makes of it (ReplayMedianStep,
// ReplayWorkerMeanSteps, ReplayThroughputStep, ReplayLinkTimes in analyzers/replay.h): the model
// is built in analyzers/replay.cc, run here. Internal to the replay (namespace replay_detail).
// Thread-safe: pure, but for a per-thread cache of the plain replay's waits (replay_run.cc).
#include <vector>

#include "analyzers/replay.h"

namespace tfdiag::replay_detail {

// Per worker (ns), the median replayed wait for the pull answers and for the applies.
struct Waits {
  std::vector<double> pull, push;
  // Under SyncReplicasOptimizer: each worker's median wait at the barrier, from its step's end
  // (its push applied) to the release of every worker (the aggregated applies done).
  std::vector<double> barrier;
};

// The replay of `m` with `fix`, `steps` steps per worker: each PS serving its requests in arrival
// order on its threads (PsPlan), or out of order where ReplayModel::any_order says so
// (analyzers/replay_order.h). Returns the median worker step (ns) after the warm-up, 0 without
// workers. `waits`, when given, gets each worker's median time from its pull request to the last
// PS answer and from its push to the last apply (and under sync its barrier wait); `mean_step`,
// when given, each worker's mean step (ns) after the warm-up.
double Simulate(const ReplayModel& m, const Fix& fix, int steps, Waits* waits,
                std::vector<double>* mean_step = nullptr);

}  // namespace tfdiag::replay_detail
