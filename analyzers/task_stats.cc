#include "analyzers/task_stats.h"

#include <algorithm>
#include <unordered_map>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "analyzers/capture_queries.h"
#include "analyzers/op_names.h"
#include "core/median.h"
#include "core/saturating.h"

namespace tfdiag {

namespace {

// The median of `v` (reordered in place: no copy, a PS may run millions of steps).
TimeNs Median(std::vector<TimeNs>* v) { return MedianInPlace(v); }

// Calls fn(const OpRow&) for the ops of `devices`, device by device, in start order.
template <typename Fn>
void ForEachOpOn(const Capture& c, const std::vector<uint32_t>& devices, Fn fn) {
  for (uint32_t d : devices) c.ops.ForEach(c.device_ops[d].first, c.device_ops[d].second, fn);
}

// A TemporaryVariable (grappler's and the optimizers' "<scope>/tmp_var") is scratch memory of
// one op, no variable of the model.
bool IsTemporaryVariable(std::string_view type, std::string_view name) {
  return type == "TemporaryVariable" || name == "tmp_var" ||
         (name.size() > 8 && name.substr(name.size() - 8) == "/tmp_var");
}

// The names of the nodes whose cross-task edges carry no tensor (IsControlOnlyOpType: an
// apply's or an accumulator's edge to a worker is a control input of its train_op), so an
// unsized edge of theirs leaves a task's bytes known. Each distinct node once.
absl::flat_hash_set<StrId> ControlOnlyProducers(const Capture& c) {
  absl::flat_hash_set<StrId> names;
  StringTest control(c, IsControlOnlyOpType);
  for (const NodeRow& n : c.nodes) {
    if (control(n.type)) names.insert(n.name);
  }
  return names;
}

// An edge whose size is unknown and matters: not a control-only node's (ControlOnlyProducers).
bool UnsizedTransfer(const EdgeRow& e, const absl::flat_hash_set<StrId>& control_only) {
  return e.bytes < 0 && !control_only.contains(e.tensor);
}

void ComputeVariables(const Capture& c, const std::vector<uint32_t>& devices, bool recv_waits,
                      const absl::flat_hash_set<StrId>& control_only, TaskStats* s) {
  // Variables hosted on the task, in name order so that slot variables follow their primary.
  // Each node of the task once (a node runs every step).
  absl::flat_hash_set<uint32_t> seen;
  std::vector<std::string_view> names;
  std::vector<uint32_t> task_nodes;
  ForEachOpOn(c, devices, [&](const OpRow& op) {
    if (seen.insert(op.node).second) task_nodes.push_back(op.node);
  });
  for (const uint32_t id : task_nodes) {
    const NodeRow& node_row = c.nodes[id];
    const std::string_view type = c.Str(node_row.type);
    const std::string_view nm = c.Str(node_row.name);
    if (IsTemporaryVariable(type, nm)) continue;
    if (IsVariableOpType(type)) {
      names.push_back(nm);
    } else if (node_row.inputs_count > 0 && (IsVariableUseOpType(type) || IsGatherOpType(type))) {
      // A variable known only through its uses (no VarHandleOp/VariableV2 ran in the traced
      // steps): the op's first input is the variable (a resource handle or a ref; for a TF1
      // Gather, "<var>/read"), unless it came from another device (a partition Recv, "_S<N>").
      const std::string_view in0 = c.Str(c.inputs[node_row.inputs_begin]);
      if (IsPartitionInput(in0) || (!in0.empty() && in0[0] == '^')) continue;
      const std::string_view node = InputNode(in0);
      const std::string_view var = StripRead(node);
      if (var.empty() || (!IsVariableUseOpType(type) && var == node)) continue;
      names.push_back(var);
    }
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  // TF2 profiles record no inputs: a variable read, gathered, assigned or updated by an op is
  // named by the op's scope (Tf2VariableOfOp), unless a variable named above already holds it.
  std::vector<std::pair<std::string_view, std::string_view>> scoped_ops;  // (op, variable)
  absl::flat_hash_set<std::string_view> scoped;
  {
    std::vector<std::pair<std::string_view, std::string_view>> updates;  // numbered updates
    bool reads = false;
    auto named = [&](std::string_view n) {
      return std::binary_search(names.begin(), names.end(), n);
    };
    for (const uint32_t id : task_nodes) {
      const NodeRow& node_row = c.nodes[id];
      const std::string_view type = c.Str(node_row.type);
      const std::string_view nm = c.Str(node_row.name);
      if (node_row.inputs_count > 0 || IsVariableOpType(type) || IsTemporaryVariable(type, nm)) {
        continue;
      }
      bool numbered = false;
      const std::string_view var = Tf2VariableOfOp(nm, type, &numbered);
      if (var.empty() || named(var)) continue;
      bool held = false;
      for (size_t at = nm.find('/'); !held && at != std::string_view::npos;
           at = nm.find('/', at + 1)) {
        held = named(nm.substr(0, at));
      }
      if (held) continue;
      (numbered ? updates : scoped_ops).emplace_back(nm, var);
      reads |= type == "ReadVariableOp" || IsGatherOpType(type);
    }
    // A function's numbered optimizer updates name no variable (the reads do, and the two cannot
    // be paired): listed only when no read or variable op names one (a GPU run's rows, its reads
    // unrecorded).
    if (!reads && names.empty())
      scoped_ops.insert(scoped_ops.end(), updates.begin(), updates.end());
    for (const auto& [op, var] : scoped_ops) {
      if (scoped.insert(var).second) names.push_back(var);
    }
    std::sort(names.begin(), names.end());
  }
  std::unordered_map<std::string_view, size_t> var_of;  // variable or read name -> row
  std::vector<std::string> read_names;
  read_names.reserve(names.size());
  for (std::string_view n : names) {
    size_t row = s->variables.size();
    // A slot variable "<var>/Adam" (or any "<var>/...") counts for its primary "<var>"; not so
    // the scopes of TF2 reads ("norm/batchnorm" and "norm/batchnorm/mul" read two variables).
    for (size_t k = 0; k < s->variables.size() && scoped.count(n) == 0; ++k) {
      const std::string& p = s->variables[k].name;
      if (scoped.count(p) > 0) continue;
      if (n.size() > p.size() && n.compare(0, p.size(), p) == 0 && n[p.size()] == '/') {
        row = k;
        break;
      }
    }
    if (row == s->variables.size()) s->variables.push_back(VariableLoad{std::string(n)});
    var_of.emplace(n, row);
    read_names.push_back(std::string(n) + "/read");
  }
  for (size_t k = 0; k < names.size(); ++k) var_of.emplace(read_names[k], var_of[names[k]]);
  for (const auto& [op, var] : scoped_ops) var_of.emplace(op, var_of[var]);
  if (s->variables.empty()) return;

  // The row of an op name, or of an input's node, looked up once per distinct string id.
  constexpr size_t kNoRow = SIZE_MAX;
  absl::flat_hash_map<StrId, size_t> row_of_name, row_of_input;
  auto name_row = [&](StrId id) {
    auto [it, added] = row_of_name.try_emplace(id, kNoRow);
    if (added) {
      auto v = var_of.find(c.Str(id));
      if (v == var_of.end()) v = var_of.find(StripReplicaScope(c.Str(id)));
      if (v != var_of.end()) it->second = v->second;
    }
    return it->second;
  };
  auto input_row = [&](StrId id) {
    auto [it, added] = row_of_input.try_emplace(id, kNoRow);
    if (added) {
      auto v = var_of.find(InputNode(c.Str(id)));
      if (v != var_of.end()) it->second = v->second;
    }
    return it->second;
  };
  // Ops whose inputs the profile does not record (an XSpace's "<node>:<type>" events), by their
  // name scopes as TF builds them (issue 35): "<var>/..." (reads, assigns, slots), an
  // optimizer's ".../update_<var>/<Apply>", else the one variable of the op's own scope
  // ("embedding/embedding_lookup" for "embedding/embedding_weights" alone in "embedding").
  constexpr size_t kSeveral = SIZE_MAX - 1;
  std::unordered_map<std::string_view, size_t> scope_of;  // parent scope -> row, or kSeveral
  for (const auto& [n, row] : var_of) {
    const size_t slash = n.rfind('/');
    if (slash == std::string_view::npos || n.substr(slash) == "/read") continue;
    auto [it, added] = scope_of.try_emplace(n.substr(0, slash), row);
    if (!added && it->second != row) it->second = kSeveral;
  }
  absl::flat_hash_map<StrId, size_t> row_of_scope;
  auto scope_row = [&](StrId id) {
    auto [it, added] = row_of_scope.try_emplace(id, kNoRow);
    if (!added) return it->second;
    const std::string_view name = StripReplicaScope(c.Str(id));
    for (size_t at = name.find('/'); at != std::string_view::npos; at = name.find('/', at + 1)) {
      auto v = var_of.find(name.substr(0, at));  // "<var>/..."
      if (v != var_of.end()) return it->second = v->second;
    }
    const size_t upd = name.find("update_");
    if (upd != std::string_view::npos && (upd == 0 || name[upd - 1] == '/')) {
      const std::string_view rest = name.substr(upd + 7);
      const size_t end = rest.rfind('/');
      auto v = end == std::string_view::npos ? var_of.end() : var_of.find(rest.substr(0, end));
      if (v != var_of.end()) return it->second = v->second;
    }
    const size_t slash = name.rfind('/');
    if (slash == std::string_view::npos) return it->second;
    auto sc = scope_of.find(name.substr(0, slash));
    if (sc != scope_of.end() && sc->second != kSeveral) it->second = sc->second;
    return it->second;
  };
  TimeNs total = 0;
  absl::flat_hash_map<StrId, bool> waits;        // receives: no work of the task's (IsRecvOpType)
  absl::flat_hash_map<StrId, size_t> row_of_op;  // each op name's variable, as its time went
  absl::flat_hash_map<StrId, bool> sparse_type;  // op types that read or update by rows
  ForEachOpOn(c, devices, [&](const OpRow& op) {
    auto [w, added] = waits.try_emplace(c.OpType(op), false);
    if (added) w->second = recv_waits && IsRecvOpType(c.Str(c.OpType(op)));
    if (w->second) return;
    SatAccumulate(&total, op.dur());
    const NodeRow& node = c.Node(op);
    size_t row = name_row(node.name);
    for (uint32_t k = 0; k < node.inputs_count && row == kNoRow; ++k) {
      row = input_row(c.inputs[node.inputs_begin + k]);
    }
    if (row == kNoRow && node.inputs_count == 0) row = scope_row(node.name);
    if (row == kNoRow) return;
    row_of_op.try_emplace(node.name, row);
    VariableLoad& v = s->variables[row];
    ++v.ops;
    SatAccumulate(&v.total_ns, op.dur());
    if (!v.sparse) {
      auto [sp, added] = sparse_type.try_emplace(c.OpType(op), false);
      if (added) {
        const std::string_view type = c.Str(c.OpType(op));
        // Rows read or updated: gathers, sparse applies, and the scatter updates TF1's SGD and
        // Adam (optimizer.py's _apply_sparse) and Keras optimizers give a table.
        sp->second = IsGatherOpType(type) || IsSparseApplyOpType(type) ||
                     type.rfind("Scatter", 0) == 0 || type.rfind("ResourceScatter", 0) == 0;
      }
      v.sparse = sp->second;
    }
  });
  std::unordered_map<std::string_view, int64_t> bytes;
  for (const TensorRow& t : c.tensors) {
    if (c.devices[t.device].task == s->task) bytes[c.Str(t.name)] = t.bytes;
  }
  for (VariableLoad& v : s->variables) {
    v.share = total > 0 ? static_cast<double>(v.total_ns) / static_cast<double>(total) : 0;
    auto b = bytes.find(v.name);
    if (b == bytes.end()) b = bytes.find(v.name + "/read");
    if (b != bytes.end()) v.bytes = b->second;
  }
  // Each variable's share of what the task sends: the sized tensors its ops produced (the edge's
  // producer, its output slot dropped): the variable the producer op's time went to (by its name,
  // inputs or scope, as above), else the producer's name or scope alone.
  std::vector<int64_t> sent(s->variables.size(), 0);
  bool sized = true;
  for (const EdgeRow& e : c.edges) {
    if (e.src_task != s->task) continue;
    if (UnsizedTransfer(e, control_only)) {
      sized = false;
      break;
    }
    if (e.bytes < 0) continue;  // a control edge
    std::string_view producer = c.Str(e.tensor);
    const size_t colon = producer.rfind(':');
    if (colon != std::string_view::npos) producer = producer.substr(0, colon);
    // The producer is a node of the capture, so its name (slot dropped) is interned.
    const StrId id = c.strings.Find(producer);
    size_t row = kNoRow;
    if (id != StringPool::kNotFound) {
      auto op = row_of_op.find(id);
      row = op != row_of_op.end() ? op->second : name_row(id);
    }
    if (row == kNoRow) row = scope_row(e.tensor);
    if (row < sent.size()) SatAccumulate(&sent[row], e.bytes);
  }
  for (size_t k = 0; k < sent.size() && sized; ++k) s->variables[k].out_bytes = sent[k];
  std::stable_sort(
      s->variables.begin(), s->variables.end(),
      [](const VariableLoad& a, const VariableLoad& b) { return a.total_ns > b.total_ns; });
}

}  // namespace

namespace {

// The length of the union of intervals fed in start order.
class SortedUnion {
 public:
  void Add(TimeNs s, TimeNs e) {
    if (!open_ || s > cur_e_) {
      if (open_) SatAccumulate(&total_, SatSub(cur_e_, cur_s_));
      cur_s_ = s, cur_e_ = e, open_ = true;
    } else {
      cur_e_ = std::max(cur_e_, e);
    }
  }
  TimeNs Total() const { return open_ ? SatAdd(total_, SatSub(cur_e_, cur_s_)) : total_; }

