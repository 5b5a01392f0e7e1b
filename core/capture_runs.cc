// CaptureBuilder's inputs as runs: captures a day or more apart that share no task (other than
// by a default name every single-process program has) are other runs, kept apart as tasks of
// their own, so a finding one run has alone keeps its own figures.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "core/capture_builder.h"

namespace tfdiag {

namespace {

// Task names that say nothing of which process ran: TF's local session ("/job:localhost", the
// job of every single-process timeline; tensorflow/core/common_runtime/device_mgr.cc names
// devices so) and a bare trace pid ("unknown:<pid>", AddUnknownDevice).
bool IsDefaultJob(std::string_view job) { return job == "localhost" || job == "unknown"; }

}  // namespace

void CaptureBuilder::SplitRuns() {
  run_starts_.clear();
  std::vector<std::pair<TimeNs, TimeNs>> in;
  for (const InputRange& r : inputs_ended_) in.emplace_back(r.start, r.end);
  if (open_input_.start <= open_input_.end) in.emplace_back(open_input_.start, open_input_.end);
  if (in.size() < 2) return;
  std::sort(in.begin(), in.end());
  // Runs: inputs in time order, a new run where the next input starts a day or more after the
  // end of all before it.
  std::vector<TimeNs> starts{in[0].first};
  TimeNs end = in[0].second;
  for (size_t i = 1; i < in.size(); ++i) {
    if (in[i].first - end >= kUnrelatedCapturesNs) starts.push_back(in[i].first);
    end = std::max(end, in[i].second);
  }
  if (starts.size() < 2) return;
  const auto run_of = [&](TimeNs t) -> uint32_t {
    auto it = std::upper_bound(starts.begin(), starts.end(), t);
    return it == starts.begin() ? 0 : static_cast<uint32_t>(it - starts.begin() - 1);
  };
  // The runs each device's ops fall in; packed ops by their blocks' first ops (a block lies in
  // one input, and inputs of two runs are a day apart).
  const size_t nd = c_.devices.size(), nr = starts.size();
  std::vector<std::set<uint32_t>> dev_runs(nd);
  for (size_t i = 0; i < ops_.size(); ++i) {
    if (ops_[i].device < nd) dev_runs[ops_[i].device].insert(run_of(ops_[i].start));
  }
  for (const auto& [dev, p] : packed_) {
    for (const PackedOps::BlockHead& b : p.blocks) {
      if (dev < nd) dev_runs[dev].insert(run_of(b.start));
    }
  }
  std::vector<std::set<uint32_t>> task_runs(c_.tasks.size());
  for (size_t d = 0; d < nd; ++d) {
    task_runs[c_.devices[d].task].insert(dev_runs[d].begin(), dev_runs[d].end());
  }
  for (size_t i = 0; i < explicit_steps_.size(); ++i) {
    task_runs[explicit_steps_[i].task].insert(run_of(explicit_steps_[i].start));
  }
  // A task of a real name (worker:0, a host) in two runs: one job profiled days apart (a long
  // training run's ProfilerHook): kept together, and NoteCaptures warns.
  for (uint32_t t = 0; t < c_.tasks.size(); ++t) {
    const TaskRow& row = c_.tasks[t];
    const bool host =
        host_tasks_.count(fmt::format("{}/{}/{}", c_.Str(row.job), row.replica, row.index)) > 0;
    if (task_runs[t].size() > 1 && (host || !IsDefaultJob(c_.Str(row.job)))) return;
  }
  size_t copies = 0;
  for (uint32_t d = 0; d < nd; ++d) {
    const uint32_t t = c_.devices[d].task;
    if (task_runs[t].size() > 1) copies += task_runs[t].size() - 1;
  }
  if (nd + copies >= kMaxDevices) return;  // left together: NoteCaptures warns
  run_starts_ = starts;
  // Each task of a default name in a later run gets a task (and devices) of its own:
  // "localhost:0 (run 2)".
  std::vector<std::vector<uint32_t>> task_in_run(c_.tasks.size());
  const size_t nt = c_.tasks.size();
  for (uint32_t t = 0; t < nt; ++t) {
    task_in_run[t].assign(nr, t);
    if (task_runs[t].size() < 2) continue;
    for (uint32_t r : task_runs[t]) {
      if (r == *task_runs[t].begin()) continue;
      TaskRow row = c_.tasks[t];
      row.label = Intern(fmt::format("{} (run {})", c_.Str(row.label), r + 1));
      task_in_run[t][r] = static_cast<uint32_t>(c_.tasks.size());
      c_.tasks.push_back(row);
    }
  }
  std::vector<std::vector<uint32_t>> dev_in_run(nd);
  for (uint32_t d = 0; d < nd; ++d) {
    dev_in_run[d].assign(nr, d);
    const uint32_t t = c_.devices[d].task;
    for (uint32_t r = 0; r < nr; ++r) {
      if (task_in_run[t][r] == t) continue;
      DeviceRow row = c_.devices[d];
      row.task = task_in_run[t][r];
      dev_in_run[d][r] = static_cast<uint32_t>(c_.devices.size());
      c_.devices.push_back(row);
    }
  }
  const auto dev_at = [&](uint32_t d, TimeNs t) { return d < nd ? dev_in_run[d][run_of(t)] : d; };
  // Packed ops of a device with a copy are unpacked, to be packed again by Finish.
  for (size_t k = 0; k < packed_.size();) {
    const uint32_t d = packed_[k].first;
    if (d >= nd || std::all_of(dev_in_run[d].begin(), dev_in_run[d].end(),
                               [d](uint32_t x) { return x == d; })) {
      ++k;
      continue;
    }
    std::vector<OpRow> rows(packed_[k].second.count);
    if (!rows.empty()) {
      packed_[k].second.Decode(0, static_cast<uint32_t>(rows.size()), static_cast<uint16_t>(d), {},
                               rows.data());
    }
    for (const OpRow& op : rows) ops_.push_back(op);
    packed_.erase(packed_.begin() + static_cast<std::ptrdiff_t>(k));
  }
  for (size_t i = 0; i < ops_.size(); ++i) {
    OpRow& op = ops_[i];
    op.device = static_cast<uint16_t>(dev_at(op.device, op.start));
  }
  for (size_t i = 0; i < flows_.size(); ++i) {
    FlowRow& f = flows_[i];
    f.src_device = dev_at(f.src_device, f.src_ts);
    f.dst_device = dev_at(f.dst_device, f.dst_ts);
  }
  for (OpenFlow& f : open_flows_) f.device = dev_at(f.device, f.ts);
  for (size_t i = 0; i < explicit_steps_.size(); ++i) {
    MarkedStep& s = explicit_steps_[i];
    s.task = task_in_run[s.task][run_of(s.start)];
  }
  for (StepBreakdownRow& b : c_.step_breakdowns) b.task = task_in_run[b.task][run_of(b.start)];
  for (InputIteratorRow& r : c_.input_iterators) r.task = task_in_run[r.task][run_of(r.first)];
}

}  // namespace tfdiag
