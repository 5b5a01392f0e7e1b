#include "core/capture_builder.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <tuple>
#include <unordered_map>

namespace tfdiag {

namespace {

// Sorts [first, last) by `less`. A device's ops come nearly in order (a trace lists them by time,
// give or take nested ops that start together): insertion sort costs one pass plus the
// displacements; past a budget of 8 moves per element it hands over to std::sort.
template <typename It, typename Less>
void SortNearlySorted(It first, It last, Less less) {
  const auto n = last - first;
  auto budget = 8 * n;
  for (It i = first + (n > 0 ? 1 : 0); i < last; ++i) {
    if (!less(*i, *(i - 1))) continue;
    auto v = *i;
    It j = i;
    do {
      *j = *(j - 1);
      --j;
      --budget;
    } while (j != first && less(v, *(j - 1)));
    *j = v;
    if (budget < 0) {
      std::sort(first, last, less);
      return;
    }
  }
}

int KindOrder(JobKind k) {
  switch (k) {
    case JobKind::kPs:
      return 0;
    case JobKind::kChief:
      return 1;
    case JobKind::kMaster:
      return 2;
    case JobKind::kWorker:
      return 3;
    case JobKind::kEvaluator:
      return 4;
    case JobKind::kLocal:
      return 5;
    case JobKind::kOther:
      return 6;
  }
  return 7;
}

// Splits "w/read:1_S11" into the tensor name "w/read:1" and the node name "w/read".
// Returns false when the input carries no _S<N> partition suffix or is a control input.
bool ParsePartitionInput(std::string_view in, std::string_view* tensor, std::string_view* node) {
  if (in.empty() || in[0] == '^') return false;
  size_t i = in.size();
  while (i > 0 && in[i - 1] >= '0' && in[i - 1] <= '9') --i;
  if (i == in.size() || i < 3 || in[i - 1] != 'S' || in[i - 2] != '_') return false;
  *tensor = in.substr(0, i - 2);
  *node = *tensor;
  size_t colon = tensor->rfind(':');
  if (colon != std::string_view::npos && colon + 1 < tensor->size()) {
    bool digits = std::all_of(tensor->begin() + colon + 1, tensor->end(),
                              [](char c) { return c >= '0' && c <= '9'; });
    if (digits) {
      *node = tensor->substr(0, colon);
      if (tensor->substr(colon + 1) == "0") *tensor = *node;
    }
  }
  return true;
}

}  // namespace

uint32_t CaptureBuilder::AddTask(std::string_view job, int replica, int index) {
  std::string key = fmt::format("{}/{}/{}", job, replica, index);
  auto it = task_index_.find(key);
  if (it != task_index_.end()) return it->second;
  TaskRow t;
  t.job = Intern(job);
  t.label = Intern(TaskLabel(job, replica, index));
  t.replica = replica;
  t.index = index;
  t.kind = JobKindOf(job);
  uint32_t id = static_cast<uint32_t>(c_.tasks.size());
  c_.tasks.push_back(t);
  task_index_.emplace(std::move(key), id);
  return id;
}

uint32_t CaptureBuilder::AddDevice(const DeviceName& name) {
  DeviceName n = name;
  if (n.job.empty()) n.job = "localhost";
  std::string canonical = n.Canonical();
  auto it = device_index_.find(canonical);
  if (it != device_index_.end()) return it->second;
  DeviceRow d;
  d.task = AddTask(n.job, n.replica, n.task);
  d.name = Intern(canonical);
  d.type = Intern(n.type);
  d.index = n.index;
  d.sub = Intern(n.sub);
  uint32_t id = static_cast<uint32_t>(c_.devices.size());
  c_.devices.push_back(d);
  device_index_.emplace(std::move(canonical), id);
  return id;
}

uint32_t CaptureBuilder::AddUnknownDevice(int64_t pid) {
  DeviceName n;
  n.job = "unknown";
  n.task = static_cast<int>(pid);
  n.type = "CPU";
  return AddDevice(n);
}

void CaptureBuilder::AddOp(TimeNs start, TimeNs dur, uint32_t device, uint16_t lane, StrId name,
                           StrId type, const StrId* inputs, size_t n_inputs) {
  OpRow op{};
  op.start = start;
  if (dur > OpRow::kMaxDur) {
    ++c_.stats.ignored["op durations clamped to 2^40 ns"];
    dur = OpRow::kMaxDur;
  }
  op.set_dur(dur);
  op.device = static_cast<uint16_t>(device);
  op.lane = lane;
  op.name = name;
  op.type = type;
  op.inputs_begin = static_cast<uint32_t>(inputs_.size());
  if (n_inputs > kMaxOpInputs) {
    c_.stats.ignored["op inputs past the 255th"] += static_cast<int64_t>(n_inputs - kMaxOpInputs);
    n_inputs = kMaxOpInputs;
  }
  op.inputs_count = static_cast<uint8_t>(n_inputs);
  for (size_t i = 0; i < n_inputs; ++i) inputs_.push_back(inputs[i]);
  ops_.push_back(op);
}

size_t CaptureBuilder::RemapDevices(size_t first_op, size_t first_flow, size_t first_tensor,
                                    const std::vector<uint32_t>& map) {
  auto lookup = [&](uint32_t d) {
    uint32_t m = d < map.size() ? map[d] : kNoIndex;
    return m < kMaxDevices ? m : kNoIndex;
  };
  size_t dropped = 0;
  size_t w = first_op;
  for (size_t r = first_op; r < ops_.size(); ++r) {
    OpRow op = ops_[r];
    uint32_t d = lookup(op.device);
    if (d == kNoIndex) {
      ++dropped;
      continue;
    }
    op.device = static_cast<uint16_t>(d);
    ops_[w++] = op;
  }
  ops_.truncate(w);
  w = first_flow;
  for (size_t r = first_flow; r < flows_.size(); ++r) {
    FlowRow f = flows_[r];
    f.src_device = lookup(f.src_device);
    f.dst_device = lookup(f.dst_device);
    if (f.src_device == kNoIndex || f.dst_device == kNoIndex) {
      ++dropped;
      continue;
    }
    flows_[w++] = f;
  }
  flows_.truncate(w);
  w = first_tensor;
  for (size_t r = first_tensor; r < c_.tensors.size(); ++r) {
    TensorRow t = c_.tensors[r];
    t.device = lookup(t.device);
    if (t.device == kNoIndex) {
      ++dropped;
      continue;
    }
    c_.tensors[w++] = t;
  }
  c_.tensors.resize(w);
  return dropped;
}

uint32_t CaptureBuilder::AddProcess(const ProcessRow& p) {
  c_.processes.push_back(p);
  return static_cast<uint32_t>(c_.processes.size() - 1);
}

void CaptureBuilder::SortLive(const std::vector<uint32_t>& task_map) {
  const size_t np = c_.processes.size();
  for (ProcessRow& p : c_.processes) p.task = task_map[p.task];
  std::vector<uint32_t> order(np);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return std::make_pair(c_.processes[a].task, c_.processes[a].pid) <
           std::make_pair(c_.processes[b].task, c_.processes[b].pid);
  });
  std::vector<uint32_t> pmap(np);
  std::vector<ProcessRow> procs(np);
  for (uint32_t i = 0; i < np; ++i) {
    pmap[order[i]] = i;
    procs[i] = c_.processes[order[i]];
  }
  c_.processes = std::move(procs);
  for (ProcessSampleRow& s : c_.process_samples) s.process = pmap[s.process];
  for (ThreadSampleRow& s : c_.thread_samples) s.process = pmap[s.process];
  for (TrafficRow& t : c_.traffic) {
    t.process = pmap[t.process];
    if (t.peer_task != kNoIndex) t.peer_task = task_map[t.peer_task];
  }
  for (SchedRow& s : c_.sched) s.process = pmap[s.process];
  std::sort(c_.traffic.begin(), c_.traffic.end(), [](const TrafficRow& a, const TrafficRow& b) {
    return std::make_tuple(a.process, a.peer, a.local, a.ts) <
           std::make_tuple(b.process, b.peer, b.local, b.ts);
  });
  std::sort(c_.sched.begin(), c_.sched.end(), [](const SchedRow& a, const SchedRow& b) {
    return std::make_pair(a.process, a.ts) < std::make_pair(b.process, b.ts);
  });
  std::sort(c_.process_samples.begin(), c_.process_samples.end(),
            [](const ProcessSampleRow& a, const ProcessSampleRow& b) {
              return std::make_pair(a.process, a.ts) < std::make_pair(b.process, b.ts);
            });
  std::sort(c_.thread_samples.begin(), c_.thread_samples.end(),
            [](const ThreadSampleRow& a, const ThreadSampleRow& b) {
              return std::make_tuple(a.process, a.tid, a.ts) <
                     std::make_tuple(b.process, b.tid, b.ts);
            });
}

