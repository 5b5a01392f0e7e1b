// TraceHandler::Finish(): the end-of-file mapping of pids to devices, and what is decided only
// once the whole file is known: GPU stream:all rows that repeat the per-stream rows, a Horovod
// timeline, flow ends whose start is in another file, and what a file without ops is. See
// trace_handler.h.
#include <algorithm>
#include <set>

#include "collectors/timeline/horovod_timeline.h"
#include "collectors/timeline/trace_handler.h"
#include "collectors/xplane/host_tasks.h"
#include "collectors/xplane/step_breakdown.h"
#include "collectors/xplane/tf2_events.h"
#include "collectors/xplane/tf2_iterators.h"
#include "collectors/xplane/xprof_tools.h"
#include "core/device_name.h"

namespace tfdiag {

namespace {

constexpr const char* kNonDevice = "events on a non-device process (e.g. Allocators)";

}  // namespace

std::vector<uint32_t> TraceHandler::Tf2Order() const {
  const uint32_t n = static_cast<uint32_t>(tf2_recs_.size());
  auto before = [&](const Tf2Rec& x, const Tf2Rec& y) {
    if (x.pid != y.pid) return x.pid < y.pid;
    if (x.tid != y.tid) return x.tid < y.tid;
    if (x.ts != y.ts) return x.ts < y.ts;
    return x.dur > y.dur;
  };
  auto same_thread = [&](uint32_t a, uint32_t b) {
    return tf2_recs_[a].pid == tf2_recs_[b].pid && tf2_recs_[a].tid == tf2_recs_[b].tid;
  };
  // TF writes a line's events together and in start order (xplane_to_trace_events.cc, one line
  // after the other; a thread may come back in a later run when its plane held the line twice):
  // then the records are sorted runs, and ordering the runs is the whole sort, giving what a
  // stable sort of the records gives.
  std::vector<std::pair<uint32_t, uint32_t>> runs;  // [begin, end) in record order
  bool in_order = true;
  for (uint32_t i = 0; i < n && in_order;) {
    uint32_t j = i + 1;
    while (j < n && same_thread(i, j)) {
      if (before(tf2_recs_[j], tf2_recs_[j - 1])) in_order = false;
      ++j;
    }
    runs.emplace_back(i, j);
    i = j;
  }
  std::vector<uint32_t> order(n);
  if (in_order) {
    std::stable_sort(runs.begin(), runs.end(), [&](const auto& a, const auto& b) {
      return before(tf2_recs_[a.first], tf2_recs_[b.first]);
    });
    // Runs of one thread must follow each other: the next starts at or after the last one's end
    // (an equal record only from a later run, as a stable sort would place it).
    for (size_t r = 1; r < runs.size() && in_order; ++r) {
      const auto &prev = runs[r - 1], &next = runs[r];
      if (!same_thread(prev.first, next.first)) continue;
      const Tf2Rec &last = tf2_recs_[prev.second - 1], &first = tf2_recs_[next.first];
      in_order = before(last, first) || (!before(first, last) && prev.first < next.first);
    }
  }
  if (in_order) {
    size_t k = 0;
    for (const auto& [b, e] : runs) {
      for (uint32_t i = b; i < e; ++i) order[k++] = i;
    }
    return order;
  }
  for (uint32_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return before(tf2_recs_[a], tf2_recs_[b]); });
  return order;
}

