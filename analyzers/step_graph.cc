#include "analyzers/step_graph.h"

#include <absl/container/flat_hash_map.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "analyzers/op_names.h"

namespace tfdiag {

namespace {

enum OpClass : uint8_t { kCompute = 0, kInput = 1, kRecv = 2 };

// One op of the task being built.
struct TaskOp {
  TimeNs start, end;
  uint32_t idx;  // index into Capture::ops
  uint32_t node;
  uint16_t device;
  uint8_t cls;
};

bool IsRecvType(std::string_view t) {
  return t == "RecvTensor" || t == "_Recv" || t == "_HostRecv";
}

// Producers of one node name some _S<N> input refers to: (end, task), sorted.
using Producers = std::vector<std::pair<TimeNs, uint32_t>>;

// Merges [start, end) intervals given in start order into disjoint ones.
void MergeInto(std::vector<std::pair<TimeNs, TimeNs>>* iv) {
  size_t out = 0;
  for (size_t i = 0; i < iv->size(); ++i) {
    if (out > 0 && (*iv)[i].first <= (*iv)[out - 1].second) {
      (*iv)[out - 1].second = std::max((*iv)[out - 1].second, (*iv)[i].second);
    } else {
      (*iv)[out++] = (*iv)[i];
    }
  }
  iv->resize(out);
}

// Length of disjoint sorted `u` inside [a, b).
TimeNs Overlap(const std::vector<std::pair<TimeNs, TimeNs>>& u, TimeNs a, TimeNs b) {
  auto it =
      std::upper_bound(u.begin(), u.end(), a,
                       [](TimeNs t, const std::pair<TimeNs, TimeNs>& x) { return t < x.second; });
  TimeNs n = 0;
  for (; it != u.end() && it->first < b; ++it)
    n += std::min(b, it->second) - std::max(a, it->first);
  return n;
}

// What `task` waits for over its steps `range` (into `steps`), whose waits index `waits` and
// whose waits' edges index `edges`: every row, biggest receive + idle time first.
std::vector<WaitCause> CausesOf(uint32_t task, const std::vector<StepNode>& steps_,
                                const std::vector<StepWait>& waits_,
                                const std::vector<GraphEdge>& edges_,
                                std::pair<uint32_t, uint32_t> range) {
  using Key = std::tuple<uint32_t, StrId, bool, bool>;  // src, tensor, ambiguous, tail
  std::map<Key, WaitCause> by;
  const auto [b, e] = range;
  for (uint32_t s = b; s < e; ++s) {
    for (uint32_t w = steps_[s].waits_begin; w < steps_[s].waits_end; ++w) {
      const StepWait& sw = waits_[w];
      const GraphEdge* edge = sw.edge == kNoIndex ? nullptr : &edges_[sw.edge];
      Key k{edge ? edge->src_task : kNoIndex, edge ? edge->tensor : 0,
            edge ? edge->ambiguous() : false, sw.step_tail};
      WaitCause& c = by[k];
      c.task = task;
      c.src_task = std::get<0>(k);
      c.tensor = std::get<1>(k);
      c.ambiguous = std::get<2>(k);
      c.step_tail = sw.step_tail;
      if (edge != nullptr) {
        c.candidates = std::max(c.candidates, edge->candidates);
        c.sent_offset_ns += edge->sent - steps_[s].start;  // summed; divided below
      }
      c.wait_ns += sw.recv_ns + sw.idle_ns;
      c.input_ns += sw.input_ns;
      ++c.waits;
    }
  }
  std::vector<WaitCause> out;
  for (auto& [k, c] : by) {
    if (c.waits > 0) c.sent_offset_ns /= c.waits;
    out.push_back(c);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const WaitCause& x, const WaitCause& y) { return x.wait_ns > y.wait_ns; });
  return out;
}

}  // namespace

