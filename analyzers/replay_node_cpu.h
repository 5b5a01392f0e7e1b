// Whether a fix's faster step would need more CPU than a node has (issue 44 item 1, a check on
// evidence the replay is not fitted to). The replay serves each PS on cores of its own and runs
// each worker's compute at its measured time; where the job's tasks share a node (a PS beside
// workers, or PS packed together) and the capture shows the node's CPUs and the tasks' CPU use
// (tfdiag attach's /proc samples, or the agents' figures through Prometheus), the tasks compete
// for those CPUs once the step shortens, which the replay does not model. Thread-safety: pure.
#pragma once

#include <string>

#include "analyzers/analysis_input.h"

namespace tfdiag {

// The node of the job whose CPUs a change of the job's step would load the most.
struct NodeCpuAfter {
  std::string node;  // the pod's node (cluster mode), else the recording host; "" none known
  int cpus = 0;      // the node's CPUs (ProcessRow::host_cpus)
  double used = 0;   // CPUs the job's tasks there used over the capture (ProcessStats::cpu_cores)
  double after = 0;  // the same at the step after the change: used x step / step after
  int nodes = 0;     // the nodes whose tasks have CPU samples and a CPU count (this one among them)
};

// For a change of the job's step from `step_ns` to `after_ns` (ns, both > 0): each task's CPU
// per step is taken as unchanged (a fix moves work, and a step that shortens runs the same work
// more often), so each node's CPU use scales with the job's steps per second. The node of the
// highest after / cpus; `node` "" where no process of the job has CPU samples and a node CPU
// count (a capture of timelines alone). Tasks on several nodes are each counted on their own.
NodeCpuAfter BusiestNodeAfter(const AnalysisInput& in, double step_ns, double after_ns);

// A node whose tasks would use more than this share of its CPUs after a fix bounds the step
// the replay predicts: twins-live's ps-threads-1 (2 PS pinned one a CPU, 4 workers beside them
// on this 2-CPU VM) used 0.99 of 2 CPUs as is (ps:0 0.85, the workers 0.13: a loaded run of
// session 27), 2.0 at the predicted step; its partitioned twin ran 12% slower than the `high`
// prediction on session 26's quiet run (ps-threads-2 15%). Set on that one shape; checked only on
// the twins-live run that bench/README.md reports. It lowers confidence. The node's CPUs
// are its count (ProcessRow::host_cpus), not the tasks' cpusets or CFS limits: tasks pinned to
// fewer CPUs than the node has may compete where this does not see it. Where `after` exceeds the
// node's CPUs, ComputeImpacts also bounds the predicted step below at used x step / cpus, where
// every task with CPU samples is on that one node and the fix moves or adds work, not one that
// cuts it (a PS's demand, a worker's compute or receives, the accumulators of a synchronous job)
// or moves a task off the node; the bound never lowers a severity (Impact::cpu_bounded) (the
// same work at most cpus at a time: twins-live ps-threads-1 and -2 of session 41, -11% to -14%
// off their twins unbounded, -4% to -7% bounded; no constant of its own).
inline constexpr double kMaxNodeCpuShareAfter = 0.9;

}  // namespace tfdiag