CaptureBuilder::Checkpoint CaptureBuilder::MakeCheckpoint() const {
  return {c_.strings.size(), ops_.size(),      inputs_.size(),  flows_.size(),
          c_.tensors.size(), c_.stats.skipped, c_.stats.ignored};
}

void CaptureBuilder::Rollback(const Checkpoint& cp) {
  c_.strings.Truncate(cp.strings);
  ops_.truncate(cp.ops);
  inputs_.truncate(cp.inputs);
  flows_.truncate(cp.flows);
  c_.tensors.resize(cp.tensors);
  c_.stats.skipped = cp.skipped;
  c_.stats.ignored = cp.ignored;
}

std::vector<StrId> CaptureBuilder::Absorb(CaptureBuilder&& other,
                                          const std::vector<uint32_t>& device_map) {
  std::vector<StrId> sid(other.c_.strings.size());
  // Into an empty builder with the devices kept as they are (the first chunk of the first file):
  // take the other's storage as it is instead of copying every row.
  bool identity = true;
  for (uint32_t d = 0; d < device_map.size() && identity; ++d) identity = device_map[d] == d;
  if (identity && c_.strings.size() == 1 && ops_.empty() && inputs_.empty() && flows_.empty() &&
      c_.tensors.empty() && c_.stats.skipped.empty() && c_.stats.ignored.empty()) {
    std::iota(sid.begin(), sid.end(), StrId{0});
    c_.strings = std::move(other.c_.strings);
    ops_ = std::move(other.ops_);
    inputs_ = std::move(other.inputs_);
    flows_ = std::move(other.flows_);
    c_.tensors = std::move(other.c_.tensors);
    c_.stats.skipped = std::move(other.c_.stats.skipped);
    c_.stats.ignored = std::move(other.c_.stats.ignored);
    other.c_ = Capture{};
    return sid;
  }
  sid.clear();
  MergeRows(&other, device_map, &sid, /*keep_storage=*/false);
  other = CaptureBuilder();
  return sid;
}

