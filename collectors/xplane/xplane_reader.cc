#include "collectors/xplane/xplane_reader.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

#include "absl/container/flat_hash_map.h"
#include "collectors/xplane/proto_stream.h"
#include "collectors/xplane/xline_stream.h"
#include "collectors/xplane/xplane.pb.h"
#include "core/device_name.h"

namespace tfdiag {

namespace {

// A node name: [A-Za-z0-9._][A-Za-z0-9_./>-]* (TSL's IsTfOpName, with the leading '_' that
// TF's own internal nodes such as _SOURCE and _Recv carry).
bool IsNodeChar(char c, bool first) {
  if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
      c == '_') {
    return true;
  }
  return !first && (c == '/' || c == '>' || c == '-');
}

bool IsTypeChar(char c, bool first) {
  if ((c >= 'A' && c <= 'Z') || c == '_') return true;
  return !first && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'));
}

// What an event's metadata is, resolved once per metadata id.
struct EventKind {
  enum Kind : uint8_t { kOp, kIgnored } kind = kIgnored;
  StrId name = 0, type = 0;
  const char* reason = "";  // ImportStats::ignored key for kIgnored
};

// "Stream #12(Compute)" -> "12"; "" when the line is not a stream.
std::string StreamOf(const std::string& line) {
  if (line.rfind("Stream #", 0) != 0) return "";
  size_t i = 8, j = i;
  while (j < line.size() && line[j] >= '0' && line[j] <= '9') ++j;
  return j > i ? line.substr(i, j - i) : "";
}

// A GPU tracer plane ("/device:GPU:N": kernels on stream lines); "/host:CPU" and "/job:" planes
// hold TF ops.
bool IsGpuTracerPlane(const std::string& plane_name, const DeviceName& dn) {
  return dn.type != "CPU" && plane_name.rfind("/device:", 0) == 0;
}

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
  EventKind Classify(const xplane::XPlane& plane, int64_t metadata_id, bool gpu);

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
  absl::flat_hash_map<uint32_t, absl::flat_hash_map<int64_t, std::pair<TimeNs, TimeNs>>> groups_;
  std::unordered_map<std::string, int> planes_left_;
  bool counted_ = false;   // planes_left_ is complete (else spans wait for the file's end)
  size_t first_step_ = 0;  // b_->step_count() when the file began
  // Counts each task's TF-op planes in a pass over the planes' names only (payloads skipped).
  // On any error the counts are dropped (spans are then kept to the file's end) and the main
  // pass reports it.
  void CountTaskPlanes(ProtoFieldStream& in);
  // The task key of a TF-op plane, or "" (GPU tracer planes, planes that are no device).
  std::string TaskKey(const std::string& plane_name);
  static std::string TaskKey(const DeviceName& dn) {
    return fmt::format("{}/{}/{}", TaskJob(dn), dn.replica, dn.task);
  }
  // Adds task's spans as steps and forgets them.
  void FlushGroups(uint32_t task);
};

std::string XSpaceImport::TaskKey(const std::string& plane_name) {
  DeviceName dn;
  if (!PlaneDevice(plane_name, &dn)) return "";
  return IsGpuTracerPlane(plane_name, dn) ? "" : TaskKey(dn);
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
  for (const auto& [g, span] : it->second) b_->AddStep(task, span.first, span.second);
  groups_.erase(it);
}

const HostTask& XSpaceImport::Host() {
  if (host_mapped_) return host_;
  host_mapped_ = true;
  HostMapper* m = o_.hosts != nullptr ? o_.hosts : &own_mapper_;
  const std::string host = HostOfProfileFile(path_);
  host_ = m->Map(host);
  if (o_.notes != nullptr && host_.error.ok()) {
    std::string how = host_.source == "none"
                          ? "no TF_CONFIG entry, pod, replica spec or pod name matches it; give "
                            "--tf-config, or the job's manifest or pod list beside the profile"
                          : host_.source;
    o_.notes->push_back(
        fmt::format("{}: host '{}' read as {}:{} ({})", path_, host, host_.job, host_.index, how));
  }
  return host_;
}

