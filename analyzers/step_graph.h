// StepGraph: the step model beside the Capture (design.md, "Shapes for what comes next"). Per
// task step: its phases (compute, input, RecvTensor/_Recv waits, idle gaps) and the cross-task
// edges that end each wait. Wait attribution, the critical path and the what-if replay
// (analyzers/replay.h) all read it.
//
// Edges, in this order:
//  1. DataFlow arrows (TF1 timeline flow events "s"/"t"|"f", timeline.py emit_flow_start/end:
//     the start is the producer's tensor create time, the end the consumer op's start) whose ends
//     sit on different tasks.
//  2. `<tensor>_S<N>` inputs (partition Send/Recv, TF's graph_partition.cc) that no such arrow
//     draws, resolved within the consuming task's own step with the capture's own index and rules
//     (Capture::input_index, core/partition_inputs.h: ResolveOpInputs): one other task produced
//     that node in the step: resolved (sent = its latest end by the consumer's start); several
//     tasks (replicas running the same graph): ambiguous, never guessed; none: unresolved.
// The transfer counts and the ambiguous and unresolved inputs are the capture's (Capture::edges,
// ImportStats), not counted again.
// A wait is a gap in a step's compute (the union of its ops other than input, receive and sync
// ops), split into input time (covered by IteratorGetNext-like ops), sync time (covered by
// SyncReplicasOptimizer's token dequeue and accumulator takes: a barrier, IsSyncWaitOp), receive
// time (covered by RecvTensor/_Recv/_HostRecv) and idle time. It is ended by the op that starts
// at its end: of that op's cross-task edges, the one sent last (the input that arrived last).
// Without op inputs (a TF2 profile: its edges end at the receives, rendezvous keys), the gap's
// receive that arrived last, unless an input op of the gap (IteratorGetNext) ended after it: then
// the batch ended the gap, no transfer (as a timeline's inputs say of the op after the gap). A
// gap that runs to the step's end (the step's tail: a worker waiting for its last gradient push
// to be applied) is attributed to the tensor the task sent in the step whose consumer on another
// task ended last, before the step's end (a "push" edge), when that consumer ended in the gap.
// Thread-safety: immutable after Build; safe for concurrent readers.
#pragma once

#include <cstdint>
#include <tuple>
#include <utility>
#include <vector>

#include "core/capture.h"

namespace tfdiag {

// One cross-task transfer into one op.
struct GraphEdge {
  uint32_t src_task = kNoIndex;  // producing task; kNoIndex when ambiguous
  uint32_t dst_task = 0;
  StrId tensor = 0;     // DataFlow name or the input's tensor ("w/read", "split:1")
  TimeNs sent = 0;      // producer end (ns); ambiguous: the latest candidate's
  TimeNs needed = 0;    // consumer start (ns)
  uint32_t dst_op = 0;  // index into Capture::ops
  EdgeKind kind = EdgeKind::kDataFlow;
  uint16_t candidates = 1;  // producing tasks that fit (> 1: ambiguous)
  // A push: a tensor src_task sent that ended a step tail of src_task (its consumer on dst_task,
  // an apply on a PS, ended last in that step), not an input that ended a wait of dst_task.
  bool push = false;
  TimeNs done = 0;  // pushes: when the consumer op ended (ns)
  bool ambiguous() const { return candidates > 1; }
};

// One gap in a step's compute, [start, end) ns, and what ended it.
struct StepWait {
  uint32_t step = 0;  // index into StepGraph::steps()
  TimeNs start = 0, end = 0;
  TimeNs input_ns = 0, recv_ns = 0, sync_ns = 0, idle_ns = 0;  // sum to end - start
  // Index into StepGraph::edges(): the input that arrived last; for a step tail, the push whose
  // consumer ended last (GraphEdge::push).
  uint32_t edge = kNoIndex;
  bool step_tail = false;  // the gap runs to the step's end (no op ended it)
  // Waits ended by an input (not a push): the latest sent time, by the wait's end, of any
  // tensor the step received from that input's task (the last op of its answer: the edge that
  // ended the wait may carry an earlier one); 0 otherwise.
  TimeNs last_sent = 0;
};

// One step of one task with its phase totals (ns).
struct StepNode {
  uint32_t task = 0;
  uint32_t index = 0;  // 0-based step of the task (Capture::TaskSteps)
  TimeNs start = 0, end = 0;
  TimeNs compute_ns = 0, input_ns = 0, recv_ns = 0, sync_ns = 0, idle_ns = 0;
  // Range in StepGraph::waits(): kept for the task's median step only (empty elsewhere).
  uint32_t waits_begin = 0, waits_end = 0;
  bool waits_kept = false;  // true for the median step, whose waits are in that range
};

// Whether a task's median step pulled beside its input (analyzers/pull_beside_input.h
// PullBesideInput): every answer its compute used from another task was sent before its input
// ended; xfer_ns the transfer its input hid (ns).
struct PullBeside {
  bool beside = false;
  TimeNs xfer_ns = 0;
};

// What one task waits for, summed over its steps: one row per (tensor, producing task).
struct WaitCause {
  uint32_t task = 0;
  // kNoIndex: ambiguous, or no cross-task edge ended the wait. Step tails: the task the push
  // went to (the task whose apply the step waited for).
  uint32_t src_task = kNoIndex;
  StrId tensor = 0;  // 0: no cross-task edge (local, or the step's tail)
  bool ambiguous = false;
  uint16_t candidates = 0;    // producing tasks when ambiguous
  bool step_tail = false;     // waits that ran to the step's end
  TimeNs wait_ns = 0;         // receive + idle time these waits took, summed over steps
  TimeNs input_ns = 0;        // input time inside the same gaps
  TimeNs sync_ns = 0;         // sync-barrier time inside the same gaps (SyncReplicasOptimizer)
  int64_t waits = 0;          // gaps this cause ended
  TimeNs sent_offset_ns = 0;  // mean of (sent - step start): when the tensor left its producer
};

// One piece of a step's critical path on its task: a run of compute, or a wait and the edge
// that ended it (whose producer, on another task, is where the path crosses).
struct PathSegment {
  TimeNs start = 0, end = 0;  // ns
  bool wait = false;
  uint32_t edge = kNoIndex;          // waits: index into StepGraph::edges(), kNoIndex none
  bool step_tail = false;            // waits: to the step's end
  TimeNs input_ns = 0, sync_ns = 0;  // waits: input and sync-barrier time inside (StepWait)
};

class StepGraph {
 public:
  // Builds the graph of every task with steps, reading each device's ops where they are (plain
  // or packed; no copy of a task's ops). Kept: one StepNode per step of each task that is not a
  // PS (a PS's _SOURCE steps are per request: it has WaitCauses but no StepNodes, and
  // TaskSteps/MedianStep of a PS are empty); per task its WaitCause rows; its median step's
  // StepWaits and the GraphEdges that ended them. Resolves inputs with c.input_index (for a
  // capture without one, builds it: 8 bytes per producer op, transient). Transient: per task a
  // block of ops per device and cursor (core/device_cursor.h).
  static StepGraph Build(const Capture& c);

