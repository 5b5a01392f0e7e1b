// worker-wait: workers whose ops fill only a small share of their steps (the union of their op
// intervals against the summed step time). The rest of each step is spent waiting: for
// variables and gradients from the task that hosts them (a PS, or in a job without PS a worker
// acting as one), for a synchronous barrier, or for the slowest replica. The finding names where
// the variables live, so the wait points at its cause. Thresholds: rules/default.rules.json.
#pragma once

#include <vector>

#include "analyzers/analysis.h"

namespace tfdiag {

// What `task` waits for per step, from the step graph (analyzers/step_graph.h): the `top`
// biggest causes that took at least `min_ns` per step, each with a sentence such as "worker:3
// idles 5.13 s per step until model/read arrives from worker:0". `only_from` (a task index)
// keeps the causes whose tensor that task produced; kNoIndex keeps all.
std::vector<WaitFor> DescribeWaits(const Capture& c, const StepGraph& g, uint32_t task, size_t top,
                                   double min_ns, uint32_t only_from = kNoIndex);

// The one task that ran ops when the capture has no other task and that task received nothing
// from another (no RecvTensor, no cross-task edge), e.g. a single-process `localhost` trainer;
// nullptr otherwise. Such a task has nothing cross-task to wait for, so its idle share is not a
// worker-wait (issue 28, item 7: a local trainer is the worker only where that is meaningful,
// input-bound); the rule is listed as not judged instead.
const TaskStats* LoneTaskWithoutCrossTaskInput(const TaskStatsTable& st);

std::vector<Finding> RunWorkerWait(const AnalysisInput& in, const Rule& rule);

}  // namespace tfdiag
