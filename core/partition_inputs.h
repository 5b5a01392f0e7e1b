// The rules that resolve `<tensor>_S<N>` inputs (partition Send/Recv, TF's graph_partition.cc)
// to the task that sent them, in one place (ResolveOpInputs over an InputIndex): the capture's
// edges table (CaptureBuilder::Finish, capture_finish.h: ResolveEdges) builds the index once and
// keeps it as Capture::input_index, and the step graph (analyzers/step_graph.h) resolves with that
// same index, so that both credit the same transfers: DataFlow arrows first (ArrowKeys), then each
// input within its consumer's step (ConsumerWindow, ProducerEnds::Find), an input named again in
// the same step once (StepInputs); an input several tasks could have sent is ambiguous, never
// credited.
// Thread-safety: the types are plain values; const methods are safe for concurrent callers.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "core/capture.h"

namespace tfdiag::capture_finish {

// The _S<N> inputs of a capture, each distinct input string parsed once.
struct PartitionInputs {
  static constexpr uint32_t kNotPartition = UINT32_MAX;    // no _S<N> suffix, or a control input
  static constexpr uint32_t kNoProducer = UINT32_MAX - 1;  // its producer never ran in the trace
  // Per input string id: kNotPartition, kNoProducer, or the producer node's slot (dense, in order
  // of first use).
  std::vector<uint32_t> slot;
  std::vector<StrId> tensor;  // per input string id: the tensor name's id, for a slot
  std::vector<StrId> nodes;   // per slot: the producer node name's id
  // Per string id (below slot.size()): the slot of the node of that name, or kNotPartition.
  std::vector<uint32_t> node_slot;
  // The slot of an op named `name`, or kNotPartition.
  uint32_t SlotOfOp(StrId name) const {
    return name < node_slot.size() ? node_slot[name] : kNotPartition;
  }
};

// Parses every distinct input of c->inputs, in input order (tensor names are interned in the
// order their inputs first appear, so string ids do not depend on threads).
PartitionInputs ParsePartitionInputs(Capture* c);

// As ParsePartitionInputs, on a finished capture (whose tensor names are interned already): a
// tensor name not in the pool is taken as its node's name.
PartitionInputs FindPartitionInputs(const Capture& c);

// The ops of the nodes that _S<N> inputs name, grouped per (slot, task): each group's op ends
// (ns), sorted. 8 bytes per producer op plus 8 per (slot, task); no task id per op.
struct ProducerEnds {
  std::vector<uint32_t> slot_groups;  // slot s's groups: [slot_groups[s], slot_groups[s + 1])
  std::vector<uint32_t> group_task;   // per group, in (slot, task) order: the producing task
  std::vector<uint32_t> group_ends;   // group g's ends: ends[group_ends[g], group_ends[g + 1])
  std::vector<TimeNs> ends;

  // Builds the index from `each(emit)`, which calls emit(slot, task, end) for every producer op;
  // it is called twice (count, then fill), so it must emit the same rows both times.
  template <typename Each>
  static ProducerEnds Build(size_t n_slots, Each&& each);

  // How the producers of slot `slot` resolve an input of a consumer on `task` that started at
  // `at`, in its step's window [lo, hi] (ConsumerWindow):
  //  - one other task produced the node in the window: an edge from it, sent at its producer's
  //    latest end by `at` (or, with clock skew between hosts, its first end after `at`);
  //  - several did (replicas running the same graph): ambiguous, never credited to one;
  //  - none, but `task` itself did by `at`: local (a device-to-device transfer within the task);
  //  - none, and one other task is the only one that ever produces the node: an edge from it (its
  //    latest end by `at`, else its first);
  //  - else unresolved (not produced in the consumer's step).
  struct Match {
    enum Kind : uint8_t { kEdge, kAmbiguous, kLocal, kUnresolved } kind = kUnresolved;
    uint32_t src = UINT32_MAX;  // kEdge: the producing task
    TimeNs sent = 0;            // kEdge: the producer's end (ns); kAmbiguous: the latest by `at`
    uint32_t candidates = 0;    // other tasks that produced the node in the window
  };
  Match Find(uint32_t slot, uint32_t task, TimeNs lo, TimeNs at, TimeNs hi) const;

