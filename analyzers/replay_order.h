#pragma once
// The replay with each PS serving its waiting ops in no particular order: a free inter-op
// thread takes a random waiting op, as TF's PS does (Eigen's NonBlockingThreadPool pops its
// own queue LIFO and steals from others; no global FIFO). Under load that leaves the mean step
// as FIFO's (the PS does the same work) but spreads the steps: some requests wait far longer,
// most less, so the median step is shorter than the FIFO replay's. Internal to the replay
// (namespace replay_detail); the public API is analyzers/replay.h. Thread-safe (pure).
#include <cstdint>
#include <vector>

#include "analyzers/replay.h"

namespace tfdiag::replay_detail {

// The replay of asynchronous `m` with `fix` applied, `steps` steps per worker, each PS's free
// thread taking a waiting op drawn by a deterministic generator (`in_order`: the oldest instead,
// FIFO; the FIFO replay step for step where each PS's pull and push is one op). A pull or push
// is PsPlan::requests ops per PS (the variables it hosts, at most kMaxRequestsPerPs), each of an
// equal share of its demand; the worker waits for the last. Returns the median worker step (ns)
// after the warm-up; 0 without workers. `pull_waits` / `push_waits`, when given, get each
// worker's median time (ns) from its pull to the last answer and from its push to the last
// apply; `mean_step` each worker's mean step (ns); `lengths` every step after the warm-up (ns).
// Synchronous jobs are not replayed here (returns 0).
double SimulateAnyOrder(const ReplayModel& m, const Fix& fix, int steps,
                        std::vector<double>* pull_waits, std::vector<double>* push_waits,
                        std::vector<double>* mean_step, bool in_order = false,
                        std::vector<double>* lengths = nullptr);

// At most this many ops per PS per pull or push in the out-of-order replay: a bound on its work
// (not tuned; PsPlan::requests beyond it are served as this many larger ops).
inline constexpr double kMaxRequestsPerPs = 16;

// How much wider than FIFO's the out-of-order replay's step spread ((q3 - q1) / median) must be
// before the capture's spread can choose between them: below it the two orders replay alike.
// Set a priori (kExplainedWaitShare's 10%), kept on the tune sets (indep report11, gen2 report7,
// gen3 report6) and checked on indep report10, gen2 report6, gen3 report5.
inline constexpr double kMinOrderSpreadGap = 0.10;

// Whether the capture's PS serve out of arrival order: `fifo` and `any` are the job's model
// with its held waits fitted to the FIFO and to the out-of-order replay (any.any_order). True
// where the out-of-order replay of the job as is spreads its steps (interquartile range over
// the median) at least kMinOrderSpreadGap wider than FIFO's and the capture's steps' spread is
// nearer it than FIFO's (a saturated PS taking a random waiting op leaves a few requests
// waiting long and most short, a spread that in-order service cannot give; the spread is not
// what the trust gate compares), and `any` reproduces the job better: its baseline miss plus
// its unexplained wait share (ReplayBaseline, UnexplainedWaitShare) below `fifo`'s (gen3
// report6 1720: steps nearer the out-of-order spread, but that model left 7% of the step as
// held wait, and its PS-count prediction went from +1% to +23%). Asynchronous jobs only.
// `alike` (when given): set where the two replays' spreads are within kMinOrderSpreadGap (the
// capture cannot choose), cleared otherwise.
bool ServedOutOfOrder(const ReplayModel& fifo, const ReplayModel& any, bool* alike = nullptr);

}  // namespace tfdiag::replay_detail