void TraceHandler::FinishTf2(FileStats* stats) {
  const std::vector<uint32_t> order = Tf2Order();
  auto process = [&](int64_t pid) -> std::string_view {
    auto it = process_names_.find(pid);
    return it == process_names_.end() ? std::string_view() : std::string_view(it->second);
  };
  auto line_of = [&](const Tf2Rec& r) -> std::string_view {
    auto it = thread_names_.find({r.pid, r.tid});
    return it == thread_names_.end() ? std::string_view() : std::string_view(it->second);
  };
  // What each process is, by the rule the XSpace reader applies to its planes (ClassifyTf2Plane):
  // host threads, a GPU's streams and rows, or no device (its events counted, nothing else).
  auto plane_of = [&](int64_t pid) { return ClassifyTf2Plane(process(pid)); };
  std::map<std::string, int64_t> not_device;  // events by the process name that is no device
  // Lanes: a process's threads in order (the XSpace reader's lanes are its lines in order).
  std::map<std::pair<int64_t, int64_t>, uint16_t> lanes;
  std::map<int64_t, uint16_t> next_lane;
  auto lane_of = [&](const Tf2Rec& r) {
    auto [it, fresh] = lanes.emplace(std::make_pair(r.pid, r.tid), 0);
    if (fresh) {
      uint16_t& n = next_lane[r.pid];
      it->second = n;
      if (n < UINT16_MAX) ++n;
    }
    return it->second;
  };
  Tf2StepGroups groups;
  Tf2StepBreakdown breakdown;  // XProf's, as the XSpace reader counts it (step_breakdown.h)
  Tf2KernelTies ties;
  Tf2InputIterators iterators;  // the host's tf.data pipeline stages
  bool saw_source = false;
  int64_t not_ops = 0, derived = 0;
  // Host processes first: their ops, their groups and the launches of kernels.
  for (size_t k = 0; k < order.size();) {
    const Tf2Rec& first = tf2_recs_[order[k]];
    size_t end = k;
    while (end < order.size() && tf2_recs_[order[end]].pid == first.pid &&
           tf2_recs_[order[end]].tid == first.tid) {
      ++end;
    }
    const Tf2Plane plane = plane_of(first.pid);
    if (plane == Tf2Plane::kNone) {
      not_device[std::string(process(first.pid))] += static_cast<int64_t>(end - k);
    } else if (plane == Tf2Plane::kHost) {
      ties.BeginHostLine();
      Tf2LineState state;
      const uint32_t slot = Slot(first.pid);
      const uint16_t lane = lane_of(first);
      for (size_t i = k; i < end; ++i) {
        const Tf2Rec& r = tf2_recs_[order[i]];
        const bool op = (r.flags & kRecOp) != 0;
        // XProf's breakdown counts every grouped host event, async ones too (markers and
        // wrappers are typed kNotCounted).
        if (r.flags & kRecGroup) {
          breakdown.AddHost(r.group, r.ts, r.ts + r.dur, static_cast<XprofEventType>(r.xprof & 15),
                            static_cast<XprofEventType>((r.xprof >> 4) & 15));
        }
        if ((r.flags & kRecGroup) && !(r.flags & kRecAsync)) {
          groups.AddEvent(r.group, r.ts, r.ts + r.dur,
                          state.FlagsOf(r.ts, r.ts + r.dur, (r.flags & kRecMarker) != 0,
                                        (r.flags & kRecTfData) != 0));
        }
        const Tf2KernelTies::Op tie_op{r.name, r.type};
        ties.HostEvent(r.ts, r.ts + r.dur, op ? &tie_op : nullptr,
                       (r.flags & kRecCorr) ? &r.corr : nullptr);
        if (!op) {
          if ((r.flags & kRecIterator) && !iterators.Add(0, r.name, r.ts, r.dur)) {
            ++b_->stats().ignored["TF2 input-pipeline event past the stages kept per task"];
          }
          ++not_ops;
          continue;
        }
        saw_source |= b_->Str(r.name) == "_SOURCE";
        b_->AddOp(r.ts, r.dur, slot, lane, r.name, r.type, nullptr, 0);
        ++ops_;
      }
    }
    k = end;
  }
  // Device processes: the TensorFlow Ops and Steps rows, then the streams' kernels. A thread's
  // records are together (sorted by pid, tid): what its line is, its stream's sub-device and
  // lane are found once per thread, not per event.
  auto thread_end = [&](size_t i, size_t end) {
    size_t j = i;
    while (j < end && tf2_recs_[order[j]].tid == tf2_recs_[order[i]].tid) ++j;
    return j;
  };
  for (size_t k = 0; k < order.size();) {
    const int64_t pid = tf2_recs_[order[k]].pid;
    size_t end = k;
    while (end < order.size() && tf2_recs_[order[end]].pid == pid) ++end;
    if (plane_of(pid) == Tf2Plane::kGpu) {
      ties.BeginDevice();
      for (size_t i = k; i < end;) {
        const size_t j = thread_end(i, end);
        const Tf2Line line = ClassifyTf2Line(line_of(tf2_recs_[order[i]]));
        for (; i < j; ++i) {
          const Tf2Rec& r = tf2_recs_[order[i]];
          if (line == Tf2Line::kTfOps && (r.flags & kRecOp)) {
            ties.TfOpsRow(r.ts, r.ts + r.dur, {r.name, r.type});
          } else if (line == Tf2Line::kSteps && (r.flags & kRecGroup)) {
            groups.AddStepsRow(r.group, r.ts, r.ts + r.dur);
          }
        }
      }
      for (size_t i = k; i < end;) {
        const size_t j = thread_end(i, end);
        const Tf2Rec& head = tf2_recs_[order[i]];
        const std::string_view line = line_of(head);
        const std::string stream = StreamOfLine(line);
        if (ClassifyTf2Line(line) != Tf2Line::kStream || stream.empty()) {
          derived += static_cast<int64_t>(j - i);
          i = j;
          continue;
        }
        // The stream's sub-device, as the XSpace reader's "<device>/stream:N", on a pid of its
        // own past the file's (TF's pids are 32-bit plane ids; a larger one is cut to 32 bits
        // here, so no arithmetic overflows on a hostile file).
        int64_t stream_no = 0;
        for (char ch : stream) stream_no = (stream_no * 10 + (ch - '0')) % (1 << 20);
        const int64_t stream_pid =
            (int64_t{1} << 60) + (head.pid & 0xffffffff) * (int64_t{1} << 20) + stream_no;
        if (process_names_.count(stream_pid) == 0) {
          process_names_[stream_pid] = std::string(process(pid)) + "/stream:" + stream;
        }
        const uint32_t slot = Slot(stream_pid);
        const uint16_t lane = lane_of(head);
        for (; i < j; ++i) {
          const Tf2Rec& r = tf2_recs_[order[i]];
          if ((r.flags & kRecGroup) && (r.flags & kRecCorr)) {
            breakdown.AddDevice(r.group, r.ts, r.ts + r.dur,
                                static_cast<XprofEventType>((r.xprof >> 8) & 15));
          }
          StrId name = r.name, type = r.type;
          if (!(r.flags & kRecMemcpy)) {
            Tf2KernelTies::Op op;
            bool tied = (r.flags & kRecTied) != 0;
            if (!tied &&
                ties.Tie(r.ts, r.ts + r.dur, (r.flags & kRecCorr) ? &r.corr : nullptr, &op)) {
              name = op.name;
              type = op.type;
              tied = true;
            }
            if (!tied) type = b_->Intern("unknown");
            ++stats->kernels;
            stats->kernels_untied += !tied;
          }
          b_->AddOp(r.ts, r.dur, slot, lane, name, type, nullptr, 0);
          ++ops_;
        }
      }
    }
    k = end;
  }
  if (not_ops > 0) b_->stats().ignored["TF2 trace event that is not a TF op"] += not_ops;
  tf2_host_events_ = not_ops;
  if (derived > 0) b_->stats().ignored["TF2 trace derived device row"] += derived;
  for (const auto& [name, n] : not_device) {
    b_->stats().ignored[Tf2NotDeviceReason(name)] += n;
  }
  // Steps: the host's task (a process without a job is the local task, as AddDevice has it).
  HostMapper own;
  const HostTask host = MapProfileHost(stats->path, hosts_ != nullptr ? hosts_ : &own, notes_);
  b_->MarkHostTask(host.job, 0, host.index);
  if (!iterators.empty()) iterators.FlushAs(b_->AddTask(host.job, 0, host.index), b_);
  if (!saw_source) {
    const uint32_t task = b_->AddTask(host.job, 0, host.index);
    int64_t dropped = 0;
    std::vector<int64_t> ids;
    const std::vector<std::pair<TimeNs, TimeNs>> steps = groups.TakeSteps(&dropped, &ids);
    std::vector<std::pair<int64_t, std::pair<TimeNs, TimeNs>>> by_group;
    by_group.reserve(steps.size());
    for (size_t i = 0; i < steps.size(); ++i) {
      b_->AddStep(task, steps[i].first, steps[i].second);
      by_group.push_back({ids[i], steps[i]});
    }
    if (breakdown.overflowed()) {
      b_->stats().notes.push_back(
          fmt::format("{}: no step-time breakdown for a task: its steps hold more than {} events",
                      stats->path, Tf2StepBreakdown::kMaxEvents));
    }
    const std::vector<StepBreakdownRow> rows = breakdown.Take(task, by_group);
    for (const StepBreakdownRow& row : rows) b_->AddStepBreakdown(row);
    // Against XProf's own tool files beside the file, as for an XSpace (xprof_tools.h).
    XprofCheck check;
    std::string note;
    if (CheckAgainstXprof(stats->path, rows, &check, &note)) {
      b_->stats().xprof_checks.push_back(std::move(check));
    }
    if (!note.empty()) b_->stats().notes.push_back(std::move(note));
    if (dropped > 0) {
      b_->stats().ignored["TF2 trace event groups that are no step (tf.data, function runs)"] +=
          dropped;
    }
  }
  tf2_recs_ = {};
  // The planes of one host: its task from the file's name, as the XSpace reader maps it.
  const std::string task = fmt::format("/job:{}/replica:0/task:{}", host.job, host.index);
  for (auto& [pid, name] : process_names_) {
    // A GPU plane is no device of its own: its events went to its streams' pids above.
    // (Stream pids, past 2^60, are the streams' sub-devices.)
    if (pid < (int64_t{1} << 60) && IsTf2GpuPlane(name)) gpu_planes_.insert(pid);
    name = Tf2PlaneDevice(name, task);  // "" (no device) for other planes
  }
}

