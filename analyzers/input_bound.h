// input-bound: share of each worker's step time spent waiting for input (IteratorGetNext and
// friends); TensorBoard's profiler calls a step input-bound at 5% (moderate) and 20% (high).
// LOW under low_below_pct of the step (prefetch buys under that share) and on a worker whose
// tf.data producer ops already run beside its steps (already prefetched).
// Thresholds: rules/default.rules.json.
#pragma once

#include <string>
#include <vector>

#include "analyzers/analysis_input.h"
#include "analyzers/replay.h"

namespace tfdiag {

// A task's wait for input: its input ops (op_names.h IsInputOp) as intervals. Ops on parallel
// lanes overlap (a tf.data producer may run several IteratorGetNext at once), so the wait is the
// union of their intervals, clipped to the task's steps when it has any; it never exceeds the
// step time.
struct InputWait {
  int64_t count = 0;         // input ops
  TimeNs sum_ns = 0;         // their durations summed (ns; counts overlaps more than once)
  TimeNs union_ns = 0;       // union of their intervals within the task's steps (ns)
  TimeNs longest_ns = 0;     // the longest one (ns)
  std::string longest_name;  // its node name
  int max_parallel = 0;      // most input ops running at the same instant
};

// The input wait of task `t` (a row of ComputeTaskStats(c)). O(n log n) in its input ops.
InputWait InputWaitOfTask(const Capture& c, const TaskStats& t);

std::vector<Finding> RunInputBound(const AnalysisInput& in, const Rule& rule);

// input-bound's fix model (a prefetched pipeline): every worker's input overlapped by prefetch,
// each step at least the input pipeline's time per step (Fix::prefetch_workers). Every worker,
// not only those the finding names: the fix text changes the pipeline's code, which they all run.
FixPlan InputBoundFix(const AnalysisInput& in, const ReplayModel& m, const Finding& f,
                      const Rule& rule);

}  // namespace tfdiag
