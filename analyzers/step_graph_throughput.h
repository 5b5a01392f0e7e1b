// A worker's measured throughput from its steps in the step graph (analyzers/step_graph.h): what
// a step counter reads, and what the generators' sweeps measure. Read by the scaling outlook
// (analyzers/outlook.h: Outlook::captured_steps_per_s). Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <vector>

#include "analyzers/step_graph.h"

namespace tfdiag {

// The steps per second of `task` (a worker) in `graph`: its steps after its first over the time
// from its first step's end to its last's, at most twice the rate of its median step (overlapping
// or truncated steps would put one worker's few ends close together and make its rate unbounded).
// 0 when the task has fewer than three steps or they span no time.
double WorkerThroughput(const StepGraph& graph, uint32_t task);

// The throughput of `workers` (their task ids), worker steps per second over all of them: each
// one's WorkerThroughput, summed (the workers over their median step read 20% low on gen2 report3
// 801 and 824, whose steps under a full link are skewed). 0 when `workers` is empty or any of
// them has fewer than three steps.
double CapturedThroughput(const StepGraph& graph, const std::vector<uint32_t>& workers);

}  // namespace tfdiag