void CaptureBuilder::AbsorbRows(CaptureBuilder* other, const std::vector<uint32_t>& device_map,
                                std::vector<StrId>* sid) {
  MergeRows(other, device_map, sid, /*keep_storage=*/true);
}

void CaptureBuilder::MergeRows(CaptureBuilder* other, const std::vector<uint32_t>& device_map,
                               std::vector<StrId>* sid, bool keep_storage) {
  // Intern the other pool's new strings here.
  for (StrId i = static_cast<StrId>(sid->size()); i < other->c_.strings.size(); ++i) {
    sid->push_back(Intern(other->c_.strings.Get(i)));
  }
  const std::vector<StrId>& map = *sid;
  auto dev = [&](uint32_t d) { return d < device_map.size() ? device_map[d] : kNoIndex; };
  const uint32_t input_base = static_cast<uint32_t>(inputs_.size());
  // Copied block by block: freed as they go (peak: the rows plus one block), or kept for reuse.
  auto each = [keep_storage](auto& rows, auto f) {
    if (keep_storage) {
      rows.ForEach(f);
      rows.Reset();
    } else {
      rows.DrainEach(f);
    }
  };
  each(other->inputs_, [&](StrId in) { inputs_.push_back(map[in]); });
  each(other->ops_, [&](OpRow op) {
    uint32_t d = dev(op.device);
    op.device = static_cast<uint16_t>(d == kNoIndex ? kMaxDevices : d);  // dropped by Remap
    op.name = map[op.name];
    op.type = map[op.type];
    op.inputs_begin += input_base;
    ops_.push_back(op);
  });
  each(other->flows_, [&](FlowRow f) {
    f.src_device = dev(f.src_device);
    f.dst_device = dev(f.dst_device);
    f.name = map[f.name];
    flows_.push_back(f);
  });
  for (TensorRow t : other->c_.tensors) {
    t.device = dev(t.device);
    t.name = map[t.name];
    c_.tensors.push_back(t);
  }
  for (const auto& [k, v] : other->c_.stats.skipped) c_.stats.skipped[k] += v;
  for (const auto& [k, v] : other->c_.stats.ignored) c_.stats.ignored[k] += v;
  other->c_.tensors.clear();
  other->c_.stats.skipped.clear();
  other->c_.stats.ignored.clear();
}