 private:
  void Index(size_t n_slots, std::vector<std::pair<uint64_t, uint32_t>>* counts);
};

// The window [lo, hi] (ns) in which the producer of an _S<N> input of an op that started at
// `start` on a task with steps `steps` is looked for: the consumer's own step (the last one
// starting at or before it: from its start to its end, or to `start` when later); before the
// task's first step, up to `start`. A PS runs each worker's partition of a step as a run of its
// own (its _SOURCE-delimited "steps" are per request and interleave), so a PS consumer's window
// is the job's step (`job_step` ns, JobStep) either side of it when that is known.
struct Window {
  TimeNs lo, hi;
};
Window ConsumerWindow(StepRange steps, bool ps, TimeNs start, TimeNs job_step);

// The job's step (ns): the median of every worker step in c.steps; 0 without worker steps.
TimeNs JobStep(const Capture& c);

// The node an input or a DataFlow arrow names: "^w/read" and "w/read:1_S11" -> "w/read".
std::string_view NodeOfInput(std::string_view in);

// The cross-task DataFlow arrows as (dst device, dst ts, producer node id), sorted: an _S<N>
// input of node N into an op on device d that started at ts, where an arrow (d, ts, N) ends, is
// the transfer that arrow draws (TF1 timeline.py draws one per cross-device tensor), counted once
// as the arrow and never resolved by name.
struct ArrowKey {
  uint32_t device;
  TimeNs ts;
  StrId node;
  bool operator<(const ArrowKey& o) const;
};
std::vector<ArrowKey> ArrowKeys(const Capture& c);
// Whether `keys` (ArrowKeys) holds (device, ts, node).
bool Covered(const std::vector<ArrowKey>& keys, uint32_t device, TimeNs ts, StrId node);

// The _S<N> inputs the ops of one device named in one step of its task. One Recv feeds every op
// of a step that names the same input (TF's graph_partition.cc keeps one Recv per tensor and
// destination device: DupRecvTable), so such an input is one transfer however many ops name it.
// Feed a device's ops in start order; Reset() before the next device.
class StepInputs {
 public:
  // Whether input `in` of an op that started at `start` was named before in the op's step (the
  // last of `steps` starting at or before it); records it.
  bool Seen(StepRange steps, TimeNs start, StrId in);
  void Reset() {
    step_ = SIZE_MAX;
    seen_.clear();
  }

 private:
  size_t step_ = SIZE_MAX;
  absl::flat_hash_set<StrId> seen_;
};

// What the _S<N> inputs of a finished capture's ops are resolved with: built once by
// CaptureBuilder::Finish (ResolveEdges) and kept as Capture::input_index. Memory: 12 bytes per
// string of the pool (PartitionInputs), 8 per producer op (ProducerEnds), 24 per cross-task
// DataFlow arrow. Immutable once built; safe for concurrent readers.
struct InputIndex {
  PartitionInputs refs;
  ProducerEnds producers;        // the producers of refs' slots, per (slot, task)
  std::vector<ArrowKey> arrows;  // ArrowKeys(c)
  TimeNs job_step = 0;           // JobStep(c), ns
};

// The index of a finished capture that has none (Capture::input_index null: a capture not made by
// CaptureBuilder::Finish): its ops read once for the producers. The same rules, so the same
// resolutions as Finish's index (only refs' tensor ids may differ: a tensor name not in the pool
// is its node's, FindPartitionInputs).
InputIndex IndexInputs(const Capture& c);

// Resolves the _S<N> inputs of `op`, an op of task `task` of the finished capture `c`, with `x`:
// for each input that has a partition suffix, is not drawn by a cross-task DataFlow arrow (counted
// as the arrow) and, with `seen` (the ops of one device fed in start order), was not named before
// in the op's step, calls fn(in, slot, match): `in` the input's string id, `slot` its
// PartitionInputs slot (kNoProducer: its producer never ran, `match` then kUnresolved) and `match`
// the producers' answer in the op's window (ConsumerWindow, ProducerEnds::Find).
template <typename Fn>
void ResolveOpInputs(const Capture& c, const InputIndex& x, uint32_t task, const OpRow& op,
                     StepInputs* seen, Fn&& fn) {
  const NodeRow& n = c.Node(op);
  if (n.inputs_count == 0) return;
  const StepRange steps = c.TaskSteps(task);
  for (uint32_t k = 0; k < n.inputs_count; ++k) {
    const StrId in = c.inputs[n.inputs_begin + k];
    const uint32_t s = x.refs.slot[in];
    if (s == PartitionInputs::kNotPartition) continue;
    if (seen != nullptr && seen->Seen(steps, op.start, in)) continue;
    if (s == PartitionInputs::kNoProducer) {
      fn(in, s, ProducerEnds::Match{});
      continue;
    }
    if (Covered(x.arrows, op.device, op.start, x.refs.nodes[s])) continue;
    const Window w =
        ConsumerWindow(steps, c.tasks[task].kind == JobKind::kPs, op.start, x.job_step);
    fn(in, s, x.producers.Find(s, task, w.lo, op.start, w.hi));
  }
}

template <typename Each>
ProducerEnds ProducerEnds::Build(size_t n_slots, Each&& each) {
  // Pass 1: rows per (slot, task), keyed slot << 32 | task; pass 2: each group filled in place.
  absl::flat_hash_map<uint64_t, uint32_t> rows;
  each([&](uint32_t slot, uint32_t task, TimeNs) { ++rows[uint64_t{slot} << 32 | task]; });
  std::vector<std::pair<uint64_t, uint32_t>> counts(rows.begin(), rows.end());
  rows = {};
  ProducerEnds p;
  p.Index(n_slots, &counts);  // sorted by key; second: the group's next row
  each([&](uint32_t slot, uint32_t task, TimeNs end) {
    const uint64_t key = uint64_t{slot} << 32 | task;
    auto it = std::lower_bound(
        counts.begin(), counts.end(), key,
        [](const std::pair<uint64_t, uint32_t>& x, uint64_t k) { return x.first < k; });
    p.ends[it->second++] = end;
  });
  for (size_t g = 0; g + 1 < p.group_ends.size(); ++g) {
    std::sort(p.ends.begin() + p.group_ends[g], p.ends.begin() + p.group_ends[g + 1]);
  }
  return p;
}

}  // namespace tfdiag::capture_finish
