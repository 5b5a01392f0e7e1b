#include "core/capture_builder.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <tuple>
#include <type_traits>

#include "core/capture_finish.h"
#include "core/saturating.h"

namespace tfdiag {

namespace {

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
  if (device >= kMaxDevices) {
    // Readers skip such ops themselves (a file's pids past the 65535th); never truncate.
    ++c_.stats.skipped["op on a device slot past the 65535th"];
    return;
  }
  OpRow op{};
  op.start = start;
  if (dur > OpRow::kMaxDur) {
    ++c_.stats.ignored["op durations clamped to 2^40 ns"];
    dur = OpRow::kMaxDur;
  }
  op.set_dur(dur);
  op.device = static_cast<uint16_t>(device);
  op.lane = lane;
  if (n_inputs > kMaxOpInputs) {
    c_.stats.ignored["op inputs past the 255th"] += static_cast<int64_t>(n_inputs - kMaxOpInputs);
    n_inputs = kMaxOpInputs;
  }
  op.node = AddNode(name, type, inputs, n_inputs);
  open_input_.Add(op.start, op.end());
  ops_.push_back(op);
}

namespace {

// A hash of a node's (name, type, inputs); `input(i)` gives input i.
template <typename Input>
uint64_t HashNode(StrId name, StrId type, size_t n_inputs, Input input) {
  uint64_t h = ((uint64_t{name} << 32) | type) * 0x9E3779B97F4A7C15ull;
  for (size_t i = 0; i < n_inputs; ++i) h = (h ^ input(i)) * 0xFF51AFD7ED558CCDull;
  return h ^ n_inputs;
}

}  // namespace

bool CaptureBuilder::SameInputs(const NodeRow& n, const StrId* inputs, size_t n_inputs) const {
  if (n.inputs_count != n_inputs) return false;
  for (size_t i = 0; i < n_inputs; ++i) {
    if (inputs_[n.inputs_begin + i] != inputs[i]) return false;
  }
  return true;
}

uint32_t CaptureBuilder::AddNode(StrId name, StrId type, const StrId* inputs, size_t n_inputs) {
  // A node runs once per step with the same type and inputs: the last node of each name, or the
  // one before it (two variants of a name alternating), is usually this op's. Names are dense
  // string ids: found by index, not by hashing.
  if (last_node_.size() <= name) {
    last_node_.resize(std::max<size_t>(name + 1, 2 * last_node_.size()));
  }
  LastNodes& slot = last_node_[name];
  auto is = [&](uint32_t node) {
    const NodeRow& n = nodes_[node];
    return n.type == type && SameInputs(n, inputs, n_inputs);
  };
  if (slot.last != 0 && is(slot.last - 1)) return slot.last - 1;
  if (slot.before != 0 && is(slot.before - 1)) {
    std::swap(slot.last, slot.before);
    return slot.last - 1;
  }
  // A name with three nodes or more (RecvTensor, whose input changes from op to op): its nodes
  // are also found by hash. A node lost to a collision is only stored twice; Finish merges them.
  const bool many = slot.before != 0;
  uint64_t h = 0;
  if (many) {
    h = HashNode(name, type, n_inputs, [&](size_t i) { return inputs[i]; });
    auto it = multi_nodes_.find(h);
    if (it != multi_nodes_.end() && nodes_[it->second].name == name && is(it->second)) {
      slot.before = slot.last;
      slot.last = it->second + 1;
      return it->second;
    }
    for (uint32_t held : {slot.last, slot.before}) {  // the name's first two join the table
      const NodeRow& n = nodes_[held - 1];
      multi_nodes_.try_emplace(HashNode(name, n.type, n.inputs_count,
                                        [&](size_t i) { return inputs_[n.inputs_begin + i]; }),
                               held - 1);
    }
  }
  NodeRow n;
  n.name = name;
  n.type = type;
  n.inputs_count = static_cast<uint32_t>(n_inputs);
  if (slot.last != 0 && SameInputs(nodes_[slot.last - 1], inputs, n_inputs)) {
    n.inputs_begin = nodes_[slot.last - 1].inputs_begin;  // only the type differs: share
  } else {
    n.inputs_begin = static_cast<uint32_t>(inputs_.size());
    for (size_t i = 0; i < n_inputs; ++i) inputs_.push_back(inputs[i]);
  }
  nodes_.push_back(n);
  const uint32_t node = static_cast<uint32_t>(nodes_.size() - 1);
  if (many) multi_nodes_[h] = node;
  slot.before = slot.last;
  slot.last = node + 1;
  return node;
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
  for (StepCountRow& s : c_.step_counts) s.process = pmap[s.process];
  std::sort(c_.step_counts.begin(), c_.step_counts.end(),
            [](const StepCountRow& a, const StepCountRow& b) {
              return std::make_pair(a.process, a.ts) < std::make_pair(b.process, b.ts);
            });
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

std::vector<uint32_t> CaptureBuilder::SortTasksAndDevices() {
  const size_t nt = c_.tasks.size();
  std::vector<uint32_t> order(nt);
  std::iota(order.begin(), order.end(), 0);
  // Stable: a run's copy of a task (SplitRuns) follows the task, in run order.
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
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
  for (size_t i = 0; i < explicit_steps_.size(); ++i) {
    explicit_steps_[i].task = task_map[explicit_steps_[i].task];
  }
  for (StepBreakdownRow& r : c_.step_breakdowns) r.task = task_map[r.task];
  std::sort(c_.step_breakdowns.begin(), c_.step_breakdowns.end(),
            [](const StepBreakdownRow& a, const StepBreakdownRow& b) {
              return std::tie(a.task, a.start) < std::tie(b.task, b.start);
            });
  for (InputIteratorRow& r : c_.input_iterators) r.task = task_map[r.task];
  std::sort(c_.input_iterators.begin(), c_.input_iterators.end(),
            [](const InputIteratorRow& a, const InputIteratorRow& b) {
              return std::tie(a.task, a.path, a.first) < std::tie(b.task, b.path, b.first);
            });

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

void CaptureBuilder::PairOpenFlows() {
  // Starts by key, in the order added; an end takes the first unused start of another file.
  std::map<std::string_view, std::vector<size_t>> starts;
  for (size_t i = 0; i < open_flows_.size(); ++i) {
    if (open_flows_[i].start) starts[open_flows_[i].key].push_back(i);
  }
  std::vector<bool> used(open_flows_.size(), false);
  for (const OpenFlow& end : open_flows_) {
    if (end.start) continue;
    const OpenFlow* pair = nullptr;
    auto it = starts.find(end.key);
    if (it != starts.end()) {
      for (size_t i : it->second) {
        const OpenFlow& s = open_flows_[i];
        if (used[i] || s.file == end.file ||
            !(s.name.empty() || end.name.empty() || s.name == end.name)) {
          continue;
        }
        used[i] = true;
        pair = &s;
        break;
      }
    }
    if (pair == nullptr) {
      ++c_.stats.skipped["flow end without a flow start"];
      if (end.file < c_.stats.files.size()) ++c_.stats.files[end.file].skipped;
      continue;
    }
    FlowRow f;
    f.src_ts = pair->ts;
    f.src_device = pair->device;
    f.dst_ts = end.ts;
    f.dst_device = end.device;
    f.name = Intern(pair->name.empty() ? end.name : pair->name);
    flows_.push_back(f);
    ++c_.stats.cross_file_flows;
  }
  open_flows_ = {};
}

bool CaptureBuilder::NodeBefore(uint32_t a, uint32_t b) const {
  const NodeRow &x = nodes_[a], &y = nodes_[b];
  if (x.name != y.name) return x.name < y.name;
  if (x.inputs_count != y.inputs_count) return x.inputs_count < y.inputs_count;
  for (uint32_t i = 0; i < x.inputs_count; ++i) {
    const StrId p = inputs_[x.inputs_begin + i], q = inputs_[y.inputs_begin + i];
    if (p != q) return p < q;
  }
  return x.type < y.type;
}

void CaptureBuilder::PackOps() {
  if (ops_.size() == 0) return;
  std::vector<OpRow> rows;
  ops_.DrainInto(&rows);
  // The order of Capture::ops (capture_finish::OpBefore), with nodes compared as Capture::nodes
  // will order them (builder node ids are in order of first appearance).
  auto node_less = [&](uint32_t x, uint32_t y) { return NodeBefore(x, y); };
  std::sort(rows.begin(), rows.end(), [&](const OpRow& a, const OpRow& b) {
    if (a.device != b.device) return a.device < b.device;
    return capture_finish::OpBeforeBy(a, b, node_less);
  });
  for (size_t i = 0; i < rows.size();) {
    size_t j = i;
    while (j < rows.size() && rows[j].device == rows[i].device) ++j;
    PackedOps p;
    p.Append(rows.data() + i, j - i);
    p.bytes.shrink_to_fit();
    p.blocks.shrink_to_fit();
    packed_.emplace_back(rows[i].device, std::move(p));
    i = j;
  }
}

Capture CaptureBuilder::Finish(int threads) {
  SplitRuns();
  if (!packed_.empty()) PackOps();  // one form for every op
  PairOpenFlows();
  inputs_.DrainInto(&c_.inputs);
  last_node_ = {};
  multi_nodes_ = {};
  const std::vector<uint32_t> nmap = capture_finish::SortNodes(&nodes_, &c_);
  flows_.DrainInto(&c_.flows);
  // Inputs are parsed first (interning their tensor names), so that sorting each device's ops
  // can also pick out its producers.
  capture_finish::PartitionInputs refs = capture_finish::ParsePartitionInputs(&c_);
  const std::vector<uint32_t> dmap = SortTasksAndDevices();
  const StrId source = c_.strings.Find("_SOURCE");
  std::vector<capture_finish::DeviceScan> scans =
      packed_.empty()
          ? capture_finish::SortOps(&ops_, dmap, nmap, source, refs, threads, &c_)
          : capture_finish::AdoptPacked(&packed_, dmap, nmap, source, refs, threads, &c_);
  SetCaptures();
  capture_finish::RecoverSteps(scans, source, threads, &c_);
  UseExplicitSteps();
  NoteCaptures();
  capture_finish::ResolveEdges(std::move(refs), &scans, threads, &c_);
  task_index_.clear();
  device_index_.clear();
  return std::move(c_);
}

void CaptureBuilder::UseExplicitSteps() {
  if (explicit_steps_.size() == 0) return;
  std::vector<MarkedStep> marked;
  explicit_steps_.DrainInto(&marked);
  std::sort(marked.begin(), marked.end(), [](const MarkedStep& a, const MarkedStep& b) {
    return std::tie(a.task, a.start, a.end) < std::tie(b.task, b.start, b.end);
  });
  // Task by task: its marked steps in start order if it has any, else its recovered ones.
  const size_t nt = c_.tasks.size();
  std::vector<uint8_t> has(nt, 0);
  for (const MarkedStep& s : marked) has[s.task] = 1;
  size_t total = marked.size();
  for (uint32_t t = 0; t < nt; ++t) total += has[t] ? 0 : c_.TaskSteps(t).size();
  std::vector<StepRow> steps;
  steps.reserve(total);
  std::vector<std::pair<uint32_t, uint32_t>> ranges(nt, {0, 0});
  size_t m = 0;
  for (uint32_t t = 0; t < nt; ++t) {
    const uint32_t begin = static_cast<uint32_t>(steps.size());
    if (has[t]) {
      ++c_.stats.marked_step_tasks;
      for (; m < marked.size() && marked[m].task == t; ++m) {
        steps.push_back({marked[m].start, std::max(marked[m].end, marked[m].start)});
      }
    } else {
      const StepRange recovered = c_.TaskSteps(t);
      steps.insert(steps.end(), recovered.begin(), recovered.end());
    }
    ranges[t] = {begin, static_cast<uint32_t>(steps.size())};
  }
  c_.steps = std::move(steps);
  c_.task_steps = std::move(ranges);
}

int64_t ImportStats::TotalSkipped() const {
  int64_t n = 0;
  for (const auto& [reason, count] : skipped) n += count;
  return n;
}

const char* StepCategoryKey(StepCategory c) {
  static const char* const kKeys[kStepCategories] = {"input_ns",
                                                     "host_to_device_ns",
                                                     "kernel_launch_ns",
                                                     "host_compute_ns",
                                                     "device_compute_ns",
                                                     "device_to_device_ns",
                                                     "device_collectives_ns",
                                                     "output_ns",
                                                     "compile_ns",
                                                     "other_ns"};
  const int i = static_cast<int>(c);
  return i >= 0 && i < kStepCategories ? kKeys[i] : "";
}

const char* StepCategoryWords(StepCategory c) {
  static const char* const kWords[kStepCategories] = {"input",          "host to device",
                                                      "kernel launch",  "host compute",
                                                      "device compute", "device to device",
                                                      "collectives",    "output",
                                                      "compile",        "other"};
  const int i = static_cast<int>(c);
  return i >= 0 && i < kStepCategories ? kWords[i] : "";
}

TimeNs Capture::CapturedNs() const {
  if (captures.empty()) return SatSub(end, start);
  TimeNs n = 0;
  for (const CaptureRange& r : captures) SatAccumulate(&n, SatSub(r.end, r.start));
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