std::vector<uint32_t> CaptureBuilder::SortTasksAndDevices() {
  const size_t nt = c_.tasks.size();
  std::vector<uint32_t> order(nt);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const TaskRow& x = c_.tasks[a];
    const TaskRow& y = c_.tasks[b];
    return std::make_tuple(KindOrder(x.kind), c_.Str(x.job), x.replica, x.index) <
           std::make_tuple(KindOrder(y.kind), c_.Str(y.job), y.replica, y.index);
  });
  std::vector<uint32_t> task_map(nt);
  std::vector<TaskRow> tasks(nt);
  for (uint32_t i = 0; i < nt; ++i) {
    task_map[order[i]] = i;
    tasks[i] = c_.tasks[order[i]];
  }
  c_.tasks = std::move(tasks);
  for (DeviceRow& d : c_.devices) d.task = task_map[d.task];

  const size_t nd = c_.devices.size();
  std::vector<uint32_t> dorder(nd);
  std::iota(dorder.begin(), dorder.end(), 0);
  std::sort(dorder.begin(), dorder.end(), [&](uint32_t a, uint32_t b) {
    const DeviceRow& x = c_.devices[a];
    const DeviceRow& y = c_.devices[b];
    return std::make_tuple(x.task, c_.Str(x.name)) < std::make_tuple(y.task, c_.Str(y.name));
  });
  std::vector<uint32_t> dmap(nd);
  std::vector<DeviceRow> devices(nd);
  for (uint32_t i = 0; i < nd; ++i) {
    dmap[dorder[i]] = i;
    devices[i] = c_.devices[dorder[i]];
  }
  c_.devices = std::move(devices);
  for (FlowRow& f : c_.flows) {
    f.src_device = dmap[f.src_device];
    f.dst_device = dmap[f.dst_device];
  }
  for (TensorRow& t : c_.tensors) t.device = dmap[t.device];
  SortLive(task_map);
  return dmap;
}