void TraceHandler::Finish(FileStats* stats, int threads) {
  if (tf2x_) FinishTf2(stats);
  // Map each pid of this file to a device. Both pids of a device ("... Compute" and
  // "... Tensors"), and a device named by two process_name events, map to one device.
  std::vector<uint32_t> map(pids_.size(), kNoIndex);
  std::vector<bool> no_device(pids_.size(), false);  // named, but not a TF device
  std::vector<StatusOr<DeviceName>> names;
  names.reserve(pids_.size());
  for (size_t slot = 0; slot < pids_.size(); ++slot) {
    auto it = process_names_.find(pids_[slot]);
    names.push_back(it == process_names_.end() ? StatusOr<DeviceName>(InvalidInput("unnamed"))
                                               : ParseDeviceName(it->second));
  }
  // GPUs traced per stream (TF1's GPU tracer writes .../stream:N rows and a .../stream:all row
  // that repeats every kernel of them): their stream:all rows are left out.
  std::set<std::string> per_stream;
  for (const auto& d : names) {
    if (d.ok() && d->sub.rfind("stream:", 0) == 0 && d->sub != "stream:all") {
      DeviceName gpu = *d;
      gpu.sub.clear();
      per_stream.insert(gpu.Canonical());
    }
  }
  std::vector<bool> stream_all(pids_.size(), false);
  std::set<std::string> stream_all_devices;
  for (size_t slot = 0; slot < pids_.size(); ++slot) {
    if (process_names_.count(pids_[slot]) == 0) {
      map[slot] = b_->AddUnknownDevice(pids_[slot]);
      continue;
    }
    if (!names[slot].ok() || gpu_planes_.count(pids_[slot]) > 0) {
      no_device[slot] = true;
      continue;
    }
    DeviceName gpu = *names[slot];
    if (gpu.sub == "stream:all") {
      gpu.sub.clear();
      if (per_stream.count(gpu.Canonical()) > 0) {
        stream_all[slot] = true;
        stream_all_devices.insert(names[slot]->Canonical());
        continue;
      }
    }
    map[slot] = b_->AddDevice(*names[slot]);
  }
  // One pass over the file's ops, only when some row is left out for a reason worth naming.
  bool scan = !stream_all_devices.empty();
  for (size_t slot = 0; slot < pids_.size() && !scan; ++slot) {
    scan = no_device[slot] && process_names_[pids_[slot]] != "Allocators";
  }
  int64_t stream_all_ops = 0, horovod_ops = 0;
  if (scan) {
    std::vector<HorovodEvent> events;
    std::vector<uint32_t> tensor_of(pids_.size(), kNoIndex);
    std::vector<std::string> tensors;
    for (size_t k = first_op_; k < b_->op_count(); ++k) {
      const OpRow& op = b_->op(k);
      if (op.device >= pids_.size()) continue;
      if (stream_all[op.device]) {
        ++stream_all_ops;
      } else if (no_device[op.device]) {
        uint32_t& t = tensor_of[op.device];
        if (t == kNoIndex) {
          t = static_cast<uint32_t>(tensors.size());
          tensors.push_back(process_names_[pids_[op.device]]);
        }
        events.push_back({op.start, op.dur(), t, b_->Str(b_->op_name(k))});
      }
    }
    HorovodStats h;
    if (SummarizeHorovod(std::move(events), tensors, &h)) {
      horovod_negotiations_ = h.negotiations;
      for (size_t k = first_op_; k < b_->op_count(); ++k) {
        const OpRow& op = b_->op(k);
        horovod_ops += op.device < pids_.size() && no_device[op.device];
      }
      b_->AddHorovod(h);
    }
  }
  if (!stream_all_devices.empty()) {
    b_->stats().stream_all_devices += static_cast<int64_t>(stream_all_devices.size());
    b_->stats().stream_all_ops += stream_all_ops;
    if (stream_all_ops > 0) {
      b_->stats().ignored["GPU stream:all ops (the same kernels as the per-stream rows)"] +=
          stream_all_ops;
    }
  }
  HandOverOpenFlows(map);
  size_t dropped = b_->RemapDevices(first_op_, first_flow_, first_tensor_, map, threads);
  if (dropped > 0) {
    dropped -= static_cast<size_t>(stream_all_ops + horovod_ops);
    if (horovod_ops > 0)
      b_->stats().ignored["Horovod timeline events (see Horovod)"] += horovod_ops;
    if (dropped > 0) b_->stats().ignored[kNonDevice] += static_cast<int64_t>(dropped);
    ops_ = static_cast<int64_t>(b_->op_count() - first_op_);
  }
  // TF2 transfers named by rendezvous keys, as the XSpace reader has them: from the key's source
  // device to the event's device, when the key's destination is that device's task (else the
  // host was mapped to another name than TF's, and the source's name would be a task of neither).
  for (const KeyedTransfer& t : keyed_) {
    const uint32_t slot = Slot(t.pid);
    if (slot >= map.size() || map[slot] == kNoIndex || !names[slot].ok()) continue;
    StatusOr<DeviceName> src = ParseDeviceName(t.src_device), dst = ParseDeviceName(t.dst_device);
    const DeviceName& own = *names[slot];
    if (!src.ok() || !dst.ok() || dst->job != own.job || dst->replica != own.replica ||
        dst->task != own.task) {
      continue;
    }
    b_->AddFlow(
        FlowRow{t.ts, t.ts, b_->AddDevice(*src), map[slot], b_->Intern(ProducerOfEdge(t.tensor))});
  }
  for (auto& [key, stack] : open_b_) {
    for (size_t i = 0; i < stack.size(); ++i) Skip("B event without a matching E");
  }
  stats->format = horovod_negotiations_ >= 0
                      ? "horovod-timeline"
                      : (tf2_ ? "tf2-trace" : (tf1_ ? "tf1-timeline" : "chrome-trace"));
  stats->events = events_;
  stats->ops = ops_;
  stats->skipped = skipped_;
  if (ops_ == 0) {
    stats->note = NoOpsNote(no_device);
  } else if (process_names_.empty()) {
    stats->note = fmt::format(
        "a Chrome trace without process names: its {} pid(s) are read as tasks unknown:<pid>, "
        "which the PS/worker rules cannot place (TF timelines name each pid's device)",
        pids_.size());
  }
}

