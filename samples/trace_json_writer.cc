// The simulator's TF 2.2+ trace-viewer JSON (simulator.h TraceFormat::kTraceJson): each task's
// XSpace, as written for kXPlane's log directory, converted the way TensorFlow's profiler does it
// for TensorBoard (tensorflow/core/profiler/convert/xplane_to_trace_events.cc and
// trace_events_to_json.cc, TF 2.2-2.4): one process per plane (pid = plane id, process_name =
// plane name), one thread per line (tid = line id as uint32, thread_name = line name), one X event
// per XEvent with ts/dur in microseconds, the name the display name ("<type>" for a TF op, whose
// metadata name "<node>:<type>" goes to args.long_name), every stat an args string, args sorted
// by key, and a trailing {} event. Times are written with 3 decimals (exact nanoseconds).
#include <dirent.h>
#include <fmt/format.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "collectors/xplane/tf2_events.h"
#include "collectors/xplane/xplane.pb.h"
#include "core/atomic_file.h"
#include "samples/sim_internal.h"

namespace tfdiag::sim::internal {

namespace {

std::string Micros(int64_t ns) { return fmt::format("{}.{:03d}", ns / 1000, ns % 1000); }

std::string StatValue(const xplane::XPlane& p, const xplane::XStat& s) {
  switch (s.value_case()) {
    case xplane::XStat::kInt64Value:
      return std::to_string(s.int64_value());
    case xplane::XStat::kUint64Value:
      return std::to_string(s.uint64_value());
    case xplane::XStat::kDoubleValue:
      return fmt::format("{}", s.double_value());
    case xplane::XStat::kStrValue:
      return s.str_value();
    case xplane::XStat::kRefValue: {
      auto it = p.stat_metadata().find(static_cast<int64_t>(s.ref_value()));
      return it == p.stat_metadata().end() ? "" : it->second.name();
    }
    default:
      return "";
  }
}

}  // namespace

Status XSpaceToTraceJson(const std::string& xplane_path, const std::string& json_path) {
  std::ifstream in(xplane_path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  xplane::XSpace space;
  if (!in || !space.ParseFromString(ss.str())) {
    return IoError("{}: cannot read back the XSpace just written", xplane_path);
  }
  OutputSink out;
  const bool gzip = json_path.size() > 3 && json_path.compare(json_path.size() - 3, 3, ".gz") == 0;
  TFDIAG_RETURN_IF_ERROR(out.Open(json_path, false, gzip));
  std::string& s = out.buf();
  s += R"({"displayTimeUnit":"ns","metadata":{"highres-ticks":true},"traceEvents":[)";
  // By plane id, the pid (a plane whose id is taken, e.g. two planes left at id 0, gets the
  // next free one).
  std::map<int64_t, const xplane::XPlane*> planes;
  for (const xplane::XPlane& p : space.planes()) {
    int64_t id = p.id();
    while (planes.count(id) > 0) ++id;
    planes[id] = &p;
  }
  for (const auto& [id, p] : planes) {
    const uint32_t pid = static_cast<uint32_t>(id);
    s += fmt::format(R"({{"ph":"M","pid":{},"name":"process_name","args":{{"name":"{}"}}}},)", pid,
                     JsonEscape(p->name()));
    s += fmt::format(
        R"({{"ph":"M","pid":{},"name":"process_sort_index","args":{{"sort_index":{}}}}},)", pid,
        pid);
    std::map<uint32_t, std::string> lines;
    for (const xplane::XLine& l : p->lines())
      lines.emplace(static_cast<uint32_t>(l.id()), l.name());
    for (const auto& [tid, name] : lines) {
      s += fmt::format(
          R"({{"ph":"M","pid":{},"tid":{},"name":"thread_name","args":{{"name":"{}"}}}},)", pid,
          tid, JsonEscape(name));
      s += fmt::format(
          R"({{"ph":"M","pid":{},"tid":{},"name":"thread_sort_index","args":{{"sort_index":{}}}}},)",
          pid, tid, tid);
    }
  }
  for (const auto& [id, p] : planes) {
    const uint32_t pid = static_cast<uint32_t>(id);
    for (const xplane::XLine& l : p->lines()) {
      const uint32_t tid = static_cast<uint32_t>(l.id());
      for (const xplane::XEvent& e : l.events()) {
        auto md = p->event_metadata().find(e.metadata_id());
        const std::string full = md == p->event_metadata().end() ? "" : md->second.name();
        std::map<std::string, std::string> args;
        std::string_view node, type;
        std::string name = full;
        if (ParseTfOpName(full, &node, &type)) {  // TF's display name: the op type
          name = std::string(type);
          args["long_name"] = full;
        }
        for (const xplane::XStat& st : e.stats()) {
          auto sm = p->stat_metadata().find(st.metadata_id());
          if (sm != p->stat_metadata().end()) args[sm->second.name()] = StatValue(*p, st);
        }
        const int64_t start = l.timestamp_ns() + e.offset_ps() / 1000;
        s += fmt::format(R"({{"pid":{},"tid":{},"ts":{},"name":"{}","ph":"X","dur":{})", pid, tid,
                         Micros(start), JsonEscape(name),
                         Micros(std::max<int64_t>(e.duration_ps() / 1000, 0)));
        if (!args.empty()) {
          s += R"(,"args":{)";
          bool first = true;
          for (const auto& [k, v] : args) {
            s += fmt::format(R"({}"{}":"{}")", first ? "" : ",", JsonEscape(k), JsonEscape(v));
            first = false;
          }
          s += '}';
        }
        s += "},";
        TFDIAG_RETURN_IF_ERROR(out.MaybeFlush());
      }
    }
  }
  s += "{}]}";  // TF's trailing event, to avoid the no-trailing-comma rule
  return out.Finish();
}

Status ConvertLogDirToTraceJson(const std::string& dir) {
  const std::string run = dir + "/plugins/profile/2020_09_13_12_26_40";
  DIR* d = ::opendir(run.c_str());
  if (d == nullptr) return IoError("{}: cannot list the run directory", run);
  std::set<std::string> names;
  while (const dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n.size() > 10 && n.compare(n.size() - 10, 10, ".xplane.pb") == 0) names.insert(n);
  }
  ::closedir(d);
  for (const std::string& n : names) {
    const std::string xp = run + "/" + n;
    TFDIAG_RETURN_IF_ERROR(
        XSpaceToTraceJson(xp, run + "/" + n.substr(0, n.size() - 10) + ".trace.json.gz"));
    ::unlink(xp.c_str());
  }
  return OkStatus();
}

Status WriteToolFiles(const Model& m, const std::string& dir) {
  const std::string run = dir + "/plugins/profile/2020_09_13_12_26_40";
  std::set<std::string> hosts;
  for (const Device& d : m.devices)
    hosts.insert(fmt::format("{}-{}", d.ps ? "ps" : "worker", d.task));
  // A placeholder message: field 1 (a string) "tfdiag simulate".
  const std::string message = std::string("\x0a\x0f", 2) + "tfdiag simulate";
  for (const std::string& h : hosts) {
    for (const char* tool : {"overview_page.pb", "input_pipeline.pb", "tensorflow_stats.pb",
                             "kernel_stats.pb", "memory_profile.json.gz"}) {
      AtomicFile f;
      TFDIAG_RETURN_IF_ERROR(f.Open(fmt::format("{}/{}.{}", run, h, tool)));
      TFDIAG_RETURN_IF_ERROR(f.Write(message));
      TFDIAG_RETURN_IF_ERROR(f.Commit());
    }
    AtomicFile f;
    TFDIAG_RETURN_IF_ERROR(
        f.Open(fmt::format("{}/events.out.tfevents.1600000000.{}.profile-empty", dir, h)));
    TFDIAG_RETURN_IF_ERROR(f.Commit());
  }
  return OkStatus();
}

}  // namespace tfdiag::sim::internal