StepGraph StepGraph::Build(const Capture& c) {
  StepGraph g;
  const size_t n_tasks = c.tasks.size();
  g.task_steps_.assign(n_tasks, {0, 0});
  std::vector<std::vector<uint32_t>> devices_of(n_tasks);
  for (uint32_t d = 0; d < c.devices.size(); ++d) devices_of[c.devices[d].task].push_back(d);

  // Classes of node types, and the node names _S<N> inputs refer to.
  std::vector<uint8_t> node_cls(c.nodes.size(), kCompute);
  for (size_t n = 0; n < c.nodes.size(); ++n) {
    const std::string_view type = c.Str(c.nodes[n].type), name = c.Str(c.nodes[n].name);
    node_cls[n] = IsRecvType(type) ? kRecv : IsInputOp(type, name) ? kInput : kCompute;
  }
  // Input string -> its producer node name (kNotFound when it is no partition input).
  absl::flat_hash_map<StrId, StrId> part_node;
  absl::flat_hash_map<StrId, Producers> producers;
  for (StrId in : c.inputs) {
    if (part_node.contains(in)) continue;
    const std::string_view s = c.Str(in);
    StrId node = StringPool::kNotFound;
    if (IsPartitionInput(s)) node = c.strings.Find(InputNode(s));
    part_node.emplace(in, node);
    if (node != StringPool::kNotFound) producers.try_emplace(node);
  }
  if (!producers.empty()) {
    c.ops.ForEach([&](const OpRow& op) {
      auto it = producers.find(c.OpName(op));
      if (it != producers.end()) it->second.emplace_back(op.end(), c.devices[op.device].task);
    });
    for (auto& [name, rows] : producers) std::sort(rows.begin(), rows.end());
  }
  // DataFlow arrows by the consumer's task.
  std::vector<std::vector<uint32_t>> flows_into(n_tasks);
  for (uint32_t i = 0; i < c.flows.size(); ++i) {
    const FlowRow& f = c.flows[i];
    const uint32_t st = c.devices[f.src_device].task, dt = c.devices[f.dst_device].task;
    if (st != dt) flows_into[dt].push_back(i);
  }

  // The job's step: the median worker step. A PS runs each worker's partition of a step as a run
  // of its own (its _SOURCE-delimited "steps" are per request and interleave), so a PS consumer's
  // step is taken as the job's step before it.
  std::vector<TimeNs> worker_steps;
  for (uint32_t t = 0; t < n_tasks; ++t) {
    if (c.tasks[t].kind != JobKind::kWorker) continue;
    for (const StepRow& s : c.TaskSteps(t)) worker_steps.push_back(s.end - s.start);
  }
  TimeNs job_step = 0;
  if (!worker_steps.empty()) {
    std::nth_element(worker_steps.begin(), worker_steps.begin() + worker_steps.size() / 2,
                     worker_steps.end());
    job_step = worker_steps[worker_steps.size() / 2];
  }

  std::vector<TaskOp> ops;
  std::vector<GraphEdge> task_edges;
  std::vector<StepWait> task_waits;  // the task's waits; StepNode::waits_* index it until kept
  g.causes_.resize(n_tasks);
  std::map<std::pair<uint32_t, uint32_t>, int64_t> transfers;  // (src, dst) -> resolved edges
  std::vector<std::pair<TimeNs, TimeNs>> u_in, u_wait;
  for (uint32_t t = 0; t < n_tasks; ++t) {
    const StepRange range = c.TaskSteps(t);
    ops.clear();
    for (uint32_t d : devices_of[t]) {
      const auto [b, e] = c.device_ops[d];
      uint32_t idx = b;
      c.ops.ForEach(b, e, [&](const OpRow& op) {
        ops.push_back({op.start, op.end(), idx++, op.node, op.device, node_cls[op.node]});
      });
    }
    std::sort(ops.begin(), ops.end(), [](const TaskOp& a, const TaskOp& b) {
      return std::tie(a.start, a.idx) < std::tie(b.start, b.idx);
    });
    task_edges.clear();
    // 1. Arrows: the consumer is the op of the arrow's device that starts at its end.
    std::map<uint32_t, std::vector<StrId>> covered;  // op -> producer nodes an arrow delivered
    for (uint32_t fi : flows_into[t]) {
      const FlowRow& f = c.flows[fi];
      auto it = std::lower_bound(ops.begin(), ops.end(), f.dst_ts,
                                 [](const TaskOp& o, TimeNs ts) { return o.start < ts; });
      const TaskOp* consumer = nullptr;
      const std::string_view want = InputNode(c.Str(f.name));
      for (; it != ops.end() && it->start == f.dst_ts; ++it) {
        if (it->device != f.dst_device) continue;
        if (consumer == nullptr) consumer = &*it;
        const NodeRow& n = c.nodes[it->node];
        bool match = false;
        for (uint32_t k = 0; k < n.inputs_count && !match; ++k) {
          match = InputNode(c.Str(c.inputs[n.inputs_begin + k])) == want;
        }
        if (match) {
          consumer = &*it;
          break;
        }
      }
      if (consumer == nullptr) continue;
      GraphEdge e;
      e.src_task = c.devices[f.src_device].task;
      e.dst_task = t;
      e.tensor = f.name;
      e.sent = f.src_ts;
      e.needed = consumer->start;
      e.dst_op = consumer->idx;
      e.kind = EdgeKind::kDataFlow;
      task_edges.push_back(e);
      const StrId node = c.strings.Find(want);
      if (node != StringPool::kNotFound) covered[consumer->idx].push_back(node);
    }
    // 2. _S<N> inputs not covered by an arrow, resolved within the consumer's own step.
    if (!producers.empty()) {
      std::vector<uint32_t> cand_tasks;
      for (const TaskOp& o : ops) {
        const NodeRow& n = c.nodes[o.node];
        for (uint32_t k = 0; k < n.inputs_count; ++k) {
          const StrId in = c.inputs[n.inputs_begin + k];
          auto pn = part_node.find(in);
          if (pn == part_node.end() || pn->second == StringPool::kNotFound) continue;
          const StrId node = pn->second;
          auto cov = covered.find(o.idx);
          if (cov != covered.end() &&
              std::find(cov->second.begin(), cov->second.end(), node) != cov->second.end()) {
            continue;
          }
          // The consumer's step: the last one starting at or before it (a PS: the job's step).
          TimeNs lo = INT64_MIN;
          const StepRow* s =
              std::upper_bound(range.begin(), range.end(), o.start,
                               [](TimeNs ts, const StepRow& r) { return ts < r.start; });
          // Replicas running the same graph produce the same name around the same time: a
          // producer on another task later in the step makes the input ambiguous too.
          TimeNs hi = o.start;
          if (s != range.begin()) lo = (s - 1)->start, hi = std::max(hi, (s - 1)->end);
          if (c.tasks[t].kind == JobKind::kPs && job_step > 0) {
            lo = o.start - job_step;
            hi = o.start + job_step;
          }
          const Producers& rows = producers.at(node);
          auto first = std::lower_bound(rows.begin(), rows.end(), std::make_pair(lo, uint32_t{0}));
          cand_tasks.clear();
          TimeNs sent = 0;
          uint32_t src = kNoIndex;
          bool before = false;
          for (auto p = first; p != rows.end() && p->first <= hi; ++p) {
            if (p->second == t) continue;
            if (std::find(cand_tasks.begin(), cand_tasks.end(), p->second) == cand_tasks.end()) {
              cand_tasks.push_back(p->second);
            }
            if (p->first <= o.start) {
              before = true;
              sent = p->first;  // rows are in end order: the latest so far
              src = p->second;
            }
          }
          if (!before) {
            // Produced on this task (a device-to-device edge) or not in this step.
            bool local = false;
            for (auto p = first; p != rows.end() && p->first <= o.start && !local; ++p) {
              local = p->second == t;
            }
            if (!local) ++g.unresolved_;
            continue;
          }
          GraphEdge e;
          e.dst_task = t;
          e.tensor = node;
          e.sent = sent;
          e.needed = o.start;
          e.dst_op = o.idx;
          e.kind = EdgeKind::kPartitionInput;
          e.candidates = static_cast<uint16_t>(std::min<size_t>(cand_tasks.size(), 65535));
          if (e.ambiguous()) {
            ++g.ambiguous_;
          } else {
            e.src_task = src;
          }
          task_edges.push_back(e);
        }
      }
    }
    std::sort(task_edges.begin(), task_edges.end(), [](const GraphEdge& a, const GraphEdge& b) {
      return std::tie(a.dst_op, a.sent) < std::tie(b.dst_op, b.sent);
    });
    for (const GraphEdge& e : task_edges) {
      if (!e.ambiguous()) ++transfers[{e.src_task, e.dst_task}];
    }
    // Waits name edges by their index in task_edges until the task's kept edges are appended.
    task_waits.clear();
    auto last_edge_into = [&](uint32_t op, TimeNs* sent) -> uint32_t {
      auto it = std::lower_bound(task_edges.begin(), task_edges.end(), op,
                                 [](const GraphEdge& e, uint32_t x) { return e.dst_op < x; });
      uint32_t best = kNoIndex;
      for (; it != task_edges.end() && it->dst_op == op; ++it) {
        if (best == kNoIndex || it->sent >= *sent) {
          best = static_cast<uint32_t>(it - task_edges.begin());
          *sent = it->sent;
        }
      }
      return best;
    };

    // 3. Steps, their gaps and what ended each.
    g.task_steps_[t].first = static_cast<uint32_t>(g.steps_.size());
    for (size_t si = 0; si < range.size(); ++si) {
      const StepRow& sr = range[si];
      StepNode node;
      node.task = t;
      node.index = static_cast<uint32_t>(si);
      node.start = sr.start;
      node.end = sr.end;
      node.waits_begin = static_cast<uint32_t>(task_waits.size());
      const uint32_t step_id = static_cast<uint32_t>(g.steps_.size());
      auto first = std::lower_bound(ops.begin(), ops.end(), sr.start,
                                    [](const TaskOp& o, TimeNs ts) { return o.start < ts; });
      auto last = first;
      while (last != ops.end() && last->start < sr.end) ++last;
      u_in.clear();
      u_wait.clear();
      for (auto it = first; it != last; ++it) {
        if (it->cls == kCompute) continue;
        const std::pair<TimeNs, TimeNs> iv{it->start, std::min(it->end, sr.end)};
        u_wait.push_back(iv);
        if (it->cls == kInput) u_in.push_back(iv);
      }
      MergeInto(&u_in);
      MergeInto(&u_wait);
      TimeNs cursor = sr.start;
      auto add_wait = [&](TimeNs a, TimeNs b, uint32_t edge, bool tail) {
        StepWait w;
        w.step = step_id;
        w.start = a;
        w.end = b;
        w.input_ns = Overlap(u_in, a, b);
        w.recv_ns = Overlap(u_wait, a, b) - w.input_ns;
        w.idle_ns = (b - a) - w.input_ns - w.recv_ns;
        w.edge = edge;
        w.step_tail = tail;
        node.input_ns += w.input_ns;
        node.recv_ns += w.recv_ns;
        node.idle_ns += w.idle_ns;
        task_waits.push_back(w);
      };
      for (auto it = first; it != last; ++it) {
        if (it->cls != kCompute) continue;
        if (it->start > cursor) {
          TimeNs sent = INT64_MIN;
          uint32_t edge = kNoIndex;
          for (auto same = it; same != last && same->start == it->start; ++same) {
            if (same->cls != kCompute) continue;
            const uint32_t e = last_edge_into(same->idx, &sent);
            if (e != kNoIndex) edge = e;
          }
          add_wait(cursor, it->start, edge, false);
        }
        const TimeNs end = std::min(it->end, sr.end);
        if (end > cursor) {
          node.compute_ns += end - std::max(cursor, it->start);
          cursor = end;
        }
      }
      if (cursor < sr.end) add_wait(cursor, sr.end, kNoIndex, true);
      node.waits_end = static_cast<uint32_t>(task_waits.size());
      g.steps_.push_back(node);
    }
    g.task_steps_[t].second = static_cast<uint32_t>(g.steps_.size());
    // What the task waits for, from all of its waits; then only its median step's waits (what
    // Segments reads) and the edges that ended them are kept, renumbered.
    g.causes_[t] = CausesOf(t, g.steps_, task_waits, task_edges, g.task_steps_[t]);
    const uint32_t median = g.MedianStep(t);
    std::vector<uint32_t> kept(task_edges.size(), kNoIndex);
    if (median != kNoIndex) {
      const StepNode& n = g.steps_[median];
      for (uint32_t w = n.waits_begin; w < n.waits_end; ++w) {
        if (task_waits[w].edge != kNoIndex) kept[task_waits[w].edge] = 0;
      }
    }
    for (uint32_t i = 0; i < task_edges.size(); ++i) {  // in (dst_op, sent) order
      if (kept[i] == kNoIndex) continue;
      kept[i] = static_cast<uint32_t>(g.edges_.size());
      g.edges_.push_back(task_edges[i]);
    }
    for (uint32_t s = g.task_steps_[t].first; s < g.task_steps_[t].second; ++s) {
      StepNode& n = g.steps_[s];
      const uint32_t b = n.waits_begin, e = n.waits_end;
      n.waits_begin = n.waits_end = static_cast<uint32_t>(g.waits_.size());
      if (s != median) continue;
      n.waits_kept = true;
      for (uint32_t w = b; w < e; ++w) {
        StepWait x = task_waits[w];
        if (x.edge != kNoIndex) x.edge = kept[x.edge];
        g.waits_.push_back(x);
      }
      n.waits_end = static_cast<uint32_t>(g.waits_.size());
    }
  }
  // Scratch of the last task goes before the caller's next allocations.
  std::vector<TaskOp>().swap(ops);
  std::vector<GraphEdge>().swap(task_edges);
  std::vector<StepWait>().swap(task_waits);
  g.transfers_.reserve(transfers.size());
  for (const auto& [k, v] : transfers) g.transfers_.emplace_back(k.first, k.second, v);
  return g;
}

