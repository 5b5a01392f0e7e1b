#include "collectors/xplane/xplane_reader.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

#include "absl/container/flat_hash_map.h"
#include "collectors/xplane/proto_stream.h"
#include "collectors/xplane/step_breakdown.h"
#include "collectors/xplane/tf2_iterators.h"
#include "collectors/xplane/xline_stream.h"
#include "collectors/xplane/xplane.pb.h"
#include "collectors/xplane/xprof_tools.h"
#include "core/device_name.h"

namespace tfdiag {

namespace {

// What an event's metadata is, resolved once per metadata id.
struct EventKind {
  enum Kind : uint8_t { kOp, kIgnored } kind = kIgnored;
  StrId name = 0, type = 0;
  const char* reason = "";  // ImportStats::ignored key for kIgnored
  bool marker = false;      // a step marker by its name (IsStepMarkerName)
  bool tf_data = false;     // a tf.data captured-function run (IsTfDataFunctionName)
  bool memcpy = false;      // GPU planes: a memcpy, not a kernel
  bool transfer = false;    // a transfer op (IsTransferOpType): its rendezvous key is read
  bool iterator = false;    // a tf.data pipeline stage's GetNext (tf2_iterators.h), `name` its path
  std::string full;         // transfers: the event's metadata name (it may hold the key)
  // XProf's event type (step_breakdown.h): host events [has device][has correlation_id];
  // device stream events [0][0].
  XprofEventType xprof[2][2] = {};
};

// The job of a TF-op plane's task ("localhost" when its device name has none).
std::string TaskJob(const DeviceName& dn) { return dn.job.empty() ? "localhost" : dn.job; }

// Plain op rows held at most before they are packed (12 MiB).
constexpr size_t kPackRows = size_t{1} << 19;

class XSpaceImport {
 public:
  XSpaceImport(const std::string& path, CaptureBuilder* b, const ProfileReadOptions& o)
      : path_(path), b_(b), o_(o) {}

  Status Run();

 private:
  // The device a plane's events go to; false when the plane is not a device.
  bool PlaneDevice(const std::string& plane, DeviceName* dn);
  const HostTask& Host();
  // Reads the plane at `pf` in two passes over its bytes: its name and metadata (into `plane`,
  // without lines), then its lines one at a time, each line's events one at a time off the
  // stream (`device`: kNoIndex when the plane is no device, its events only counted). Peak
  // memory: the metadata and one XEvent.
  Status ReadPlaneMetadata(ProtoFieldStream& in, const ProtoFieldStream::Field& pf,
                           xplane::XPlane* plane, const std::string& what);
  Status ImportPlane(ProtoFieldStream& in, const ProtoFieldStream::Field& pf,
                     const xplane::XPlane& plane, uint32_t task_device, bool gpu,
                     const DeviceName& dn, const std::string& what);
  // `gpu`: a stream event (kernel or memcpy); `device_plane`: on a GPU plane (a derived row's
  // op names there do not count as the host's ops, e.g. for _SOURCE).
  EventKind Classify(const xplane::XPlane& plane, int64_t metadata_id, bool gpu, bool device_plane);