void CaptureBuilder::SortOps(const std::vector<uint32_t>& dmap, int threads) {
  // Counting sort by final device while the blocks are drained (each block freed once copied:
  // peak memory is the ops plus a block per thread), then time order within each device, which
  // the input usually has already. Ties are broken so the order is total and the same whatever
  // order rows were added in (parallel import). With several threads, each drains a contiguous
  // run of blocks into its own slots of every device's range, so the order is the same.
  const size_t nd = c_.devices.size();
  const size_t nb = ops_.block_count();
  const int parts = static_cast<int>(
      std::max<size_t>(1, std::min<size_t>(static_cast<size_t>(std::max(1, threads)), nb)));
  auto part_begin = [&](int k) { return nb * static_cast<size_t>(k) / static_cast<size_t>(parts); };
  // counts[k][d]: ops of part k on device d; then the part's first slot in device d's range.
  std::vector<std::vector<size_t>> counts(static_cast<size_t>(parts), std::vector<size_t>(nd, 0));
#pragma omp parallel for schedule(static) num_threads(parts) if (parts > 1)
  for (int k = 0; k < parts; ++k) {
    std::vector<size_t>& mine = counts[static_cast<size_t>(k)];
    for (size_t b = part_begin(k); b < part_begin(k + 1); ++b) {
      const OpRow* rows = ops_.block(b);
      for (size_t i = 0, n = ops_.block_size(b); i < n; ++i) ++mine[dmap[rows[i].device]];
    }
  }
  std::vector<size_t> dev_begin(nd + 1, 0);
  for (size_t d = 0; d < nd; ++d) {
    size_t at = dev_begin[d];
    for (std::vector<size_t>& part : counts) {
      const size_t n = part[d];
      part[d] = at;
      at += n;
    }
    dev_begin[d + 1] = at;
  }
  c_.ops.resize(ops_.size());
#pragma omp parallel for schedule(static) num_threads(parts) if (parts > 1)
  for (int k = 0; k < parts; ++k) {
    std::vector<size_t>& next = counts[static_cast<size_t>(k)];
    for (size_t b = part_begin(k); b < part_begin(k + 1); ++b) {
      const OpRow* rows = ops_.block(b);
      for (size_t i = 0, n = ops_.block_size(b); i < n; ++i) {
        OpRow op = rows[i];
        op.device = static_cast<uint16_t>(dmap[op.device]);
        c_.ops[next[op.device]++] = op;
      }
      ops_.ReleaseBlock(b);
    }
  }
  ops_.Clear();
  auto less = [](const OpRow& a, const OpRow& b) {
    if (a.start != b.start) return a.start < b.start;
    if (a.dur() != b.dur()) return a.dur() > b.dur();  // enclosing op first
    if (a.name != b.name) return a.name < b.name;
    // Rows equal so far differ in something else, or are alike in every field that is kept.
    return std::make_tuple(a.inputs_begin, a.inputs_count, a.lane, a.type) <
           std::make_tuple(b.inputs_begin, b.inputs_count, b.lane, b.type);
  };
  // Devices sort independently.
  const int n_dev = static_cast<int>(nd);
#pragma omp parallel for schedule(dynamic) num_threads(std::max(1, threads)) if (threads > 1)
  for (int d = 0; d < n_dev; ++d) {
    auto first = c_.ops.begin() + static_cast<ptrdiff_t>(dev_begin[d]);
    auto last = c_.ops.begin() + static_cast<ptrdiff_t>(dev_begin[d + 1]);
    SortNearlySorted(first, last, less);
  }
  c_.device_ops.resize(nd);
  for (size_t d = 0; d < nd; ++d) {
    c_.device_ops[d] = {static_cast<uint32_t>(dev_begin[d]),
                        static_cast<uint32_t>(dev_begin[d + 1])};
  }
  if (!c_.ops.empty()) {
    c_.start = INT64_MAX;
    c_.end = INT64_MIN;
    for (const OpRow& op : c_.ops) {
      c_.start = std::min(c_.start, op.start);
      c_.end = std::max(c_.end, op.end());
    }
  }
}

