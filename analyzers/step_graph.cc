#include "analyzers/step_graph.h"

#include <absl/container/flat_hash_map.h>

#include <algorithm>
#include <map>
#include <memory>
#include <tuple>

#include "analyzers/op_names.h"
#include "analyzers/pull_beside_input.h"
#include "analyzers/task_stats.h"
#include "core/device_cursor.h"
#include "core/partition_inputs.h"

namespace tfdiag {

namespace {

namespace cf = capture_finish;

// kBackground: tf.data producer ops (IsInputProducerOpType), run beside the step, left out of
// its walk (issue 44: a prefetched pipeline's producer counted as compute doubled the step).
enum OpClass : uint8_t { kCompute = 0, kInput = 1, kRecv = 2, kSync = 3, kBackground = 4 };

// Disjoint [start, end) intervals appended in start order, for Overlap queries whose start never
// goes back: the intervals that ended by it are dropped.
class Intervals {
 public:
  void Clear() {
    v_.clear();
    head_ = 0;
  }
  void Add(TimeNs a, TimeNs b) {
    if (head_ < v_.size() && a <= v_.back().second) {
      v_.back().second = std::max(v_.back().second, b);
    } else {
      v_.emplace_back(a, b);
    }
  }
  // Length inside [a, b); `a` not below the last call's.
  TimeNs Overlap(TimeNs a, TimeNs b) {
    while (head_ < v_.size() && v_[head_].second <= a) ++head_;
    if (head_ > 64 && head_ * 2 > v_.size()) {  // bounded by the intervals still open
      v_.erase(v_.begin(), v_.begin() + static_cast<ptrdiff_t>(head_));
      head_ = 0;
    }
    TimeNs n = 0;
    for (size_t i = head_; i < v_.size() && v_[i].first < b; ++i) {
      n += std::min(b, v_[i].second) - std::max(a, v_[i].first);
    }
    return n;
  }

