// ReadProfilerTrace (xplane_reader.h): the TF 2.0-2.1 profiler's Trace, read event by event.
#include <fmt/format.h>

#include <optional>
#include <string_view>

#include "collectors/xplane/proto_stream.h"
#include "collectors/xplane/trace.pb.h"
#include "collectors/xplane/xplane_reader.h"
#include "core/device_name.h"

namespace tfdiag {

namespace {

// "id=0,device=/job:localhost/replica:0/task:0/device:CPU:0,async=false" -> the device.
std::string_view DeviceOfLabel(std::string_view label) {
  size_t at = label.find("device=");
  if (at == std::string_view::npos) return {};
  at += 7;
  const size_t end = label.find(',', at);
  return label.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at);
}

}  // namespace

Status ReadProfilerTrace(const std::string& path, CaptureBuilder* b,
                         const ProfileReadOptions& options) {
  ProtoFieldStream in;
  TFDIAG_RETURN_IF_ERROR(in.Open(path));
  FileStats fs;
  fs.path = path;
  fs.format = "profiler-trace";
  fs.bytes = in.size();
  if (in.size() == 0) return in.Error(0, "expected a tensorflow.profiler.Trace, the file is empty");
  xplane::TraceEvent ev;
  xplane::DeviceEntry dev;
  std::unordered_map<std::string, uint32_t> devices;
  HostMapper own_mapper;
  std::optional<HostTask> host;  // the file's host's task, mapped at its first local device
  ProtoFieldStream::Field f;
  int64_t n_fields = 0;
  while (true) {
    StatusOr<bool> more = in.Next(in.size(), &f);
    if (!more.ok()) return more.status();
    if (!*more) break;
    ++n_fields;
    if ((f.number == 1 || f.number == 4) && f.wire_type != 2) {
      return in.Error(f.offset,
                      "expected Trace.devices or Trace.trace_events (a message): not a "
                      "tensorflow.profiler.Trace");
    }
    if (f.number == 1) {
      TFDIAG_RETURN_IF_ERROR(in.Parse(f, &dev, "a Trace.devices entry"));
      continue;
    }
    if (f.number != 4) {
      if (f.number > 11) {
        return in.Error(f.offset, fmt::format("expected a Trace field, got field {}: not a "
                                              "tensorflow.profiler.Trace",
                                              f.number));
      }
      TFDIAG_RETURN_IF_ERROR(in.Skip(f));
      continue;
    }
    TFDIAG_RETURN_IF_ERROR(in.Parse(f, &ev, "a Trace.trace_events element, a TraceEvent"));
    ++fs.events;
    auto label = ev.args().find("label");
    std::string_view device =
        label == ev.args().end() ? std::string_view() : DeviceOfLabel(label->second);
    std::string_view node, type;
    const bool named_op = ParseTfOpName(ev.name(), &node, &type);
    if (device.empty()) {
      ++b->stats().ignored[named_op ? "profiler-trace op without a device"
                                    : "profiler-trace event that is not an op execution"];
      continue;
    }
    auto [it, fresh] = devices.emplace(std::string(device), kNoIndex);
    if (fresh) {
      StatusOr<DeviceName> dn = ParseDeviceName(device);
      if (dn.ok() && (dn->job.empty() || dn->job == "localhost")) {
        // The profiled host's own process (eager, no cluster): its task is the host's, as an
        // XSpace's /host:CPU plane (host_tasks.h), so that two hosts' local traces in one run
        // are two tasks, not one "localhost:0".
        if (!host) {
          host = MapProfileHost(path, options.hosts != nullptr ? options.hosts : &own_mapper,
                                options.notes);
          if (!host->error.ok()) return host->error.WithPrefix(path);
          b->MarkHostTask(host->job, 0, host->index);
        }
        dn->job = host->job;
        dn->replica = 0;
        dn->task = host->index;
      }
      if (dn.ok()) it->second = b->AddDevice(*dn);
    }
    if (it->second == kNoIndex) {
      ++b->stats().skipped["profiler-trace op on an unparseable device"];
      ++fs.skipped;
      continue;
    }
    if (!named_op) node = type = ev.name();
    const StrId name = b->Intern(node), t = b->Intern(type);
    b->AddOp(OnWallClock(static_cast<TimeNs>(ev.timestamp_ps() / 1000), options.session_wall_ns),
             static_cast<TimeNs>(ev.duration_ps() / 1000), it->second,
             static_cast<uint16_t>(ev.resource_id() & 0xffff), name, t, nullptr, 0);
    ++fs.ops;
    if (options.progress && fs.events % 4096 == 0) options.progress(in.position(), in.size());
  }
  if (n_fields == 0) return in.Error(0, "expected a tensorflow.profiler.Trace");
  // The Trace message has no group_id or correlation_id stats: no step groups, so no XProf
  // step-time breakdown (collectors/xplane/step_breakdown.h) can be given; said, not left blank.
  if (fs.ops > 0) {
    b->stats().notes.push_back(fmt::format(
        "{}: a TF 2.0-2.1 profiler trace has no step groups (group_id), so XProf's step-time "
        "breakdown (input, kernel launch, device compute, ...) cannot be given for it; a later "
        "TF's <host>.xplane.pb or <host>.trace.json.gz of the run gives one",
        path));
  }
  b->stats().files.push_back(fs);
  return OkStatus();
}

}  // namespace tfdiag