void CaptureBuilder::RecoverSteps(StrId source, int threads) {
  // Tasks are independent: each fills its own list, appended in task order.
  std::vector<std::vector<StepRow>> per_task(c_.tasks.size());
  const int n_tasks = static_cast<int>(c_.tasks.size());
#pragma omp parallel for schedule(dynamic) num_threads(std::max(1, threads)) if (threads > 1)
  for (int ti = 0; ti < n_tasks; ++ti) {
    const uint32_t t = static_cast<uint32_t>(ti);
    // Devices of the task and the one with the most _SOURCE ops.
    std::vector<uint32_t> devs;
    uint32_t primary = kNoIndex;
    size_t best = 0;
    for (uint32_t d = 0; d < c_.devices.size(); ++d) {
      if (c_.devices[d].task != t) continue;
      devs.push_back(d);
      size_t n = 0;
      for (uint32_t i = c_.device_ops[d].first; i < c_.device_ops[d].second; ++i) {
        n += c_.ops[i].name == source;
      }
      if (n > best) best = n, primary = d;
    }
    std::vector<TimeNs> starts;
    if (primary != kNoIndex) {
      for (uint32_t i = c_.device_ops[primary].first; i < c_.device_ops[primary].second; ++i) {
        if (c_.ops[i].name == source) starts.push_back(c_.ops[i].start);
      }
    }
    TimeNs lo = INT64_MAX, hi = INT64_MIN;
    for (uint32_t d : devs) {
      for (uint32_t i = c_.device_ops[d].first; i < c_.device_ops[d].second; ++i) {
        lo = std::min(lo, c_.ops[i].start);
        hi = std::max(hi, c_.ops[i].end());
      }
    }
    if (lo > hi) continue;  // a task with no ops has no steps (an OpenMP loop: no early exit)
    if (starts.empty()) starts.push_back(lo);
    starts[0] = std::min(starts[0], lo);
    std::vector<TimeNs> ends(starts.size(), INT64_MIN);
    for (uint32_t d : devs) {
      // Ops are in start order: the step cursor only moves forward.
      size_t k = 0;
      for (uint32_t i = c_.device_ops[d].first; i < c_.device_ops[d].second; ++i) {
        const OpRow& op = c_.ops[i];
        while (k + 1 < starts.size() && starts[k + 1] <= op.start) ++k;
        ends[k] = std::max(ends[k], op.end());
      }
    }
    for (size_t k = 0; k < starts.size(); ++k) {
      StepRow s;
      s.task = t;
      s.index = static_cast<uint32_t>(k);
      s.start = starts[k];
      s.end = std::max(ends[k], starts[k]);
      per_task[t].push_back(s);
    }
  }
  for (const std::vector<StepRow>& steps : per_task) {
    c_.steps.insert(c_.steps.end(), steps.begin(), steps.end());
  }
}