 private:
  std::vector<std::pair<TimeNs, TimeNs>> v_;
  size_t head_ = 0;
};

// What Build shares across tasks.
struct Shared {
  const Capture& c;
  const cf::InputIndex& inputs;  // the capture's (Capture::input_index)
  std::vector<uint8_t> node_cls;
};

// One task's consumers of DataFlow arrows: (op index, flow index), sorted.
using ArrowEdges = std::vector<std::pair<uint32_t, uint32_t>>;

// The op each cross-task arrow in `flows` (into `devices`) ends at: of the ops of the arrow's
// device that start at its end, the first whose inputs name the arrow's node, else the first.
ArrowEdges ArrowConsumers(const Capture& c, const std::vector<uint32_t>& devices,
                          std::vector<uint32_t> flows) {
  ArrowEdges out;
  std::sort(flows.begin(), flows.end(), [&](uint32_t x, uint32_t y) {
    return std::tie(c.flows[x].dst_device, c.flows[x].dst_ts, x) <
           std::tie(c.flows[y].dst_device, c.flows[y].dst_ts, y);
  });
  std::vector<std::pair<uint32_t, uint32_t>> group;  // (op index, node) starting at group_ts
  for (uint32_t d : devices) {
    auto fb = std::lower_bound(flows.begin(), flows.end(), d, [&](uint32_t f, uint32_t dev) {
      return c.flows[f].dst_device < dev;
    });
    auto fe = fb;
    while (fe != flows.end() && c.flows[*fe].dst_device == d) ++fe;
    if (fb == fe) continue;
    TimeNs group_ts = 0;
    auto resolve = [&]() {
      for (; fb != fe && c.flows[*fb].dst_ts < group_ts; ++fb) {
      }  // no op starts there
      for (; fb != fe && c.flows[*fb].dst_ts == group_ts; ++fb) {
        const std::string_view want = cf::NodeOfInput(c.Str(c.flows[*fb].name));
        uint32_t consumer = group[0].first;
        for (const auto& [idx, node] : group) {
          const NodeRow& n = c.nodes[node];
          bool match = false;
          for (uint32_t k = 0; k < n.inputs_count && !match; ++k) {
            match = cf::NodeOfInput(c.Str(c.inputs[n.inputs_begin + k])) == want;
          }
          if (match) {
            consumer = idx;
            break;
          }
        }
        out.emplace_back(consumer, *fb);
      }
      group.clear();
    };
    c.ops.ForEach(c.device_ops[d].first, c.device_ops[d].second,
                  [&](const OpRow& op, uint32_t idx) -> bool {
                    if (!group.empty() && op.start != group_ts) resolve();
                    while (fb != fe && c.flows[*fb].dst_ts < op.start) ++fb;
                    if (fb == fe) return false;
                    if (c.flows[*fb].dst_ts == op.start) {
                      group_ts = op.start;
                      group.emplace_back(idx, op.node);
                    }
                    return true;
                  });
    if (!group.empty()) resolve();
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The cross-task edges into op `idx` of task `t` (arrows first, then its _S<N> inputs that no
// arrow draws, resolved in the op's step by the capture's rules: cf::ResolveOpInputs) appended to
// `out`. With `seen` (the ops of one device in order), an input an earlier op of the step named
// is left out (one transfer, cf::StepInputs).
void OpEdges(const Shared& x, uint32_t t, const ArrowEdges& arrows, const OpRow& op, uint32_t idx,
             std::vector<GraphEdge>* out, cf::StepInputs* seen) {
  const Capture& c = x.c;
  auto it = std::lower_bound(arrows.begin(), arrows.end(), std::make_pair(idx, uint32_t{0}));
  for (; it != arrows.end() && it->first == idx; ++it) {
    const FlowRow& f = c.flows[it->second];
    GraphEdge e;
    e.src_task = c.devices[f.src_device].task;
    e.dst_task = t;
    e.tensor = f.name;
    e.sent = f.src_ts;
    e.needed = op.start;
    e.dst_op = idx;
    e.kind = EdgeKind::kDataFlow;
    out->push_back(e);
  }
  using Match = cf::ProducerEnds::Match;
  cf::ResolveOpInputs(c, x.inputs, t, op, seen, [&](StrId, uint32_t s, const Match& m) {
    if (m.kind != Match::kEdge && m.kind != Match::kAmbiguous) {
      return;  // produced on this task (a device-to-device edge), or not in this step
    }
    GraphEdge e;
    e.dst_task = t;
    e.tensor = x.inputs.refs.nodes[s];
    e.sent = m.sent;
    e.needed = op.start;
    e.dst_op = idx;
    e.kind = EdgeKind::kPartitionInput;
    e.candidates = static_cast<uint16_t>(std::clamp<uint32_t>(m.candidates, 1, 65535));
    if (!e.ambiguous()) e.src_task = m.src;
    out->push_back(e);
  });
}

// The index in [0, n) of the median of lengths len(0..n-1) (nth_element: the same pick as
// StepGraph::MedianStep).
// `counted`: the median of the first `counted` lengths in order (the rest sort after them).
template <typename Len>
uint32_t MedianIndex(uint32_t counted, uint32_t n, Len len) {
  std::vector<uint32_t> ids(n);
  for (uint32_t i = 0; i < n; ++i) ids[i] = i;
  std::nth_element(ids.begin(), ids.begin() + counted / 2, ids.end(),
                   [&](uint32_t a, uint32_t b) { return len(a) < len(b); });
  return ids[counted / 2];
}

// Keeps `e` (an input of an op ending at `done`) as the push of its producer's step when it is
// the latest-ending consumer so far of what that step sent: the step of e.src_task (`steps`: one
// entry per step of that task; empty for a PS) the tensor left in, within 5% slack of its end.
void NotePush(const Capture& c, const GraphEdge& e, TimeNs done, std::vector<GraphEdge>* steps) {
  if (steps->empty() || e.src_task == kNoIndex) return;
  const StepRange range = c.TaskSteps(e.src_task);
  auto it = std::upper_bound(range.begin(), range.end(), e.sent,
                             [](TimeNs t, const StepRow& s) { return t < s.start; });
  if (it == range.begin()) return;
  --it;
  if (e.sent > it->end) return;
  const TimeNs slack = (it->end - it->start) / 20;
  if (done > it->end + slack) return;
  GraphEdge& best = (*steps)[static_cast<size_t>(it - range.begin())];
  if (done <= best.done) return;
  best = e;
  best.push = true;
  best.done = done;
}

// One op of a step walk.
struct WalkOp {
  TimeNs start, end;
  uint32_t idx;
  uint8_t cls;
  OpRow row;
};

}  // namespace

StepGraph StepGraph::Build(const Capture& c) {
  StepGraph g;
  const size_t n_tasks = c.tasks.size();
  g.task_steps_.assign(n_tasks, {0, 0});
  g.median_step_.assign(n_tasks, kNoIndex);
  g.beside_.assign(n_tasks, PullBeside{});
  g.causes_.resize(n_tasks);
  size_t n_nodes = 0;
  for (uint32_t t = 0; t < n_tasks; ++t) {
    if (c.tasks[t].kind != JobKind::kPs) n_nodes += c.TaskSteps(t).size();
  }
  g.steps_.reserve(n_nodes);
  std::vector<std::vector<uint32_t>> devices_of(n_tasks);
  for (uint32_t d = 0; d < c.devices.size(); ++d) devices_of[c.devices[d].task].push_back(d);

  // The capture's own index (one resolution of _S<N> inputs: core/partition_inputs.h); built here
  // only for a capture not made by CaptureBuilder::Finish.
  std::shared_ptr<const cf::InputIndex> index = c.input_index;
  if (index == nullptr) index = std::make_shared<const cf::InputIndex>(cf::IndexInputs(c));
  Shared x{c, *index, {}};
  x.node_cls.assign(c.nodes.size(), kCompute);
  for (size_t n = 0; n < c.nodes.size(); ++n) {
    const std::string_view type = c.Str(c.nodes[n].type), name = c.Str(c.nodes[n].name);
    x.node_cls[n] = IsRecvOpType(type)            ? kRecv
                    : IsSyncWaitOp(type, name)    ? kSync
                    : IsInputOp(type, name)       ? kInput
                    : IsInputProducerOpType(type) ? kBackground
                                                  : kCompute;
  }
  // Transfers and the inputs left out are the capture's (its edges table and import stats).
  std::map<std::pair<uint32_t, uint32_t>, int64_t> transfers;  // (src, dst) -> transfers
  for (const EdgeRow& e : c.edges) transfers[{e.src_task, e.dst_task}] += e.count;
  g.transfers_.reserve(transfers.size());
  for (const auto& [k, v] : transfers) g.transfers_.emplace_back(k.first, k.second, v);
  g.unresolved_ = c.stats.unresolved_inputs;
  g.ambiguous_ = c.stats.ambiguous_inputs;
  // DataFlow arrows by the consumer's task.
  std::vector<std::vector<uint32_t>> flows_into(n_tasks);
  for (uint32_t i = 0; i < c.flows.size(); ++i) {
    const FlowRow& f = c.flows[i];
    const uint32_t st = c.devices[f.src_device].task, dt = c.devices[f.dst_device].task;
    if (st != dt) flows_into[dt].push_back(i);
  }

  std::vector<GraphEdge> scratch, kept, step_edges;
  std::vector<WalkOp> group, gap_recvs;
  std::vector<Span> step_in, step_recv;  // the median step's input and receive ops
  Intervals u_in, u_wait, u_sync;
  using Key = std::tuple<uint32_t, StrId, bool, bool>;  // src, tensor, ambiguous, tail
  std::vector<ArrowEdges> arrows_of(n_tasks);
  // Per task that keeps StepNodes, per step: the push whose consumer ended last (by the step's
  // end, within a 5% slack for clocks of different hosts); done == 0: none.
  std::vector<std::vector<GraphEdge>> last_push(n_tasks);
  for (uint32_t t = 0; t < n_tasks; ++t) {
    if (c.tasks[t].kind != JobKind::kPs) last_push[t].resize(c.TaskSteps(t).size());
  }
  for (uint32_t t = 0; t < n_tasks; ++t) {
    arrows_of[t] = ArrowConsumers(c, devices_of[t], std::move(flows_into[t]));
    // 1. Every op's edges once (an op may lie in two steps' ranges): the pushes.
    cf::StepInputs seen;
    for (uint32_t d : devices_of[t]) {
      seen.Reset();
      c.ops.ForEach(c.device_ops[d].first, c.device_ops[d].second,
                    [&](const OpRow& op, uint32_t idx) {
                      scratch.clear();
                      OpEdges(x, t, arrows_of[t], op, idx, &scratch, &seen);
                      for (const GraphEdge& e : scratch) {
                        if (!e.ambiguous()) NotePush(c, e, op.end(), &last_push[e.src_task]);
                      }
                    });
    }
  }
  for (uint32_t t = 0; t < n_tasks; ++t) {
    const std::vector<uint32_t>& devs = devices_of[t];
    const ArrowEdges& arrows = arrows_of[t];
    // 2. Steps, their gaps and what ended each, from the devices' ops merged in (start, index)
    // order; only the median step's waits and their edges are kept.
    const StepRange range = c.TaskSteps(t);
    const uint32_t n_steps = static_cast<uint32_t>(range.size());
    // A PS's steps are per request (hundreds of thousands in a long capture) and interleave:
    // they keep no StepNode (72 bytes each), only the task's WaitCauses.
    const bool nodes = c.tasks[t].kind != JobKind::kPs;
    // The median step among those that are no warm-up (analyzers/task_stats.h WarmupSteps): a
    // warm-up step, left out, sorts last.
    const std::vector<bool> warmup = nodes ? WarmupSteps(c, t) : std::vector<bool>();
    uint32_t n_warm = 0;
    for (bool w : warmup) n_warm += w;
    const uint32_t median =
        n_steps == 0 || !nodes ? kNoIndex : MedianIndex(n_steps - n_warm, n_steps, [&](uint32_t i) {
          return warmup[i] ? INT64_MAX : range[i].end - range[i].start;
        });
    std::vector<DeviceCursor> low, walk;
    for (uint32_t d : devs) {
      low.emplace_back(c.ops, c.device_ops[d]);
      walk.emplace_back(c.ops, c.device_ops[d]);
    }
    std::map<Key, WaitCause> causes;
    kept.clear();
    const uint32_t waits_base = static_cast<uint32_t>(g.waits_.size());
    g.task_steps_[t].first = static_cast<uint32_t>(g.steps_.size());
    if (median != kNoIndex) g.median_step_[t] = g.task_steps_[t].first + median;
    for (uint32_t si = 0; si < n_steps; ++si) {
      const StepRow& sr = range[si];
      StepNode node;
      node.task = t;
      node.index = si;
      node.start = sr.start;
      node.end = sr.end;
      node.waits_begin = static_cast<uint32_t>(g.waits_.size());
      const bool keep = si == median;
      const uint32_t step_id = static_cast<uint32_t>(g.steps_.size());
      for (size_t k = 0; k < devs.size(); ++k) {
        const OpRow* row;
        uint32_t idx;
        while (low[k].Peek(&row, &idx) && row->start < sr.start) low[k].Pop();
        walk[k].Seek(low[k].Index());
      }
      u_in.Clear();
      u_wait.Clear();
      u_sync.Clear();
      TimeNs cursor = sr.start;
      gap_recvs.clear();
      step_in.clear();
      step_recv.clear();
      TimeNs gap_input_end = 0;  // the latest end of an input op started since the last compute
      step_edges.clear();
      auto add_wait = [&](TimeNs a, TimeNs b, const GraphEdge* edge, bool tail) {
        StepWait w;
        w.step = step_id;
        w.start = a;
        w.end = b;
        w.input_ns = u_in.Overlap(a, b);
        w.sync_ns = std::min(u_sync.Overlap(a, b), (b - a) - w.input_ns);
        w.recv_ns = std::max<TimeNs>(0, u_wait.Overlap(a, b) - w.input_ns - w.sync_ns);
        w.idle_ns = (b - a) - w.input_ns - w.sync_ns - w.recv_ns;
        w.step_tail = tail;
        node.input_ns += w.input_ns;
        node.recv_ns += w.recv_ns;
        node.sync_ns += w.sync_ns;
        node.idle_ns += w.idle_ns;
        // A push's cause is the task it went to (whose apply the tail waited for).
        const uint32_t cause_task = edge == nullptr ? kNoIndex
                                    : edge->push    ? edge->dst_task
                                                    : edge->src_task;
        const Key key{cause_task, edge ? edge->tensor : 0, edge ? edge->ambiguous() : false, tail};
        WaitCause& cause = causes[key];
        cause.task = t;
        cause.src_task = std::get<0>(key);
        cause.tensor = std::get<1>(key);
        cause.ambiguous = std::get<2>(key);
        cause.step_tail = tail;
        if (edge != nullptr) {
          cause.candidates = std::max(cause.candidates, edge->candidates);
          cause.sent_offset_ns += edge->sent - sr.start;  // summed; divided below
        }
        cause.wait_ns += w.recv_ns + w.idle_ns;
        cause.input_ns += w.input_ns;
        cause.sync_ns += w.sync_ns;
        ++cause.waits;
        if (!keep) return;
        if (edge != nullptr) {
          w.edge = static_cast<uint32_t>(kept.size());  // renumbered below
          kept.push_back(*edge);
        }
        g.waits_.push_back(w);
      };
      // The ops starting in [start, end) in (start, index) order, a group of equal starts at a
      // time.
      while (true) {
        group.clear();
        for (;;) {
          size_t best = devs.size();
          const OpRow* best_row = nullptr;
          uint32_t best_idx = 0;
          for (size_t k = 0; k < devs.size(); ++k) {
            const OpRow* row;
            uint32_t idx;
            if (!walk[k].Peek(&row, &idx) || row->start >= sr.end) continue;
            if (best_row == nullptr ||
                std::tie(row->start, idx) < std::tie(best_row->start, best_idx)) {
              best = k, best_row = row, best_idx = idx;
            }
          }
          if (best_row == nullptr || (!group.empty() && best_row->start != group[0].start)) break;
          if (x.node_cls[best_row->node] == kBackground) {
            walk[best].Pop();
            continue;
          }
          group.push_back(
              {best_row->start, best_row->end(), best_idx, x.node_cls[best_row->node], *best_row});
          walk[best].Pop();
        }
        if (group.empty()) break;
        const TimeNs at = group[0].start;
        bool compute = false;
        for (const WalkOp& o : group) compute |= o.cls == kCompute;
        if (keep) {  // the median step's inputs, for StepWait::last_sent
          for (const WalkOp& o : group) {
            if (o.cls == kCompute) OpEdges(x, t, arrows, o.row, o.idx, &step_edges, nullptr);
          }
        }
        for (const WalkOp& o : group) {  // receives whose own op is a transfer's end (TF2 keys)
          if (o.cls == kRecv) gap_recvs.push_back(o);
          if (o.cls == kInput) gap_input_end = std::max(gap_input_end, o.end);
        }
        if (compute && at > cursor) {
          // Of the edges into the compute ops starting here, the one sent last; without any,
          // the gap's receives are resolved only then (below).
          scratch.clear();
          for (const WalkOp& o : group) {
            if (o.cls == kCompute) OpEdges(x, t, arrows, o.row, o.idx, &scratch, nullptr);
          }
          const GraphEdge* last = nullptr;
          for (const GraphEdge& e : scratch) {
            if (last == nullptr || e.sent >= last->sent) last = &e;
          }
          if (scratch.empty()) {
            // No op inputs (TF2): the gap's receive that arrived last ended it, whatever was sent
            // last (a small tensor sent after a large one arrives first). Ties: sent last.
            size_t pick = 0;
            TimeNs arrived = 0;
            for (const WalkOp& o : gap_recvs) {
              const size_t before = scratch.size();
              OpEdges(x, t, arrows, o.row, o.idx, &scratch, nullptr);
              for (size_t i = before; i < scratch.size(); ++i) {
                if (i == 0 || o.end > arrived ||
                    (o.end == arrived && scratch[i].sent >= scratch[pick].sent)) {
                  pick = i;
                  arrived = o.end;
                }
              }
            }
            // An input op (IteratorGetNext) that ended after that receive arrived ended the gap
            // itself: the op at the gap's end waited for its batch, a local tensor (as a TF1
            // timeline's inputs say), not for the transfer.
            if (!scratch.empty() && arrived >= gap_input_end) last = &scratch[pick];
          }
          add_wait(cursor, at, last, false);
        }
        if (compute) {
          gap_recvs.clear();
          gap_input_end = 0;
        }
        for (const WalkOp& o : group) {
          const TimeNs end = std::min(o.end, sr.end);
          if (keep && (o.cls == kInput || o.cls == kRecv)) {
            (o.cls == kInput ? step_in : step_recv).push_back({o.start, end});
          }
          if (o.cls != kCompute) {
            u_wait.Add(o.start, end);
            if (o.cls == kInput) u_in.Add(o.start, end);
            if (o.cls == kSync) u_sync.Add(o.start, end);
          } else if (end > cursor) {
            node.compute_ns += end - std::max(cursor, o.start);
            cursor = end;
          }
        }
      }
      if (cursor < sr.end) {
        // The step's tail: what the task pushed last, when its consumer ended inside the tail.
        const GraphEdge* push =
            nodes && last_push[t][si].done > cursor ? &last_push[t][si] : nullptr;
        add_wait(cursor, sr.end, push, true);
      }
      node.waits_end = static_cast<uint32_t>(g.waits_.size());
      node.waits_kept = keep;
      if (keep) g.beside_[t] = PullBesideInput(step_in, step_recv, step_edges, t);
      for (uint32_t w = node.waits_begin; w < node.waits_end; ++w) {
        StepWait& sw = g.waits_[w];
        if (sw.edge == kNoIndex || kept[sw.edge].push || kept[sw.edge].ambiguous()) continue;
        sw.last_sent = kept[sw.edge].sent;
        for (const GraphEdge& e : step_edges) {
          if (e.src_task == kept[sw.edge].src_task && !e.ambiguous() && e.sent <= sw.end) {
            sw.last_sent = std::max(sw.last_sent, e.sent);
          }
        }
      }
      if (nodes) g.steps_.push_back(node);
    }
    g.task_steps_[t].second = static_cast<uint32_t>(g.steps_.size());
    // The kept edges in (dst_op, sent) order, the waits renumbered to them.
    std::vector<uint32_t> order(kept.size());
    for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      return std::tie(kept[a].dst_op, kept[a].sent, a) < std::tie(kept[b].dst_op, kept[b].sent, b);
    });
    std::vector<uint32_t> where(kept.size());
    for (uint32_t i = 0; i < order.size(); ++i) {
      where[order[i]] = static_cast<uint32_t>(g.edges_.size());
      g.edges_.push_back(kept[order[i]]);
    }
    for (uint32_t w = waits_base; w < g.waits_.size(); ++w) {
      if (g.waits_[w].edge != kNoIndex) g.waits_[w].edge = where[g.waits_[w].edge];
    }
    // What the task waits for, biggest receive + idle time first.
    std::vector<WaitCause>& out = g.causes_[t];
    for (auto& [k, cause] : causes) {
      if (cause.waits > 0) cause.sent_offset_ns /= cause.waits;
      out.push_back(cause);
    }
    std::stable_sort(out.begin(), out.end(),
                     [](const WaitCause& a, const WaitCause& b) { return a.wait_ns > b.wait_ns; });
  }
  return g;
}

std::pair<uint32_t, uint32_t> StepGraph::TaskSteps(uint32_t task) const {
  return task < task_steps_.size() ? task_steps_[task] : std::pair<uint32_t, uint32_t>{0, 0};
}

std::vector<PathSegment> StepGraph::Segments(uint32_t step) const {
  std::vector<PathSegment> out;
  if (step >= steps_.size()) return out;
  const StepNode& n = steps_[step];
  if (!n.waits_kept) return out;
  TimeNs at = n.start;
  for (uint32_t w = n.waits_begin; w < n.waits_end; ++w) {
    const StepWait& x = waits_[w];
    if (x.start > at) out.push_back({at, x.start, false, kNoIndex, false, 0, 0});
    out.push_back({x.start, x.end, true, x.edge, x.step_tail, x.input_ns, x.sync_ns});
    at = x.end;
  }
  if (at < n.end) out.push_back({at, n.end, false, kNoIndex, false, 0, 0});
  return out;
}

uint32_t StepGraph::MedianStep(uint32_t task) const {
  return task < median_step_.size() ? median_step_[task] : kNoIndex;
}

PullBeside StepGraph::MedianPullBeside(uint32_t task) const {
  return task < beside_.size() ? beside_[task] : PullBeside{};
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
