#pragma once
// The replay's internals shared by analyzers/replay.cc (the model and its FIFO replay) and
// analyzers/replay_links.cc (the replay with the PS NICs as shared links): what each PS and
// worker runs per step once a fix is applied, and the deterministic jitter. Not a public API
// (namespace replay_detail); the public one is analyzers/replay.h. Thread-safety: pure.
#include <cstdint>
#include <vector>

#include "analyzers/replay.h"

namespace tfdiag::replay_detail {

// A standard normal draw for (worker, step), the same on every platform, clamped to +-3.
double Jitter(uint64_t worker, uint64_t step);

// Per PS after the fix: pull and push demand (ns per worker step) and threads; under
// SyncReplicasOptimizer, `push` is the accumulators' share and `once` the applies of the
// aggregated gradients, run once per step of the job after every worker's push (the chief's
// update, before the tokens release the workers).
struct PsPlan {
  std::vector<double> pull, push, once;
  std::vector<int> threads;
  std::vector<double> out, in;  // bytes per worker step answered / received (Ps::out_bytes)
};

// PsPlan of `m` with `fix` applied: partitions, dropped PS, a new PS count, sync -> async.
PsPlan PlanPs(const ReplayModel& m, const Fix& fix);

// Per worker, what the replay runs each step with `fix` applied (Simulate's inputs).
struct WorkerPlan {
  std::vector<double> input, compute, recv, producer, pull_xfer, push_xfer, sigma;
  std::vector<bool> prefetch;
};

// WorkerPlan of `m` with `fix` applied: workers at the median, prefetch, cut compute or receive.
WorkerPlan PlanWorkers(const ReplayModel& m, const Fix& fix);

// The replay with the PS NICs as links (ReplayModel::link_bytes_per_ns > 0): the median worker
// step (ns) of `steps` replayed steps per worker; `mean_step`, when given, each worker's mean
// step after the warm-up. 0 when there is no worker or the replay does not settle.
double SimulateLinks(const ReplayModel& m, const Fix& fix, int steps,
                     std::vector<double>* mean_step);

}  // namespace tfdiag::replay_detail