void CaptureBuilder::ResolveEdges(int threads) {
  // Parse each distinct input string once: its producer node and tensor, if it is a _S<N> input.
  const size_t n_strings = c_.strings.size();
  constexpr StrId kNone = StringPool::kNotFound;
  std::vector<StrId> input_node(n_strings, kNone), input_tensor(n_strings, kNone);
  std::vector<uint8_t> parsed(n_strings, 0), wanted(n_strings, 0);
  for (StrId in : c_.inputs) {
    if (parsed[in]) continue;
    parsed[in] = 1;
    std::string_view tensor, node;
    if (!ParsePartitionInput(c_.Str(in), &tensor, &node)) continue;
    StrId node_id = c_.strings.Find(node);
    if (node_id == kNone) {
      input_tensor[in] = 0;  // a _S<N> input whose producer never ran in the trace
      continue;
    }
    input_node[in] = node_id;
    input_tensor[in] = c_.strings.Intern(tensor);
    wanted[node_id] = 1;
  }
  // Producers: ops whose node name some _S<N> input refers to, as compact rows sorted by
  // (name, end), with each name's range indexed by its string id: the per-input searches below
  // then touch contiguous memory instead of chasing op indices.
  struct Producer {
    uint32_t task;
    // Rows of the same task just before / after this one in its name's range (a run), capped:
    // the searches below skip a run in one step (in several past 65535 rows).
    uint16_t run_back, run_ahead;
    TimeNs end;
  };
  // Counting sort by name (ids are dense), then each name's rows by (end, task), names in
  // parallel.
  std::vector<uint32_t> range_begin(n_strings + 1, 0);
  for (const OpRow& op : c_.ops) {
    if (op.name < n_strings && wanted[op.name]) ++range_begin[op.name + 1];
  }
  for (size_t n = 0; n < n_strings; ++n) range_begin[n + 1] += range_begin[n];
  std::vector<Producer> producers(range_begin[n_strings]);
  {
    std::vector<uint32_t> next(range_begin.begin(), range_begin.end() - 1);
    for (const OpRow& op : c_.ops) {
      if (op.name < n_strings && wanted[op.name]) {
        producers[next[op.name]++] = {c_.devices[op.device].task, 0, 0, op.end()};
      }
    }
  }
  const int n_names = static_cast<int>(n_strings);
#pragma omp parallel for schedule(dynamic, 64) num_threads(std::max(1, threads)) if (threads > 1)
  for (int n = 0; n < n_names; ++n) {
    auto first = producers.begin() + range_begin[static_cast<size_t>(n)];
    auto last = producers.begin() + range_begin[static_cast<size_t>(n) + 1];
    std::sort(first, last, [](const Producer& x, const Producer& y) {
      return x.end != y.end ? x.end < y.end : x.task < y.task;
    });
    for (auto it = first; it != last; ++it) {
      const bool same = it != first && (it - 1)->task == it->task;
      it->run_back = same ? static_cast<uint16_t>(std::min(65535, (it - 1)->run_back + 1)) : 0;
    }
    for (auto it = last; it != first;) {
      --it;
      const bool same = it + 1 != last && (it + 1)->task == it->task;
      it->run_ahead = same ? static_cast<uint16_t>(std::min(65535, (it + 1)->run_ahead + 1)) : 0;
    }
  }
  std::unordered_map<StrId, int64_t> tensor_bytes;
  for (const TensorRow& t : c_.tensors) tensor_bytes[t.name] = t.bytes;

  struct Agg {
    int64_t count = 0;
    int64_t bytes = 0;
    bool sized = true;
  };
  using Key = std::tuple<uint32_t, uint32_t, StrId, EdgeKind>;
  struct KeyHash {
    size_t operator()(const Key& k) const {
      uint64_t h = (uint64_t{std::get<0>(k)} << 32 | std::get<1>(k)) * 0x9E3779B97F4A7C15ull;
      h ^= (uint64_t{std::get<2>(k)} << 1 | static_cast<uint64_t>(std::get<3>(k))) +
           0x632BE59BD9B4E019ull + (h << 6) + (h >> 2);
      return static_cast<size_t>(h);
    }
  };
  using AggMap = std::unordered_map<Key, Agg, KeyHash>;
  auto add = [&](AggMap& agg, uint32_t src, uint32_t dst, StrId tensor, EdgeKind kind) {
    Agg& a = agg[{src, dst, tensor, kind}];
    ++a.count;
    auto it = tensor_bytes.find(tensor);
    if (it == tensor_bytes.end()) {
      a.sized = false;
    } else {
      a.bytes += it->second;
    }
  };

  AggMap agg;
  for (const FlowRow& f : c_.flows) {
    uint32_t st = c_.devices[f.src_device].task, dt = c_.devices[f.dst_device].task;
    if (st != dt) add(agg, st, dt, f.name, EdgeKind::kDataFlow);
  }
  // Consumers in contiguous slices, one aggregation map per slice, summed in slice order.
  const int slices = std::max(1, threads);
  std::vector<AggMap> slice_agg(static_cast<size_t>(slices));
  std::vector<int64_t> slice_unresolved(static_cast<size_t>(slices), 0);
  const size_t n_ops = c_.ops.size();
#pragma omp parallel for schedule(static) num_threads(slices) if (slices > 1)
  for (int sl = 0; sl < slices; ++sl) {
    AggMap& mine = slice_agg[static_cast<size_t>(sl)];
    int64_t& unresolved = slice_unresolved[static_cast<size_t>(sl)];
    const size_t first = n_ops * static_cast<size_t>(sl) / static_cast<size_t>(slices);
    const size_t last = n_ops * static_cast<size_t>(sl + 1) / static_cast<size_t>(slices);
    for (size_t oi = first; oi < last; ++oi) {
      const OpRow& op = c_.ops[oi];
      const uint32_t consumer_task = c_.devices[op.device].task;
      for (uint32_t k = 0; k < op.inputs_count; ++k) {
        const StrId in = c_.inputs[op.inputs_begin + k];
        if (input_tensor[in] == kNone) continue;
        if (input_node[in] == kNone) {
          ++unresolved;
          continue;
        }
        const StrId node_id = input_node[in];
        const Producer* lo = producers.data() + range_begin[node_id];
        const Producer* hi = producers.data() + range_begin[node_id + 1];
        if (lo == hi) {
          ++unresolved;  // the name is known, but no op of that name ran
          continue;
        }
        // The latest producer on another task that ended by the consumer's start; else the
        // earliest one after it (clock skew between hosts).
        const Producer* at = std::upper_bound(
            lo, hi, op.start, [](TimeNs t, const Producer& p) { return t < p.end; });
        // Runs of one task are skipped whole, so a task that produces most of a name's ops
        // (steps on one PS) costs one step, not one per op.
        const size_t a = static_cast<size_t>(at - producers.data());
        const size_t l = static_cast<size_t>(lo - producers.data());
        const size_t h = static_cast<size_t>(hi - producers.data());
        const Producer* best = nullptr;
        for (size_t i = a; i > l;) {
          const Producer& p = producers[--i];
          if (p.task != consumer_task) {
            best = &p;
            break;
          }
          i -= p.run_back;  // to the run's first row (runs stay within [l, h))
        }
        for (size_t i = a; best == nullptr && i < h;) {
          const Producer& p = producers[i];
          if (p.task != consumer_task) best = &p;
          i += size_t{p.run_ahead} + 1;
        }
        if (best == nullptr) continue;  // produced on the same task: a device-to-device edge
        add(mine, best->task, consumer_task, input_tensor[in], EdgeKind::kPartitionInput);
      }
    }
  }
  for (int sl = 0; sl < slices; ++sl) {
    c_.stats.unresolved_inputs += slice_unresolved[static_cast<size_t>(sl)];
    for (const auto& [key, a] : slice_agg[static_cast<size_t>(sl)]) {
      Agg& total = agg[key];
      total.count += a.count;
      total.bytes += a.bytes;
      total.sized = total.sized && a.sized;
    }
  }
  // Rows in key order (src, dst, tensor, kind), as the consumers and the merge below expect.
  std::vector<std::pair<Key, Agg>> rows(agg.begin(), agg.end());
  std::sort(rows.begin(), rows.end(),
            [](const auto& x, const auto& y) { return x.first < y.first; });
  // A transfer drawn as a DataFlow arrow and also named as a _S<N> input is one transfer: keep
  // the partition-input row (the map orders it after the DataFlow one) and the larger count.
  for (const auto& [key, a] : rows) {
    EdgeRow e;
    std::tie(e.src_task, e.dst_task, e.tensor, e.kind) = key;
    e.count = a.count;
    e.bytes = a.sized ? a.bytes : -1;
    if (!c_.edges.empty()) {
      EdgeRow& prev = c_.edges.back();
      if (prev.src_task == e.src_task && prev.dst_task == e.dst_task && prev.tensor == e.tensor) {
        if (prev.count > e.count) e.count = prev.count, e.bytes = prev.bytes;
        prev = e;
        continue;
      }
    }
    c_.edges.push_back(e);
  }
}

Capture CaptureBuilder::Finish(int threads) {
  inputs_.DrainInto(&c_.inputs);
  flows_.DrainInto(&c_.flows);
  SortOps(SortTasksAndDevices(), threads);
  RecoverSteps(c_.strings.Find("_SOURCE"), threads);
  ResolveEdges(threads);
  task_index_.clear();
  device_index_.clear();
  return std::move(c_);
}

int64_t ImportStats::TotalSkipped() const {
  int64_t n = 0;
  for (const auto& [reason, count] : skipped) n += count;
  return n;
}

uint32_t Capture::FindTask(std::string_view label) const {
  for (uint32_t i = 0; i < tasks.size(); ++i) {
    if (Str(tasks[i].label) == label) return i;
  }
  return kNoIndex;
}

int Capture::CountTasks(JobKind kind) const {
  int n = 0;
  for (const TaskRow& t : tasks) n += t.kind == kind;
  return n;
}

}  // namespace tfdiag