void TraceHandler::HandOverOpenFlows(const std::vector<uint32_t>& map) {
  const uint32_t file = static_cast<uint32_t>(b_->stats().files.size());
  auto device = [&](uint32_t slot) {
    const uint32_t d = slot < map.size() ? map[slot] : kNoIndex;
    return d < kMaxDevices ? d : kNoIndex;
  };
  for (OrphanEnd& e : orphan_ends_) {
    const uint32_t d = device(e.slot);
    if (d == kNoIndex) {
      Skip("flow end without a flow start");
      continue;
    }
    b_->AddOpenFlow({std::move(e.key), std::move(e.name), d, e.ts, file, false});
  }
  orphan_ends_.clear();
  // Starts in key order, so that the order does not depend on the hash map's.
  std::vector<std::pair<const std::string*, const Pending*>> starts;
  for (const auto& [key, p] : flow_starts_) starts.emplace_back(&key, &p);
  std::sort(starts.begin(), starts.end(),
            [](const auto& a, const auto& b) { return *a.first < *b.first; });
  for (const auto& [key, p] : starts) {
    const uint32_t d = device(p->slot);
    if (d != kNoIndex) {
      b_->AddOpenFlow({*key, std::string(b_->Str(p->name)), d, p->ts, file, true});
    }
  }
}