  std::string path_;
  CaptureBuilder* b_;
  const ProfileReadOptions& o_;
  HostMapper own_mapper_;
  bool host_mapped_ = false;
  HostTask host_;
  FileStats fs_;
  bool saw_source_ = false;
  uint32_t task_ = kNoIndex;  // the host's task (host planes)
  // Steps: the span of each group_id of a task, over the task's planes; a task's spans become
  // steps (AddStep) once its last plane is read, so that a 1 GB XSpace (millions of groups: a PS
  // serves one per worker step) holds them once, as steps. `planes_left_`: per task key
  // ("job/replica/task"), its TF-op planes not yet read (CountTaskPlanes).
  absl::flat_hash_map<uint32_t, Tf2StepGroups> groups_;
  // XProf's step breakdown: each task's typed events by group, rows made with its steps.
  absl::flat_hash_map<uint32_t, Tf2StepBreakdown> breakdowns_;
  Tf2InputIterators iterators_;  // the file's tf.data pipeline stages, by task
  size_t first_breakdown_ = 0;   // b_->step_breakdown_count() when the file began
  Tf2KernelTies ties_;
  int64_t groups_dropped_ = 0;
  int64_t host_not_ops_ = 0, gpu_planes_ = 0;  // for the note of a file without ops
  std::unordered_map<std::string, int> planes_left_;
  bool counted_ = false;   // planes_left_ is complete (else spans wait for the file's end)
  size_t first_step_ = 0;  // b_->step_count() when the file began
  // Counts each task's TF-op planes in a pass over the planes' names only (payloads skipped).
  // On any error the counts are dropped (spans are then kept to the file's end) and the main
  // pass reports it.
  void CountTaskPlanes(ProtoFieldStream& in);
  // The task key of a plane (GPU tracer planes: their host's task), or "" (no device).
  std::string TaskKey(const std::string& plane_name);
  static std::string TaskKey(const DeviceName& dn) {
    return fmt::format("{}/{}/{}", TaskJob(dn), dn.replica, dn.task);
  }
  // Adds task's spans as steps and forgets them.
  void FlushGroups(uint32_t task);
  // Compares the breakdown of this file's steps with XProf's tool file beside it, if any
  // (xprof_tools.h): an XprofCheck and a note.
  void CompareWithXprof();
  // A transfer event starting at `start` named `name` with the rendezvous key stat `stat` ("":
  // none) on `plane` (device `plane_device`): the transfer from the key's source device to the
  // plane's device, as a flow
  // (RecvTensor labels give the same in RunMetadata); nothing when no key parses.
  void AddKeyedTransfer(std::string_view name, std::string_view stat, TimeNs start,
                        const DeviceName& plane, uint32_t plane_device);
  std::unordered_map<std::string, uint32_t> key_devices_;  // rendezvous key device -> index
};

void XSpaceImport::AddKeyedTransfer(std::string_view name, std::string_view stat, TimeNs start,
                                    const DeviceName& plane, uint32_t plane_device) {
  RendezvousKey key;
  if (!RendezvousKeyOfEvent(name, stat, &key)) return;
  // The key names TF's cluster tasks; the plane's task is the host's mapping (host_tasks.h). When
  // the key's destination is not the plane's task the two namings differ, and the source's name
  // would be a task of neither: no transfer then.
  StatusOr<DeviceName> src = ParseDeviceName(key.src_device), dst = ParseDeviceName(key.dst_device);
  if (!src.ok() || !dst.ok() || TaskKey(*dst) != TaskKey(plane)) return;
  auto [it, fresh] = key_devices_.emplace(std::string(key.src_device), kNoIndex);
  if (fresh) it->second = b_->AddDevice(*src);
  b_->AddFlow(
      FlowRow{start, start, it->second, plane_device, b_->Intern(ProducerOfEdge(key.tensor))});
}

std::string XSpaceImport::TaskKey(const std::string& plane_name) {
  DeviceName dn;
  if (!PlaneDevice(plane_name, &dn)) return "";
  return TaskKey(dn);
}

void XSpaceImport::CountTaskPlanes(ProtoFieldStream& in) {
  ProtoFieldStream::Field f, pf;
  bool ok = true;
  while (ok) {
    StatusOr<bool> more = in.Next(in.size(), &f);
    if (!more.ok() || !*more) {
      ok = more.ok();
      break;
    }
    if (f.number == 1 && f.wire_type == 2) {
      std::string name;
      while (true) {
        StatusOr<bool> m = in.Next(f.payload + f.length, &pf);
        if (!m.ok()) ok = false;
        if (!m.ok() || !*m) break;
        if (pf.number == 2 && pf.wire_type == 2) {
          ok = in.ReadBytes(pf, &name).ok();
          break;
        }
        if (!in.Skip(pf).ok()) ok = false;
        if (!ok) break;
      }
      const std::string key = ok ? TaskKey(name) : "";
      if (!key.empty()) ++planes_left_[key];
      ok = ok && in.Seek(f.payload + f.length).ok();
    } else {
      ok = in.Skip(f).ok();
    }
  }
  counted_ = ok;
}

void XSpaceImport::FlushGroups(uint32_t task) {
  auto it = groups_.find(task);
  if (it == groups_.end()) return;
  std::vector<int64_t> ids;
  const std::vector<std::pair<TimeNs, TimeNs>> steps = it->second.TakeSteps(&groups_dropped_, &ids);
  std::vector<std::pair<int64_t, std::pair<TimeNs, TimeNs>>> by_group;
  by_group.reserve(steps.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    b_->AddStep(task, steps[i].first, steps[i].second);
    by_group.push_back({ids[i], steps[i]});
  }
  groups_.erase(it);
  Tf2StepBreakdown& bd = breakdowns_[task];
  if (bd.overflowed()) {
    b_->stats().notes.push_back(
        fmt::format("{}: no step-time breakdown for a task: its steps hold more than {} events",
                    path_, Tf2StepBreakdown::kMaxEvents));
  }
  for (const StepBreakdownRow& row : bd.Take(task, by_group)) b_->AddStepBreakdown(row);
  breakdowns_.erase(task);
}

const HostTask& XSpaceImport::Host() {
  if (host_mapped_) return host_;
  host_mapped_ = true;
  host_ = MapProfileHost(path_, o_.hosts != nullptr ? o_.hosts : &own_mapper_, o_.notes);
  b_->MarkHostTask(host_.job, 0, host_.index);
  return host_;
}

bool XSpaceImport::PlaneDevice(const std::string& plane, DeviceName* dn) {
  if (Tf2PlaneDevice(plane, "").empty()) return false;
  const std::string full = plane.rfind("/job:", 0) == 0
                               ? plane
                               : Tf2PlaneDevice(plane, fmt::format("/job:{}/replica:0/task:{}",
                                                                   Host().job, Host().index));
  StatusOr<DeviceName> parsed = ParseDeviceName(full);
  if (!parsed.ok()) return false;
  *dn = *parsed;
  return true;
}

EventKind XSpaceImport::Classify(const xplane::XPlane& plane, int64_t metadata_id, bool gpu,
                                 bool device_plane) {
  EventKind k;
  auto it = plane.event_metadata().find(metadata_id);
  if (it == plane.event_metadata().end()) {
    k.reason = "xplane event without metadata";
    return k;
  }
  const std::string& name = it->second.name();
  k.marker = IsStepMarkerName(name);
  k.tf_data = IsTfDataFunctionName(name);
  if (gpu) {
    k.xprof[0][0] = ClassifyXprofDeviceEvent(name);
  } else {
    for (int d = 0; d < 2; ++d) {
      for (int corr = 0; corr < 2; ++corr) {
        k.xprof[d][corr] = ClassifyXprofHostEvent(name, d != 0, corr != 0, false);
      }
    }
  }
  if (gpu) {
    k.kind = EventKind::kOp;  // kernels and memcpys: typed by their TF op when tied
    k.memcpy = name.rfind("Memcpy", 0) == 0;
    k.name = b_->Intern(name);
    k.type = b_->Intern(k.memcpy ? name : "unknown");
    return k;
  }
  std::string_view node, type;
  if (Tf2OpOf(name, "", &node, &type)) {
    k.kind = EventKind::kOp;
    k.name = b_->Intern(node);
    k.type = b_->Intern(type);
    k.transfer = IsTransferOpType(type);
    if (k.transfer) k.full = name;
    if (node == "_SOURCE" && !saw_source_ && !device_plane) {
      saw_source_ = true;
      b_->TruncateStepBreakdowns(first_breakdown_);
      b_->TruncateSteps(first_step_);  // steps come from the _SOURCE ops instead (and the spans
                                       // met so far are freed after the plane)
    }
    return k;
  }
  if (IsInputIteratorName(name)) {
    k.reason = "xplane input-pipeline event (Iterator::)";
    k.iterator = !device_plane;
    if (k.iterator) k.name = b_->Intern(name);
  } else if (name.find("Grpc") != std::string::npos || name.find("RPC") != std::string::npos ||
             name.rfind("RunGraph", 0) == 0 || name.rfind("RemoteCall", 0) == 0) {
    k.reason = "xplane RPC event";
  } else {
    k.reason = "xplane host event that is not a TF op";
  }
  return k;
}

Status XSpaceImport::ReadPlaneMetadata(ProtoFieldStream& in, const ProtoFieldStream::Field& pf,
                                       xplane::XPlane* plane, const std::string& what) {
  plane->Clear();
  xplane::XEventMetadataEntry em;
  xplane::XStatMetadataEntry sm;
  ProtoFieldStream::Field f;
  const int64_t end = pf.payload + pf.length;
  while (true) {
    StatusOr<bool> more = in.Next(end, &f);
    if (!more.ok()) return more.status();
    if (!*more) return OkStatus();
    const bool len = f.wire_type == 2;
    if (f.number == 2 && len) {
      TFDIAG_RETURN_IF_ERROR(in.ReadBytes(f, plane->mutable_name()));
    } else if (f.number == 4 && len) {
      TFDIAG_RETURN_IF_ERROR(in.Parse(f, &em, what + ".event_metadata entry"));
      (*plane->mutable_event_metadata())[em.key()] = std::move(*em.mutable_value());
    } else if (f.number == 5 && len) {
      TFDIAG_RETURN_IF_ERROR(in.Parse(f, &sm, what + ".stat_metadata entry"));
      (*plane->mutable_stat_metadata())[sm.key()] = std::move(*sm.mutable_value());
    } else if ((f.number >= 2 && f.number <= 6) && !len) {
      return in.Error(f.offset, fmt::format("expected {} field {} to be a message or string "
                                            "(wire type 2), got wire type {}",
                                            what, f.number, f.wire_type));
    } else {
      TFDIAG_RETURN_IF_ERROR(in.Skip(f));  // id, lines (second pass), stats, unknown fields
    }
  }
}

Status XSpaceImport::ImportPlane(ProtoFieldStream& in, const ProtoFieldStream::Field& pf,
                                 const xplane::XPlane& plane, uint32_t device, bool gpu,
                                 const DeviceName& dn, const std::string& what) {
  WireStatIds ids = PlaneStatIds(plane);
  if (!gpu) ids.tf_op = ids.annotation = -1;  // host events are TF ops by their own name
  std::unordered_map<int64_t, EventKind> kinds, stream_kinds;  // by metadata id
  Tf2StepGroups& task_groups = groups_[task_];  // task_: the plane's task (a GPU's: its host's)
  Tf2StepBreakdown& task_breakdown = breakdowns_[task_];
  std::unordered_map<std::string, uint32_t> stream_devices;
  if (gpu) ties_.BeginDevice();
  uint16_t lane = 0;
  ProtoFieldStream::Field f;
  WireLineHead head;
  const std::string line_what = what + ".lines element";
  // A GPU plane is read twice: its TensorFlow Ops rows first (derived lines follow the streams),
  // then the rest, so that each kernel is tied as it is read (nothing held per kernel).
  for (int pass = gpu ? 0 : 1; pass < 2; ++pass) {
    TFDIAG_RETURN_IF_ERROR(in.Seek(pf.payload));
    while (true) {
      StatusOr<bool> more = in.Next(pf.payload + pf.length, &f);
      if (!more.ok()) return more.status();
      if (!*more) break;
      if (f.number != 3 || f.wire_type != 2) {
        TFDIAG_RETURN_IF_ERROR(in.Skip(f));
        continue;
      }
      // The line's events are decoded one at a time off the stream (xline_stream.h), after its
      // head has chosen the device they go to (or that they are only counted).
      uint32_t dev = device;
      Tf2Line line = Tf2Line::kThread;
      Tf2LineState line_state;
      auto on_head = [&](const WireLineHead& h) {
        if (device == kNoIndex && !gpu) {
          b_->stats().ignored[Tf2NotDeviceReason(plane.name())] += h.events;
          fs_.events += h.events;
          return false;
        }
        line = gpu ? ClassifyTf2Line(h.name) : Tf2Line::kThread;
        if (!gpu) {
          ties_.BeginHostLine();
          return true;
        }
        if (pass == 0) return line == Tf2Line::kTfOps;  // read for the ties, not as ops
        if (line == Tf2Line::kTfOps || line == Tf2Line::kSteps) {
          b_->stats().ignored["xplane derived device line (" + h.name + ")"] += h.events;
          return line == Tf2Line::kSteps;  // read for the steps (TensorFlow Ops: in pass 0)
        }
        const std::string stream = StreamOfLine(h.name);
        if (line != Tf2Line::kStream || stream.empty()) {
          b_->stats().ignored["xplane derived device line (" + h.name + ")"] += h.events;
          fs_.events += h.events;
          return false;
        }
        auto [it, fresh] = stream_devices.emplace(stream, 0);
        if (fresh) {
          DeviceName sd = dn;
          sd.sub = "stream:" + stream;
          it->second = b_->AddDevice(sd);
        }
        dev = it->second;
        return true;
      };
      auto on_event = [&](const WireLineHead& h, const WireEvent& ev) {
        ++fs_.events;
        if (ev.data != WireEvent::kOffset) {
          ++b_->stats().ignored["xplane aggregated event (num_occurrences)"];
          return;
        }
        const bool stream = gpu && line == Tf2Line::kStream;
        auto [kit, fresh] = (stream ? stream_kinds : kinds).emplace(ev.metadata_id, EventKind{});
        if (fresh) kit->second = Classify(plane, ev.metadata_id, stream, gpu);
        const EventKind& k = kit->second;
        const TimeNs start = OnWallClock(h.timestamp_ns, o_.session_wall_ns) + ev.offset_ps / 1000;
        const TimeNs dur = ev.duration_ps / 1000;
        const bool grouping = task_ != kNoIndex && !saw_source_;
        if (line == Tf2Line::kSteps) {
          for (const int64_t g : ev.groups) {
            if (grouping) task_groups.AddStepsRow(g, start, start + dur);
          }
          return;
        }
        if (line == Tf2Line::kTfOps) {
          if (k.kind == EventKind::kOp) ties_.TfOpsRow(start, start + dur, {k.name, k.type});
          return;
        }
        // Group spans only while no _SOURCE op was met: with one, steps come from _SOURCE ops.
        if (!gpu && grouping && !ev.async) {
          const uint8_t flags =
              line_state.FlagsOf(start, start + dur, k.marker || ev.marker, k.tf_data);
          for (const int64_t g : ev.groups) task_groups.AddEvent(g, start, start + dur, flags);
        }
        // XProf's breakdown counts every grouped host event, async ones too, but markers.
        if (!gpu && grouping && !ev.step_name) {
          const int corr = ev.has_correlation ? 1 : 0;
          for (const int64_t g : ev.groups) {
            task_breakdown.AddHost(g, start, start + dur, k.xprof[1][corr], k.xprof[0][corr]);
          }
        }
        if (gpu && grouping && line == Tf2Line::kStream && ev.has_correlation) {
          for (const int64_t g : ev.groups) {
            task_breakdown.AddDevice(g, start, start + dur, k.xprof[0][0]);
          }
        }
        if (!gpu) {
          const Tf2KernelTies::Op op{k.name, k.type};
          ties_.HostEvent(start, start + dur, k.kind == EventKind::kOp ? &op : nullptr,
                          ev.has_correlation ? &ev.correlation : nullptr);
        }
        if (k.iterator && task_ != kNoIndex && dur >= 0 && ev.offset_ps >= 0 &&
            !iterators_.Add(task_, k.name, start, dur)) {
          ++b_->stats().ignored["xplane input-pipeline event past the stages kept per task"];
        }
        if (k.kind != EventKind::kOp) {
          host_not_ops_ += !gpu;
          ++b_->stats().ignored[k.reason];
          return;
        }
        if (dur < 0 || ev.offset_ps < 0) {
          ++b_->stats().skipped["xplane event with a negative time"];
          ++fs_.skipped;
          return;
        }
        // A string stat's value: its str_value `v`, or for a ref_value (`ref` >= 0) the name of
        // the stat metadata it names ("" when there is none).
        auto text = [&](std::string_view v, int64_t ref) -> std::string_view {
          if (ref < 0) return v;
          auto r = plane.stat_metadata().find(ref);
          return r != plane.stat_metadata().end() ? std::string_view(r->second.name())
                                                  : std::string_view();
        };
        StrId name = k.name, type = k.type;
        bool tied = false;
        for (size_t i = 0; gpu && i < ev.tf_ops.size(); ++i) {
          std::string_view node, t;
          if (ParseTfOpName(text(ev.tf_ops[i], ev.tf_op_refs[i]), &node, &t)) {
            name = b_->Intern(node);
            type = b_->Intern(t);
            tied = true;
          }
        }
        // A kernel is typed and named by its TF op (its tf_op stat, else its annotation, else the
        // launch's correlation_id, else the device's TensorFlow Ops row: the trace JSON reader's
        // order); tied to none, it keeps its kernel name and type "unknown".
        if (gpu && !k.memcpy) {
          std::string_view node, t;
          if (!tied && TfOpOfAnnotation(text(ev.annotation, ev.annotation_ref), &node, &t)) {
            name = b_->Intern(node);
            type = b_->Intern(t);
            tied = true;
          }
          Tf2KernelTies::Op op;
          if (!tied &&
              ties_.Tie(start, start + dur, ev.has_correlation ? &ev.correlation : nullptr, &op)) {
            name = op.name;
            type = op.type;
            tied = true;
          }
          ++fs_.kernels;
          fs_.kernels_untied += !tied;
        }
        b_->AddOp(start, dur, dev, lane, name, type, nullptr, 0);
        ++fs_.ops;
        if (k.transfer) {  // the key: a str_value, or a ref_value naming a stat metadata
          AddKeyedTransfer(k.full, text(ev.rendezvous_key, ev.rendezvous_ref), start, dn, dev);
        }
        // Packed every kPackRows ops, not only per plane: a PS plane of a large job holds tens of
        // millions (Finish merges a device's parts without unpacking them).
        if (b_->op_count() >= kPackRows) b_->PackOps();
      };
      TFDIAG_RETURN_IF_ERROR(ReadXLineStreaming(&in, f, ids, line_what, &head, on_head, on_event));
      if (pass == 1 && lane < UINT16_MAX) ++lane;
    }
  }
  return OkStatus();
}

Status XSpaceImport::Run() {
  ProtoFieldStream in;
  TFDIAG_RETURN_IF_ERROR(in.Open(path_));
  fs_.path = path_;
  fs_.format = "xplane";
  fs_.bytes = in.size();
  if (in.size() == 0)
    return InvalidInput("{}: byte 0: expected an XSpace, the file is empty", path_);
  first_step_ = b_->step_count();
  first_breakdown_ = b_->step_breakdown_count();
  CountTaskPlanes(in);
  TFDIAG_RETURN_IF_ERROR(in.Seek(0));
  xplane::XPlane plane;
  ProtoFieldStream::Field f;
  int index = 0;
  while (true) {
    StatusOr<bool> more = in.Next(in.size(), &f);
    if (!more.ok()) return more.status();
    if (!*more) break;
    if (f.number != 1) {
      if (f.number > 4) {
        return in.Error(f.offset, fmt::format("expected an XSpace field (1-4), got field {}: "
                                              "not an XSpace",
                                              f.number));
      }
      TFDIAG_RETURN_IF_ERROR(in.Skip(f));
      continue;
    }
    if (f.wire_type != 2) {
      return in.Error(f.offset, "expected XSpace.planes (field 1, a message): not an XSpace");
    }
    const std::string what = fmt::format("XSpace.planes[{}]", index);
    TFDIAG_RETURN_IF_ERROR(ReadPlaneMetadata(in, f, &plane, what));
    ++index;
    DeviceName dn;
    const bool device_plane = PlaneDevice(plane.name(), &dn);
    if (host_mapped_ && !host_.error.ok()) return host_.error.WithPrefix(path_);
    if (!device_plane) {
      TFDIAG_RETURN_IF_ERROR(ImportPlane(in, f, plane, kNoIndex, false, dn, what));
    } else {
      const bool gpu = IsTf2GpuPlane(plane.name());
      gpu_planes_ += gpu;
      // A GPU plane's ops go to its stream sub-devices (added as their lines are met).
      const uint32_t device = gpu ? kNoIndex : b_->AddDevice(dn);
      task_ = b_->AddTask(TaskJob(dn), dn.replica, dn.task);  // a GPU plane's: its host's
      TFDIAG_RETURN_IF_ERROR(ImportPlane(in, f, plane, device, gpu, dn, what));
      if (saw_source_) {
        groups_ = {};
        breakdowns_ = {};
      } else if (counted_ && --planes_left_[TaskKey(dn)] <= 0) {
        FlushGroups(task_);
      }
      // The plane's ops are complete: packed now, so that the plain rows of one plane at a time
      // are held, not the file's (issue 17).
      b_->PackOps();
    }
    if (o_.progress) o_.progress(in.position(), in.size());
  }
  if (index == 0) {
    return in.Error(0, "expected an XSpace with at least one plane (XSpace.planes, field 1)");
  }
  if (saw_source_) {
    b_->TruncateSteps(first_step_);  // steps come from the _SOURCE ops instead
    b_->TruncateStepBreakdowns(first_breakdown_);
  } else {
    std::vector<uint32_t> left;
    for (const auto& [task, spans] : groups_) left.push_back(task);
    std::sort(left.begin(), left.end());
    for (uint32_t task : left) FlushGroups(task);
  }
  groups_ = {};
  breakdowns_ = {};
  iterators_.FlushByTask(b_);
  if (groups_dropped_ > 0) {
    b_->stats().ignored["xplane event groups that are no step (tf.data, function runs)"] +=
        groups_dropped_;
  }
  if (fs_.ops == 0 && fs_.events > 0) {
    fs_.note = Tf2NoOpsNote("TF2 XSpace", fs_.events, host_not_ops_, gpu_planes_);
  }
  CompareWithXprof();
  b_->stats().files.push_back(fs_);
  return OkStatus();
}

void XSpaceImport::CompareWithXprof() {
  const std::vector<StepBreakdownRow>& all = b_->step_breakdowns();
  std::vector<StepBreakdownRow> mine(all.begin() + std::min(first_breakdown_, all.size()),
                                     all.end());
  XprofCheck check;
  std::string note;
  if (CheckAgainstXprof(path_, mine, &check, &note)) {
    b_->stats().xprof_checks.push_back(std::move(check));
  }
  if (!note.empty()) b_->stats().notes.push_back(std::move(note));
}

}  // namespace

Status ReadXSpace(const std::string& path, CaptureBuilder* builder,
                  const ProfileReadOptions& options) {
  XSpaceImport imp(path, builder, options);
  return imp.Run();
}

}  // namespace tfdiag
