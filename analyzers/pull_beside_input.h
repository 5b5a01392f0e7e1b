#pragma once
// A worker's pull that ran beside its input (issue 44, gen2 report29 6221): TF1's executor
// issues a step's _Recv ops for variables as soon as the step starts (they need no input of the
// step; tensorflow/core/common_runtime/executor.cc, ScheduleReady), so the PS answers of a step
// that gathers nothing travel while IteratorGetNext runs, and the input hides their transfer. A
// fix that shortens the input exposes it again. Thread-safety: pure functions.
#include <vector>

#include "analyzers/step_graph.h"

namespace tfdiag {

// An op's span within a step, [start, end) ns.
struct Span {
  TimeNs start = 0, end = 0;
};

// What one step says about its pull and its input: whether every answer its compute ops used
// from another task (`edges`: GraphEdge of the step, pushes and ambiguous ones skipped, `task`
// the step's own) was sent (GraphEdge::sent) before the step's input ops (`inputs`) ended (not
// beside: no input op, no answer, or one sent after the input ended), and the transfer the input
// hid: from the last such answer's send to the latest end of a receive op (`recvs`) that ran
// while an input op did and ended by the input's end (ns; 0 without such a receive, as in
// captures without receive ops).
PullBeside PullBesideInput(const std::vector<Span>& inputs, const std::vector<Span>& recvs,
                           const std::vector<GraphEdge>& edges, uint32_t task);

}  // namespace tfdiag
