// worker-wait: workers whose ops fill only a small share of their steps (the union of their op
// intervals against the summed step time). The rest of each step is spent waiting: for
// variables and gradients from the task that hosts them (a PS, or in a job without PS a worker
// acting as one), for a synchronous barrier, or for the slowest replica. The finding names where
// the variables live, so the wait points at its cause. Thresholds: rules/default.rules.json.
#pragma once

#include <vector>

#include "analyzers/analysis_input.h"

namespace tfdiag {

// What `task` waits for per step, from the step graph (analyzers/step_graph.h): the `top`
// biggest causes that took at least `min_ns` per step, each with a sentence such as "worker:3
// idles 5.13 s per step until model/read arrives from worker:0". `only_from` (a task index)
// keeps the causes whose tensor that task produced; kNoIndex keeps all.
std::vector<WaitFor> DescribeWaits(const Capture& c, const StepGraph& g, uint32_t task, size_t top,
                                   double min_ns, uint32_t only_from = kNoIndex);

// How a wait of a critical path reads (PathSegment, issue 35): `input` when input ops
// (IteratorGetNext and the like) cover most of it, which is input, not a wait for a tensor;
// else `what`: " for TENSOR from TASK" (the input that arrived last), " at the step's end for
// TASK to take TENSOR, its last push" (a step tail ended by a push's consumer, the gradient's
// apply), " for the sync token (SyncReplicasOptimizer: the slowest replica)" (sync-barrier ops
// cover most of it), " to the step's end", or "" (no cross-task edge ended it). The names
// are the capture's, unescaped: print them through Printable (core/escape.h).
struct WaitLabel {
  bool input = false;
  std::string what;
};
WaitLabel LabelWait(const Capture& c, const StepGraph& g, const PathSegment& p);

// True when `t` received nothing from another task (no RecvTensor, no cross-task edge) and has
// no task to wait for: it is a single-process `localhost` trainer (its own job: local trainers
// in one capture are separate processes), or the only task that ran ops. Its idle share is then
// not a worker-wait (issue 28, item 7: a local trainer is the worker only where that is
// meaningful, input-bound); when every training task is such, the rule is not judged. A host of
// a multi-host job profiled alone (the shared BERT demo: one host of 8 GPU workers, its
// all-reduce peers absent) is such a task too: what it waits for is not in the capture.
bool NothingCrossTaskToWaitFor(const TaskStatsTable& st, const TaskStats& t);

std::vector<Finding> RunWorkerWait(const AnalysisInput& in, const Rule& rule);

}  // namespace tfdiag
