#include "core/capture_finish.h"

#include <algorithm>
#include <memory>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "core/op_kinds.h"

namespace tfdiag::capture_finish {

namespace {

// A cross-task edge's identity; rows are sorted by it.
struct EdgeKey {
  uint32_t src, dst;
  StrId tensor;
  EdgeKind kind;
  bool operator==(const EdgeKey& o) const {
    return src == o.src && dst == o.dst && tensor == o.tensor && kind == o.kind;
  }
  bool operator<(const EdgeKey& o) const {
    return std::tie(src, dst, tensor, kind) < std::tie(o.src, o.dst, o.tensor, o.kind);
  }
  template <typename H>
  friend H AbslHashValue(H h, const EdgeKey& k) {
    return H::combine(std::move(h), k.src, k.dst, k.tensor, static_cast<uint8_t>(k.kind));
  }
};

// Transfers seen per edge.
using EdgeCounts = absl::flat_hash_map<EdgeKey, int64_t>;

// What the consumers of one task added up to.
struct TaskInputs {
  EdgeCounts counts;
  int64_t unresolved = 0, ambiguous = 0;
};

// Resolves the _S<N> inputs of the ops of task `t` (ResolveOpInputs) into `out`: an edge counted
// per (producing task, tensor), an ambiguous or unresolved input counted.
void ResolveTaskInputs(const Capture& c, const InputIndex& x, uint32_t t,
                       const std::vector<uint32_t>& devices, TaskInputs* out) {
  StepInputs seen;
  for (uint32_t d : devices) {
    seen.Reset();
    c.ops.ForEach(c.device_ops[d].first, c.device_ops[d].second, [&](const OpRow& op) {
      ResolveOpInputs(c, x, t, op, &seen, [&](StrId in, uint32_t, const ProducerEnds::Match& m) {
        if (m.kind == ProducerEnds::Match::kEdge) {
          ++out->counts[EdgeKey{m.src, t, x.refs.tensor[in], EdgeKind::kPartitionInput}];
        } else if (m.kind == ProducerEnds::Match::kAmbiguous) {
          ++out->ambiguous;
        } else if (m.kind == ProducerEnds::Match::kUnresolved) {
          ++out->unresolved;
        }
      });
    });
  }
}

// The edge rows of `counts` in key order. A transfer drawn as a DataFlow arrow and also named as
// a _S<N> input is one transfer: the partition-input row (ordered after the DataFlow one) is
// kept, with the larger count.
std::vector<EdgeRow> EdgeRows(const Capture& c, const EdgeCounts& counts) {
  absl::flat_hash_map<StrId, int64_t> tensor_bytes;
  for (const TensorRow& t : c.tensors) tensor_bytes[t.name] = t.bytes;
  std::vector<std::pair<EdgeKey, int64_t>> sorted(counts.begin(), counts.end());
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<EdgeRow> edges;
  for (const auto& [key, n] : sorted) {
    EdgeRow e;
    e.src_task = key.src;
    e.dst_task = key.dst;
    e.tensor = key.tensor;
    e.kind = key.kind;
    e.count = n;
    auto size = tensor_bytes.find(key.tensor);
    e.bytes = size == tensor_bytes.end() ? -1 : n * size->second;
    if (!edges.empty()) {
      EdgeRow& prev = edges.back();
      if (prev.src_task == e.src_task && prev.dst_task == e.dst_task && prev.tensor == e.tensor) {
        if (prev.count > e.count) e.count = prev.count, e.bytes = prev.bytes;
        prev = e;
        continue;
      }
    }
    edges.push_back(e);
  }
  return edges;
}

// The capture of time t (the last one starting at or before it); `caps` sorted, non-empty.
size_t CaptureOf(const std::vector<CaptureRange>& caps, TimeNs t) {
  auto it = std::upper_bound(caps.begin(), caps.end(), t,
                             [](TimeNs x, const CaptureRange& r) { return x < r.start; });
  return it == caps.begin() ? 0 : static_cast<size_t>(it - caps.begin() - 1);
}

// Fills the steps of a task whose ops are on `devs` (see CaptureBuilder::Finish()): capture j's
// steps are steps[cb[j], cb[j + 1]), started by the _SOURCE ops (name `source`) of `primary` in
// that capture, or, for a capture without one (or `primary` kNoIndex), one step from the task's
// first op there. Each op goes to the last step of its capture that started by its start (else
// the capture's first step, whose start it moves back); a step ends at its ops' last end.
// Ops whose node `*beside` marks (tf.data producers, IsInputProducerOpType) run beside the
// steps and bound none: a prefetching producer's op, started late in a step and as long as one,
// ended the step a step later (indep report20 28004: worker steps of 25 ms read 51 ms). Where a
// step would then hold no op at all (a task that ran only producer ops there), the task's steps
// are read again with them (`beside` nullptr).
void StepsOf(const Capture& c, const std::vector<uint32_t>& devs, uint32_t primary, StrId source,
             const std::vector<CaptureRange>& caps, const std::vector<uint32_t>& cb,
             const std::vector<bool>* beside, StepRow* steps) {
  const size_t n = cb.back();
  for (size_t k = 0; k < n; ++k) steps[k] = {INT64_MAX, INT64_MIN};
  if (primary != kNoIndex) {
    std::vector<uint32_t> next(cb.begin(), cb.end() - 1);  // per capture: its next step
    c.ops.ForEach(c.device_ops[primary].first, c.device_ops[primary].second, [&](const OpRow& op) {
      if (c.OpName(op) != source) return;
      const size_t j = caps.size() > 1 ? CaptureOf(caps, op.start) : 0;
      if (next[j] < cb[j + 1]) steps[next[j]++].start = op.start;
    });
  }
  size_t skipped = 0;
  for (uint32_t d : devs) {
    // Ops are in start order: the capture and step cursors only move forward.
    size_t j = 0, k = 0;
    c.ops.ForEach(c.device_ops[d].first, c.device_ops[d].second, [&](const OpRow& op) {
      while (j + 1 < caps.size() && caps[j + 1].start <= op.start) ++j;
      if (cb[j] == cb[j + 1]) return;  // not counted (cannot happen: a capture with ops has one)
      if (beside != nullptr && (*beside)[op.node]) {
        ++skipped;
        return;
      }
      k = std::max<size_t>(k, cb[j]);
      while (k + 1 < cb[j + 1] && steps[k + 1].start <= op.start) ++k;
      steps[k].start = std::min(steps[k].start, op.start);  // only a capture's first step moves
      steps[k].end = std::max(steps[k].end, op.end());
    });
  }
  if (skipped > 0) {
    for (size_t k = 0; k < n; ++k) {
      if (steps[k].start == INT64_MAX && steps[k].end == INT64_MIN) {
        StepsOf(c, devs, primary, source, caps, cb, nullptr, steps);
        return;
      }
    }
  }
  for (size_t k = 0; k < n; ++k) {
    if (steps[k].start == INT64_MAX) steps[k].start = std::max<TimeNs>(steps[k].end, 0);
    steps[k].end = std::max(steps[k].end, steps[k].start);  // a _SOURCE whose ops the next took
  }
}

}  // namespace

void RecoverSteps(const std::vector<DeviceScan>& scans, StrId source, int threads, Capture* c) {
  const size_t nt = c->tasks.size();
  // Each task's devices, in device order (one pass: a capture may hold tens of thousands of
  // single-device tasks, where a scan of all devices per task was quadratic).
  std::vector<std::vector<uint32_t>> devices_of(nt);
  for (uint32_t d = 0; d < c->devices.size(); ++d) {
    if (c->devices[d].task < nt) devices_of[c->devices[d].task].push_back(d);
  }
  const std::vector<CaptureRange> caps =
      c->captures.size() > 1 ? c->captures : std::vector<CaptureRange>{{c->start, c->end}};
  const size_t nc = caps.size();
  // Each task's step device (RecoverSteps' comment) and its steps per capture: with one capture,
  // one per _SOURCE op there, one when it has none, none for a task without ops; with several,
  // counted so per capture (the task's ops read once more).
  std::vector<uint32_t> primary(nt, kNoIndex);
  std::vector<std::vector<uint32_t>> per_capture(nt, std::vector<uint32_t>(nc, 0));
  const int n_tasks = static_cast<int>(nt);
#pragma omp parallel for schedule(dynamic) num_threads(std::max(1, threads)) if (threads > 1)
  for (int ti = 0; ti < n_tasks; ++ti) {
    const size_t t = static_cast<size_t>(ti);
    uint32_t best = 0;
    bool has_ops = false;
    for (uint32_t d : devices_of[t]) {
      has_ops |= c->device_ops[d].first < c->device_ops[d].second;
      const DeviceScan& s = scans[d];
      if (s.sources > best ||
          (s.sources == best && best > 0 && s.first_source < scans[primary[t]].first_source)) {
        best = s.sources, primary[t] = d;
      }
    }
    std::vector<uint32_t>& n = per_capture[t];
    if (nc == 1) {
      n[0] = has_ops ? std::max<uint32_t>(best, 1) : 0;
      continue;
    }
    std::vector<uint8_t> ran(nc, 0);
    for (uint32_t d : devices_of[t]) {
      size_t j = 0;
      c->ops.ForEach(c->device_ops[d].first, c->device_ops[d].second, [&](const OpRow& op) {
        while (j + 1 < nc && caps[j + 1].start <= op.start) ++j;
        ran[j] = 1;
        if (d == primary[t] && c->OpName(op) == source) ++n[j];
      });
    }
    for (size_t j = 0; j < nc; ++j) n[j] = std::max<uint32_t>(n[j], ran[j]);
  }
  c->task_steps.assign(nt, {0, 0});
  uint32_t at = 0;
  for (size_t t = 0; t < nt; ++t) {
    uint32_t n = 0;
    for (uint32_t x : per_capture[t]) n += x;
    c->task_steps[t] = {at, at + n};
    at += n;
  }
  c->steps.assign(at, StepRow{});
  std::vector<bool> beside(c->nodes.size());
  for (size_t i = 0; i < c->nodes.size(); ++i) {
    beside[i] = IsInputProducerOpType(c->Str(c->nodes[i].type));
  }
#pragma omp parallel for schedule(dynamic) num_threads(std::max(1, threads)) if (threads > 1)
  for (int ti = 0; ti < n_tasks; ++ti) {
    const size_t t = static_cast<size_t>(ti);
    const auto [b, e] = c->task_steps[t];
    if (b == e) continue;
    std::vector<uint32_t> cb(nc + 1, 0);  // capture j's steps: [cb[j], cb[j + 1])
    for (size_t j = 0; j < nc; ++j) cb[j + 1] = cb[j] + per_capture[t][j];
    StepsOf(*c, devices_of[t], primary[t], source, caps, cb, &beside, c->steps.data() + b);
  }
}

void ResolveEdges(PartitionInputs refs, std::vector<DeviceScan>* scans, int threads, Capture* c) {
  auto x = std::make_shared<InputIndex>();
  x->refs = std::move(refs);
  x->producers = ProducerEnds::Build(x->refs.nodes.size(), [&](auto&& emit) {
    for (size_t d = 0; d < scans->size(); ++d) {
      for (const DeviceScan::Producer& p : (*scans)[d].producers) {
        emit(p.slot, c->devices[d].task, p.end);
      }
    }
  });
  for (DeviceScan& d : *scans) d.producers = std::vector<DeviceScan::Producer>();
  x->arrows = ArrowKeys(*c);
  x->job_step = JobStep(*c);
  // DataFlow pairs first, then each task's consumers (tasks in parallel, summed in task order).
  EdgeCounts counts;
  for (const FlowRow& f : c->flows) {
    uint32_t st = c->devices[f.src_device].task, dt = c->devices[f.dst_device].task;
    if (st != dt) ++counts[EdgeKey{st, dt, f.name, EdgeKind::kDataFlow}];
  }
  // Consumers are ops with a partition input (one with a slot or without a producer): none
  // when no input string is one (profiles without inputs), and the pass over the ops is skipped.
  const bool any_partition = std::any_of(x->refs.slot.begin(), x->refs.slot.end(), [](uint32_t s) {
    return s != PartitionInputs::kNotPartition;
  });
  const size_t nt = any_partition ? c->tasks.size() : 0;
  std::vector<std::vector<uint32_t>> devices_of(nt);
  for (uint32_t d = 0; d < c->devices.size() && nt > 0; ++d) {
    if (c->devices[d].task < nt) devices_of[c->devices[d].task].push_back(d);
  }
  std::vector<TaskInputs> per_task(nt);
  const int n_tasks = static_cast<int>(nt);
#pragma omp parallel for schedule(dynamic) num_threads(std::max(1, threads)) if (threads > 1)
  for (int t = 0; t < n_tasks; ++t) {
    const uint32_t task = static_cast<uint32_t>(t);
    ResolveTaskInputs(*c, *x, task, devices_of[task], &per_task[task]);
  }
  for (TaskInputs& ti : per_task) {
    c->stats.unresolved_inputs += ti.unresolved;
    c->stats.ambiguous_inputs += ti.ambiguous;
    for (const auto& [key, n] : ti.counts) counts[key] += n;
  }
  c->edges = EdgeRows(*c, counts);
  c->input_index = std::move(x);
}

}  // namespace tfdiag::capture_finish