 private:
  TimeNs total_ = 0, cur_s_ = 0, cur_e_ = 0;
  bool open_ = false;
};

}  // namespace

std::vector<bool> WarmupSteps(const Capture& c, uint32_t task) {
  const StepRange steps = c.TaskSteps(task);
  std::vector<bool> out(steps.size(), false);
  // The first step of each capture.
  std::vector<size_t> firsts;
  for (size_t i = 0; i < steps.size(); ++i) {
    bool first = i == 0;
    for (size_t k = 1; !first && k < c.captures.size(); ++k) {
      first = steps[i - 1].start < c.captures[k].start && steps[i].start >= c.captures[k].start;
    }
    if (first) firsts.push_back(i);
  }
  if (steps.size() < firsts.size() + 2) return out;
  std::vector<TimeNs> rest;
  for (size_t i = 0, f = 0; i < steps.size(); ++i) {
    if (f < firsts.size() && firsts[f] == i) {
      ++f;
      continue;
    }
    rest.push_back(SatSub(steps[i].end, steps[i].start));
  }
  const TimeNs median = MedianInPlace(&rest);
  for (size_t i : firsts) {
    out[i] = median > 0 && SatSub(steps[i].end, steps[i].start) / 3 > median;
  }
  return out;
}

TimeNs UnionLength(std::vector<std::pair<TimeNs, TimeNs>>* iv) {
  std::sort(iv->begin(), iv->end());
  SortedUnion u;
  for (const auto& [s, e] : *iv) u.Add(s, e);
  return u.Total();
}

TimeNs UnionLengthOfDevice(const Capture& c, uint32_t device) {
  SortedUnion u;
  c.ops.ForEach(c.device_ops[device].first, c.device_ops[device].second,
                [&](const OpRow& op) { u.Add(op.start, op.end()); });
  return u.Total();
}

const TaskStats* TaskStatsTable::Find(std::string_view label) const {
  for (const TaskStats& t : tasks) {
    if (t.label == label) return &t;
  }
  return nullptr;
}

TaskStatsTable ComputeTaskStats(const Capture& c, int threads) {
  TaskStatsTable table;
  table.span_ns = c.CapturedNs();  // separate captures: the time captured, not the gaps
  const StrId recv = c.strings.Find("RecvTensor");
  std::vector<std::vector<uint32_t>> task_devices(c.tasks.size());
  for (uint32_t d = 0; d < c.devices.size(); ++d) task_devices[c.devices[d].task].push_back(d);

  // One task per iteration, on up to `threads` threads; the table-wide sums follow in order.
  table.tasks.resize(c.tasks.size());
  const bool no_ps = c.CountTasks(JobKind::kPs) == 0;
  const absl::flat_hash_set<StrId> control_only = ControlOnlyProducers(c);
  const int n_tasks = static_cast<int>(c.tasks.size());
#pragma omp parallel for schedule(dynamic) num_threads(std::max(1, threads)) if (threads > 1)
  for (int ti = 0; ti < n_tasks; ++ti) {
    const uint32_t t = static_cast<uint32_t>(ti);
    TaskStats s;
    s.task = t;
    s.label = std::string(c.TaskLabelOf(t));
    s.kind = c.tasks[t].kind;
    // Devices as XProf counts them: a GPU once, not once per CUDA stream or memcpy row it has
    // (DeviceRow::sub).
    {
      std::vector<std::pair<StrId, int32_t>> seen;
      for (uint32_t d : task_devices[t]) seen.emplace_back(c.devices[d].type, c.devices[d].index);
      std::sort(seen.begin(), seen.end());
      s.devices = static_cast<int>(std::unique(seen.begin(), seen.end()) - seen.begin());
    }
    s.device_ids = task_devices[t];
    // Intervals only when the task has several devices
    // (one device's ops are already in start order: its union is one pass, no copy).
    // Variables are listed for PS tasks, and for every task of a job without PS (synchronous
    // data-parallel jobs keep them on a worker, which then serves the others).
    const bool ps = s.kind == JobKind::kPs || no_ps;
    const bool one_device = task_devices[t].size() == 1;
    std::vector<std::pair<TimeNs, TimeNs>> iv;
    // Op types by string id, indexed directly (ids are dense): this thread's slot of each type
    // seen in this task, -1 for none; reset for the types touched before the next task.
    thread_local std::vector<int32_t> slot_of_type;
    if (slot_of_type.size() < c.strings.size()) slot_of_type.resize(c.strings.size(), -1);
    std::vector<StrId> types;
    std::vector<OpTypeTime> type_time;
    std::vector<bool> type_waits;  // per slot: a receive left out of a PS's busy and op time
    std::vector<std::pair<TimeNs, TimeNs>> recv_iv;  // a PS's receives
    TimeNs recv_sum = 0;
    SortedUnion busy;
    s.first_ns = INT64_MAX;
    s.last_ns = INT64_MIN;
    for (uint32_t d : task_devices[t]) {
      s.ops += c.device_ops[d].second - c.device_ops[d].first;
      c.ops.ForEach(c.device_ops[d].first, c.device_ops[d].second, [&](const OpRow& op) {
        s.first_ns = std::min(s.first_ns, op.start);
        s.last_ns = std::max(s.last_ns, op.end());
        const StrId type = c.OpType(op);
        int32_t& k = slot_of_type[type];
        if (k < 0) {
          k = static_cast<int32_t>(types.size());
          types.push_back(type);
          type_time.emplace_back();
          type_waits.push_back(s.kind == JobKind::kPs && IsRecvOpType(c.Str(type)));
        }
        // A PS's receives (the gradients arriving over its NIC) are no work of its own: a PS
        // with seconds of RecvTensor and little op time is not busy (IsRecvOpType).
        if (type_waits[static_cast<size_t>(k)]) {
          recv_iv.emplace_back(op.start, op.end());
          SatAccumulate(&recv_sum, op.dur());
        } else {
          if (one_device) {
            busy.Add(op.start, op.end());  // in start order
          } else {
            iv.emplace_back(op.start, op.end());
          }
          SatAccumulate(&s.op_time_ns, op.dur());
        }
        OpTypeTime& bt = type_time[static_cast<size_t>(k)];
        ++bt.count;
        SatAccumulate(&bt.total_ns, op.dur());
        if (type == recv) {
          ++s.recv_count;
          SatAccumulate(&s.recv_ns, op.dur());
        }
      });
    }
    if (s.ops == 0) s.first_ns = s.last_ns = 0;
    s.busy_ns = one_device ? busy.Total() : UnionLength(&iv);
    // Over the time of the captures the task ran in (separate sessions of other tasks, or of
    // this host at other times, are no time it could have been busy in).
    TimeNs own_span = table.span_ns;
    if (c.captures.size() > 1 && s.ops > 0) {
      std::vector<uint8_t> in(c.captures.size(), 0);
      for (uint32_t d : task_devices[t]) {
        c.ops.ForEach(c.device_ops[d].first, c.device_ops[d].second, [&](const OpRow& op) {
          auto it = std::upper_bound(c.captures.begin(), c.captures.end(), op.start,
                                     [](TimeNs x, const CaptureRange& r) { return x < r.start; });
          if (it != c.captures.begin()) in[static_cast<size_t>(it - c.captures.begin() - 1)] = 1;
        });
      }
      own_span = 0;
      for (size_t k = 0; k < in.size(); ++k) {
        if (in[k]) SatAccumulate(&own_span, SatSub(c.captures[k].end, c.captures[k].start));
      }
    }
    s.busy_pct = own_span > 0 ? 100.0 * s.busy_ns / own_span : 0;
    s.recv_busy_ns = UnionLength(&recv_iv);
    s.recv_busy_pct = own_span > 0 ? 100.0 * s.recv_busy_ns / own_span : 0;
    // Whether the receives held the PS's threads: a receive that holds one (a simulator that
    // serves it as an op) never runs beside the PS's ops on one thread, while one on the link
    // overlaps them about as often as chance (R x B / span). Where the ops overlap the receives
    // under half as often as chance, the receives are counted as work as before (busy, op time
    // and variable shares; recv_busy 0: the replay serves them as ops).
    bool recv_work = false;
    if (!recv_iv.empty() && own_span > 0) {
      const TimeNs ops_u = s.busy_ns;  // the union of its other ops
      // Its ops beside its receives, gathered again only for a PS that has receives.
      std::vector<std::pair<TimeNs, TimeNs>> all = std::move(recv_iv);
      for (uint32_t d : task_devices[t]) {
        c.ops.ForEach(c.device_ops[d].first, c.device_ops[d].second, [&](const OpRow& op) {
          if (!type_waits[static_cast<size_t>(slot_of_type[c.OpType(op)])]) {
            all.emplace_back(op.start, op.end());
          }
        });
      }
      const double overlap = double(ops_u) + double(s.recv_busy_ns) - double(UnionLength(&all));
      const double chance = double(ops_u) * double(s.recv_busy_ns) / double(own_span);
      recv_work = overlap < 0.5 * chance;
      if (recv_work) {
        s.busy_ns = UnionLength(&all);
        s.busy_pct = 100.0 * s.busy_ns / own_span;
        SatAccumulate(&s.op_time_ns, recv_sum);
        s.recv_busy_ns = 0;
        s.recv_busy_pct = 0;
      }
    }
    for (size_t k = 0; k < types.size(); ++k) {
      type_time[k].type = std::string(c.Str(types[k]));
      s.by_type.push_back(std::move(type_time[k]));
      slot_of_type[types[k]] = -1;
    }
    std::sort(s.by_type.begin(), s.by_type.end(), [](const OpTypeTime& a, const OpTypeTime& b) {
      return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.type < b.type;
    });
    const StepRange steps = c.TaskSteps(t);
    const std::vector<bool> warmup = WarmupSteps(c, t);
    std::vector<TimeNs> step_lengths;
    step_lengths.reserve(steps.size());
    for (size_t i = 0; i < steps.size(); ++i) {
      const TimeNs len = SatSub(steps[i].end, steps[i].start);
      if (warmup[i]) {
        ++s.warmup_steps;
        s.warmup_ns = std::max(s.warmup_ns, len);
      } else {
        step_lengths.push_back(len);
      }
    }
    s.steps = static_cast<int64_t>(step_lengths.size());
    if (!step_lengths.empty()) {
      TimeNs sum = 0;
      for (TimeNs l : step_lengths) SatAccumulate(&sum, l);
      s.step_mean_ns = sum / static_cast<TimeNs>(step_lengths.size());
      s.step_median_ns = Median(&step_lengths);
    }
    if (ps) {
      ComputeVariables(c, task_devices[t], s.kind == JobKind::kPs && !recv_work, control_only, &s);
    }
    bool out_sized = true, in_sized = true, out_sized_beside_control = true;
    int64_t bout = 0, bin = 0;
    for (const EdgeRow& e : c.edges) {
      if (e.src_task == t) {
        SatAccumulate(&s.edges_out, e.count);
        ++s.tensors_out;
        if (e.bytes >= 0) {
          SatAccumulate(&bout, e.bytes);
        } else {
          out_sized = false;
          if (UnsizedTransfer(e, control_only)) out_sized_beside_control = false;
        }
      }
      if (e.dst_task == t) {
        SatAccumulate(&s.edges_in, e.count);
        if (e.bytes < 0)
          in_sized = false;
        else
          SatAccumulate(&bin, e.bytes);
      }
    }
    if (s.edges_out > 0 && out_sized) s.bytes_out = bout;
    if (s.edges_out > 0 && out_sized_beside_control) s.bytes_out_beside_control = bout;
    if (s.edges_in > 0 && in_sized) s.bytes_in = bin;
    table.tasks[t] = std::move(s);
  }
  for (const TaskStats& s : table.tasks) {
    if (s.kind == JobKind::kPs) {
      ++table.num_ps;
      SatAccumulate(&table.ps_busy_total_ns, s.busy_ns);
    } else if (s.kind == JobKind::kWorker || s.kind == JobKind::kChief ||
               s.kind == JobKind::kMaster) {
      ++table.num_workers;
    }
  }
  for (TaskStats& s : table.tasks) {
    if (s.kind == JobKind::kPs && table.ps_busy_total_ns > 0) {
      s.ps_share = static_cast<double>(s.busy_ns) / static_cast<double>(table.ps_busy_total_ns);
    }
  }
  return table;
}

}  // namespace tfdiag