  const std::vector<StepNode>& steps() const { return steps_; }
  // The waits of each task's median step (StepNode::waits_begin/end).
  const std::vector<StepWait>& waits() const { return waits_; }
  // The edges that end those waits (StepWait::edge), sorted by (dst_op, sent).
  const std::vector<GraphEdge>& edges() const { return edges_; }
  // The steps of `task` as a range [first, second) into steps(); empty when it has none.
  std::pair<uint32_t, uint32_t> TaskSteps(uint32_t task) const;
  // Cross-task transfers per (src task, dst task), ambiguous ones left out: {src, dst, count},
  // sorted; the capture's edges table (Capture::edges) summed per task pair.
  std::vector<std::tuple<uint32_t, uint32_t, int64_t>> TransferCounts() const;
  // What `task` waits for, biggest receive + idle time first; `top` rows at most (0: all).
  std::vector<WaitCause> WaitCausesOf(uint32_t task, size_t top = 0) const;
  // The segments of step `step` (index into steps()) in time order: compute runs between its
  // waits, and the waits. They tile [start, end) of the step. Only a task's median step
  // (MedianStep) keeps its waits: empty for the other steps.
  std::vector<PathSegment> Segments(uint32_t step) const;
  // The step of `task` whose length is the median of its steps (index into steps()), or kNoIndex.
  uint32_t MedianStep(uint32_t task) const;
  // Whether `task`'s median step pulled beside its input; not beside without a median step.
  PullBeside MedianPullBeside(uint32_t task) const;
  // The capture's _S<N> inputs left unresolved and ambiguous (ImportStats).
  int64_t unresolved_inputs() const { return unresolved_; }
  int64_t ambiguous_inputs() const { return ambiguous_; }

 private:
  std::vector<StepNode> steps_;
  std::vector<StepWait> waits_;
  std::vector<GraphEdge> edges_;
  std::vector<std::pair<uint32_t, uint32_t>> task_steps_;
  std::vector<uint32_t> median_step_;  // per task: MedianStep, picked while building
  std::vector<PullBeside> beside_;     // per task: MedianPullBeside
  std::vector<std::tuple<uint32_t, uint32_t, int64_t>> transfers_;
  std::vector<std::vector<WaitCause>> causes_;  // per task: WaitCausesOf(task), from every step
  int64_t unresolved_ = 0, ambiguous_ = 0;
};

}  // namespace tfdiag