std::string TraceHandler::NoOpsNote(const std::vector<bool>& no_device) const {
  if (horovod_negotiations_ >= 0) {
    return fmt::format(
        "a Horovod timeline (all-reduce training, no parameter servers): its rows are tensors, "
        "not TF devices, so the PS/worker rules had no ops to read; see the Horovod section "
        "({} negotiations)",
        horovod_negotiations_);
  }
  if (events_ == 0) return "the file holds no events: nothing to analyze";
  if (tf2x_) {
    // A TF2 trace-viewer JSON: its planes are the host's and its GPUs', named as TF names them;
    // the capture recorded no TF op and no kernel.
    return Tf2NoOpsNote("TF2 trace-viewer JSON", events_, tf2_host_events_,
                        static_cast<int64_t>(gpu_planes_.size()));
  }
  std::vector<std::string> others;
  for (size_t slot = 0; slot < pids_.size(); ++slot) {
    if (!no_device[slot]) continue;
    auto it = process_names_.find(pids_[slot]);
    if (it != process_names_.end()) others.push_back(it->second);
  }
  std::sort(others.begin(), others.end());
  others.erase(std::unique(others.begin(), others.end()), others.end());
  if (!others.empty()) {
    std::string list;
    for (size_t i = 0; i < others.size() && i < 3; ++i) {
      list += (i ? ", " : "") + ("'" + PrintableCut(others[i]) + "'");
    }
    if (others.size() > 3) list += fmt::format(" and {} more", others.size() - 3);
    return fmt::format(
        "a Chrome trace of {} events whose {} process(es) ({}) are not TensorFlow devices "
        "(expected process names like /job:worker/replica:0/task:0/device:CPU:0): no TF ops to "
        "analyze",
        events_, others.size(), list);
  }
  return fmt::format(
      "{} events, none of them an op (an X event or a B/E pair) on a TensorFlow device: nothing "
      "to analyze",
      events_);
}

}  // namespace tfdiag