bool XSpaceImport::PlaneDevice(const std::string& plane, DeviceName* dn) {
  std::string full;
  if (plane.rfind("/job:", 0) == 0) {
    full = plane;
  } else if (plane == "/host:CPU") {
    const HostTask& h = Host();
    full = fmt::format("/job:{}/replica:0/task:{}/device:CPU:0", h.job, h.index);
  } else if (plane.rfind("/device:", 0) == 0 && plane.rfind("/device:CUSTOM", 0) != 0) {
    const HostTask& h = Host();
    full = fmt::format("/job:{}/replica:0/task:{}{}", h.job, h.index, plane);
  } else {
    return false;
  }
  StatusOr<DeviceName> parsed = ParseDeviceName(full);
  if (!parsed.ok()) return false;
  *dn = *parsed;
  return true;
}

EventKind XSpaceImport::Classify(const xplane::XPlane& plane, int64_t metadata_id, bool gpu) {
  EventKind k;
  auto it = plane.event_metadata().find(metadata_id);
  if (it == plane.event_metadata().end()) {
    k.reason = "xplane event without metadata";
    return k;
  }
  const std::string& name = it->second.name();
  if (gpu) {
    k.kind = EventKind::kOp;  // kernels and memcpys: named by tf_op when they have it
    k.name = b_->Intern(name);
    k.type = b_->Intern(name.rfind("Memcpy", 0) == 0 ? name : "unknown");
    return k;
  }
  std::string_view node, type;
  if (ParseTfOpName(name, &node, &type)) {
    k.kind = EventKind::kOp;
    k.name = b_->Intern(node);
    k.type = b_->Intern(type);
    if (node == "_SOURCE" && !saw_source_) {
      saw_source_ = true;
      b_->TruncateSteps(first_step_);  // steps come from the _SOURCE ops instead (and the spans
                                       // met so far are freed after the plane)
    }
    return k;
  }
  for (const char* rpc : {"RecvTensor", "SendTensor"}) {
    if (name == rpc || name.rfind(std::string(rpc) + ":", 0) == 0 ||
        name.rfind(std::string(rpc) + " ", 0) == 0) {
      k.kind = EventKind::kOp;
      k.name = b_->Intern(rpc);
      k.type = k.name;
      return k;
    }
  }
  if (name.rfind("Iterator::", 0) == 0) {
    k.reason = "xplane input-pipeline event (Iterator::)";
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
  int64_t group_stat = -1, tf_op_stat = -1;
  for (const auto& [id, sm] : plane.stat_metadata()) {
    if (sm.name() == "group_id") group_stat = id;
    if (sm.name() == "tf_op") tf_op_stat = id;
  }
  std::unordered_map<int64_t, EventKind> kinds;
  auto& task_groups = groups_[task_];  // used on TF-op planes only (task_ is theirs)
  std::unordered_map<std::string, uint32_t> stream_devices;
  uint16_t lane = 0;
  TFDIAG_RETURN_IF_ERROR(in.Seek(pf.payload));
  ProtoFieldStream::Field f;
  WireLineHead head;
  const std::string line_what = what + ".lines element";
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
    auto on_head = [&](const WireLineHead& h) {
      if (device == kNoIndex && !gpu) {
        b_->stats().ignored["xplane plane that is not a device (" + plane.name() + ")"] += h.events;
        fs_.events += h.events;
        return false;
      }
      if (!gpu) return true;
      const std::string stream = StreamOf(h.name);
      if (stream.empty()) {
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
      auto [kit, fresh] = kinds.emplace(ev.metadata_id, EventKind{});
      if (fresh) kit->second = Classify(plane, ev.metadata_id, gpu);
      const EventKind& k = kit->second;
      const TimeNs start = h.timestamp_ns + ev.offset_ps / 1000;
      const TimeNs dur = ev.duration_ps / 1000;
      // Group spans only while no _SOURCE op was met: with one, steps come from _SOURCE ops.
      if (!gpu && task_ != kNoIndex && !saw_source_) {
        for (const int64_t g : ev.groups) {
          auto [git, gnew] = task_groups.try_emplace(g, start, start + dur);
          if (!gnew) {
            git->second.first = std::min(git->second.first, start);
            git->second.second = std::max(git->second.second, start + dur);
          }
        }
      }
      if (k.kind != EventKind::kOp) {
        ++b_->stats().ignored[k.reason];
        return;
      }
      if (dur < 0 || ev.offset_ps < 0) {
        ++b_->stats().skipped["xplane event with a negative time"];
        ++fs_.skipped;
        return;
      }
      StrId name = k.name, type = k.type;
      for (size_t i = 0; gpu && i < ev.tf_ops.size(); ++i) {
        std::string_view node, t;
        std::string_view v = ev.tf_ops[i];
        if (ev.tf_op_refs[i] >= 0) {
          auto r = plane.stat_metadata().find(ev.tf_op_refs[i]);
          v = r != plane.stat_metadata().end() ? std::string_view(r->second.name())
                                               : std::string_view();
        }
        if (ParseTfOpName(v, &node, &t)) {
          name = b_->Intern(node);
          type = b_->Intern(t);
        }
      }
      b_->AddOp(start, dur, dev, lane, name, type, nullptr, 0);
      ++fs_.ops;
      // Packed every kPackRows ops, not only per plane: a PS plane of a large job holds tens of
      // millions (Finish merges a device's parts without unpacking them).
      if (b_->op_count() >= kPackRows) b_->PackOps();
    };
    TFDIAG_RETURN_IF_ERROR(ReadXLineStreaming(&in, f, gpu ? -1 : group_stat, gpu ? tf_op_stat : -1,
                                              line_what, &head, on_head, on_event));
    if (lane < UINT16_MAX) ++lane;
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
      const bool gpu = IsGpuTracerPlane(plane.name(), dn);
      // A GPU plane's ops go to its stream sub-devices (added as their lines are met).
      const uint32_t device = gpu ? kNoIndex : b_->AddDevice(dn);
      if (!gpu) task_ = b_->AddTask(TaskJob(dn), dn.replica, dn.task);
      TFDIAG_RETURN_IF_ERROR(ImportPlane(in, f, plane, device, gpu, dn, what));
      if (saw_source_) {
        groups_ = {};
      } else if (!gpu && counted_ && --planes_left_[TaskKey(dn)] <= 0) {
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
  } else {
    std::vector<uint32_t> left;
    for (const auto& [task, spans] : groups_) left.push_back(task);
    std::sort(left.begin(), left.end());
    for (uint32_t task : left) FlushGroups(task);
  }
  groups_ = {};
  b_->stats().files.push_back(fs_);
  return OkStatus();
}

}  // namespace

bool ParseTfOpName(std::string_view full, std::string_view* node, std::string_view* type) {
  const size_t colon = full.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 >= full.size()) return false;
  if (full.find(':', colon + 1) != std::string_view::npos) return false;
  std::string_view n = full.substr(0, colon), t = full.substr(colon + 1);
  for (size_t i = 0; i < n.size(); ++i) {
    if (!IsNodeChar(n[i], i == 0)) return false;
  }
  for (size_t i = 0; i < t.size(); ++i) {
    if (!IsTypeChar(t[i], i == 0)) return false;
  }
  *node = n;
  *type = t;
  return true;
}

Status ReadXSpace(const std::string& path, CaptureBuilder* builder,
                  const ProfileReadOptions& options) {
  XSpaceImport imp(path, builder, options);
  return imp.Run();
}

}  // namespace tfdiag
