// The passes of CaptureBuilder::Finish() after the rows are complete: nodes and ops sorted per
// device (capture_sort.cc: SortNodes, SortOps, AdoptPacked), steps recovered and cross-task edges
// resolved (capture_finish.cc: RecoverSteps, ResolveEdges). Internal to core/
// (capture_builder.cc); split out to keep that file to the builder itself; the rules that resolve
// _S<N> inputs are in core/partition_inputs.h. Each pass may run on `threads` threads (OpenMP); the
// result does not depend on the thread count.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "core/block_vector.h"
#include "core/capture.h"
#include "core/partition_inputs.h"

namespace tfdiag::capture_finish {

// What the pass that sorts one device's ops learns about them while they are in cache, for the
// later passes (which then need not read every op again).
struct DeviceScan {
  TimeNs max_end = INT64_MIN;       // latest op end
  uint32_t sources = 0;             // its _SOURCE ops
  TimeNs first_source = INT64_MAX;  // the first one's start (ns)
  // Its ops some _S<N> input refers to: the slot of the op's name and the op's end (ns).
  struct Producer {
    uint32_t slot;
    TimeNs end;
  };
  std::vector<Producer> producers;
};

// Moves the builder's node rows into c->nodes, each distinct (name, inputs, type) once, sorted in
// that order (names by string id, inputs by content); returns the map from old to new node
// index. Needs c->inputs. Linear in the rows (a counting sort by name), whatever the order the
// rows were added in.
std::vector<uint32_t> SortNodes(BlockVector<NodeRow, 12>* nodes, Capture* c);

// Moves the ops into c->ops sorted by (device, start) and sets c->device_ops, c->start, c->end;
// returns what ScanDevice found on each device. `dmap`: old to new device index; `nmap`: old to
// new node index (SortNodes).
std::vector<DeviceScan> SortOps(BlockVector<OpRow>* ops, const std::vector<uint32_t>& dmap,
                                const std::vector<uint32_t>& nmap, StrId source,
                                const PartitionInputs& refs, int threads, Capture* c);

// As SortOps, for ops the builder packed (CaptureBuilder::PackOps): `parts` holds each part's
// device (old index) and rows, in the order packed; c->ops becomes packed, device by device, a
// device with several parts merged. `parts` is emptied.
std::vector<DeviceScan> AdoptPacked(std::vector<std::pair<uint32_t, PackedOps>>* parts,
                                    const std::vector<uint32_t>& dmap,
                                    const std::vector<uint32_t>& nmap, StrId source,
                                    const PartitionInputs& refs, int threads, Capture* c);

// The order of ops within a device in Capture::ops: by start, the longer (enclosing) op first,
// then node (ids follow (name, inputs, type): SortNodes), then lane, so the order is total over
// the fields kept. `node_less(x, y)`: whether node x sorts before node y (OpBefore: the ids'
// order; CaptureBuilder::PackOps: the order SortNodes will give builder node ids).
template <typename NodeLess>
bool OpBeforeBy(const OpRow& a, const OpRow& b, NodeLess node_less) {
  if (a.start != b.start) return a.start < b.start;
  if (a.dur() != b.dur()) return a.dur() > b.dur();  // enclosing op first
  if (a.node != b.node) {
    if (node_less(a.node, b.node)) return true;
    if (node_less(b.node, a.node)) return false;
  }
  return a.lane < b.lane;
}
inline bool OpBefore(const OpRow& a, const OpRow& b) {
  return OpBeforeBy(a, b, [](uint32_t x, uint32_t y) { return x < y; });
}

// Sets c->steps and c->task_steps (see CaptureBuilder::Finish()): each task's steps start at
// the _SOURCE ops (name `source`) of one device, the one with the most (ScanDevice counted them)
// and of equals the one whose first _SOURCE comes first (it starts the step: the others' come
// later in the same step), read again from that device, and one run over its ops gives the step
// ends (tf.data producer ops, core/op_kinds.h IsInputProducerOpType, run beside the steps and
// neither start nor end one); tasks in parallel, the steps written in place (memory: the steps, 16
// bytes each, and a few words per task). With separate captures (c->captures), a step never spans
// two: an op belongs to a step of its own capture, and a capture where the task ran ops but that
// device ran no _SOURCE is one step of the task.
void RecoverSteps(const std::vector<DeviceScan>& scans, StrId source, int threads, Capture* c);

// Sets c->edges, c->stats.unresolved_inputs and c->stats.ambiguous_inputs (see
// CaptureBuilder::Finish()): the DataFlow arrows that cross tasks, and the _S<N> inputs that no
// such arrow draws, each resolved within its consumer's step (ResolveOpInputs): one other task
// produced the node there and one of its ops ended by the consumer's start: an edge from it;
// several tasks (replicas running the same graph): ambiguous, counted and never credited; none
// ended by then, nor on the consumer's own task: unresolved. Keeps what it resolved with (`refs`,
// the producers the scans found, which it frees) as c->input_index. Needs c's steps final.
void ResolveEdges(PartitionInputs refs, std::vector<DeviceScan>* scans, int threads, Capture* c);

}  // namespace tfdiag::capture_finish
