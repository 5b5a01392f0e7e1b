// Where a worker's measured waits lie in its step, for the replay's held waits (issue 44):
// before its compute (a pull wait that no receive op spans: the PS's queue and service of the
// request, when the capture's receive ops span only the transfer) or after it (the step's tail:
// the push and its applies). Internal to the replay (namespace replay_detail); the public API is
// analyzers/replay.h. Thread-safety: pure functions.
#pragma once

#include <cstdint>

#include "analyzers/analysis_input.h"
#include "analyzers/step_graph.h"

namespace tfdiag::replay_detail {

// A wait that ends within this share of the step before the step's end is the step's tail (the
// closing op after it: TF's group_deps NoOp, a control receive). Not tuned (a closing op is
// microseconds long).
inline constexpr double kTailEndShare = 0.05;

// The share of worker `task`'s idle time (StepWait::idle_ns) in its median step (the one whose
// waits the step graph keeps) that lies in waits ended by an op (StepWait::step_tail false: a
// wait inside the step, for a pull's answers), [0, 1]; 0 without a kept median step or idle time.
double PullSideIdleShare(const StepGraph& g, uint32_t task);

// ReplayModel::Worker::pull_xfer_ns of worker `task` (ns): in its median step, the longest time
// from the last op of a PS's answer (StepWait::last_sent of a wait a PS's tensor ended) to the
// wait's end, at most the wait; 0 without a median step. `in.graph` must be set.
double PullTransfer(const AnalysisInput& in, uint32_t task);

}  // namespace tfdiag::replay_detail