std::pair<uint32_t, uint32_t> StepGraph::TaskSteps(uint32_t task) const {
  return task < task_steps_.size() ? task_steps_[task] : std::pair<uint32_t, uint32_t>{0, 0};
}

std::pair<uint32_t, uint32_t> StepGraph::EdgesInto(uint32_t op) const {
  auto lo = std::lower_bound(edges_.begin(), edges_.end(), op,
                             [](const GraphEdge& e, uint32_t x) { return e.dst_op < x; });
  auto hi = lo;
  while (hi != edges_.end() && hi->dst_op == op) ++hi;
  return {static_cast<uint32_t>(lo - edges_.begin()), static_cast<uint32_t>(hi - edges_.begin())};
}

std::vector<PathSegment> StepGraph::Segments(uint32_t step) const {
  std::vector<PathSegment> out;
  if (step >= steps_.size()) return out;
  const StepNode& n = steps_[step];
  if (!n.waits_kept) return out;
  TimeNs at = n.start;
  for (uint32_t w = n.waits_begin; w < n.waits_end; ++w) {
    const StepWait& x = waits_[w];
    if (x.start > at) out.push_back({at, x.start, false, kNoIndex, false});
    out.push_back({x.start, x.end, true, x.edge, x.step_tail});
    at = x.end;
  }
  if (at < n.end) out.push_back({at, n.end, false, kNoIndex, false});
  return out;
}

uint32_t StepGraph::MedianStep(uint32_t task) const {
  const auto [b, e] = TaskSteps(task);
  if (b == e) return kNoIndex;
  std::vector<uint32_t> ids;
  for (uint32_t s = b; s < e; ++s) ids.push_back(s);
  auto len = [&](uint32_t s) { return steps_[s].end - steps_[s].start; };
  std::nth_element(ids.begin(), ids.begin() + ids.size() / 2, ids.end(),
                   [&](uint32_t x, uint32_t y) { return len(x) < len(y); });
  return ids[ids.size() / 2];
}

std::vector<std::tuple<uint32_t, uint32_t, int64_t>> StepGraph::TransferCounts() const {
  return transfers_;
}

std::vector<WaitCause> StepGraph::WaitCausesOf(uint32_t task, size_t top) const {
  if (task >= causes_.size()) return {};
  const std::vector<WaitCause>& all = causes_[task];
  return {all.begin(),
          all.begin() + static_cast<ptrdiff_t>(top > 0 ? std::min(top, all.size()) : all.size())};
}

}  // namespace tfdiag
