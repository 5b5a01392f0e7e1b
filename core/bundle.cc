// BundleJson and WriteBundle (core/bundle.h): the live part of a Capture as bundle JSON; the
// reader is core/bundle_reader.cc.
#include "core/bundle.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>

#include "core/atomic_file.h"
#include "core/bundle_columns.h"
#include "core/json_utf8_writer.h"

namespace tfdiag {

namespace {

using Writer = ValidUtf8Writer<rapidjson::Writer<rapidjson::StringBuffer>>;  // UTF-8 always

void Str(Writer& w, const char* k, std::string_view v) {
  w.Key(k);
  w.String(v.data(), static_cast<rapidjson::SizeType>(v.size()));
}
void Int(Writer& w, const char* k, int64_t v) {
  w.Key(k);
  w.Int64(v);
}

}  // namespace

std::string BundleJson(const Capture& c) {
  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.StartObject();
  Str(w, "schema", kBundleSchema);
  w.Key("tool");
  w.StartObject();
  Str(w, "name", "tfdiag");
  Str(w, "version", c.meta.tool_version);
  w.EndObject();
  w.Key("meta");
  w.StartObject();
  Str(w, "host", c.meta.host);
  Str(w, "kernel", c.meta.kernel);
  Int(w, "window_start_ns", c.meta.window_start);
  Int(w, "window_end_ns", c.meta.window_end);
  Int(w, "interval_ms", c.meta.interval_ms);
  Str(w, "probes", c.meta.probes);
  if (c.meta.steal_pct >= 0) {
    w.Key("steal_pct");
    w.Double(c.meta.steal_pct);
  }
  w.Key("warnings");
  w.StartArray();
  for (const std::string& s : c.meta.warnings) w.String(s.c_str());
  w.EndArray();
  w.EndObject();
  w.Key("tasks");
  w.StartArray();
  for (const TaskRow& t : c.tasks) {
    w.StartObject();
    Str(w, "job", c.Str(t.job));
    Int(w, "replica", t.replica);
    Int(w, "index", t.index);
    w.EndObject();
  }
  w.EndArray();
  w.Key("processes");
  w.StartArray();
  for (const ProcessRow& p : c.processes) {
    w.StartObject();
    Str(w, "task", c.TaskLabelOf(p.task));
    Int(w, "pid", p.pid);
    Str(w, "pod", c.Str(p.pod));
    Str(w, "pod_uid", c.Str(p.pod_uid));
    Str(w, "container", c.Str(p.container));
    Str(w, "qos", c.Str(p.qos));
    Str(w, "cgroup", c.Str(p.cgroup));
    Str(w, "cpuset", c.Str(p.cpuset));
    // Unknown or none is -1, not 0 (a cluster bundle has no node CPU count; no CFS quota is
    // no limit). Read back as 0, which the rows use for both.
    w.Key("cpu_limit");
    w.Double(p.cpu_limit > 0 ? p.cpu_limit : -1);
    Int(w, "quota_us", p.quota_us);
    Int(w, "period_us", p.period_us);
    Int(w, "cpuset_cpus", p.cpuset_cpus);
    Int(w, "host_cpus", p.host_cpus > 0 ? p.host_cpus : -1);
    Int(w, "first_ns", p.first_ns);
    Int(w, "last_ns", p.last_ns);
    w.Key("exited");
    w.Bool(p.exited);
    // Cluster bundles (analyze --prometheus --save); optional when read.
    if (p.node != 0) Str(w, "node", c.Str(p.node));
    if (p.pod_ip != 0) Str(w, "pod_ip", c.Str(p.pod_ip));
    if (p.cpu_request > 0) {
      w.Key("cpu_request");
      w.Double(p.cpu_request);
    }
    if (p.restarts > 0) Int(w, "restarts", p.restarts);
    // Tasks that export a step counter (optional when read).
    if (p.step_source != 0) Str(w, "step_source", c.Str(p.step_source));
    w.EndObject();
  }
  w.EndArray();
  w.Key("process_sample_columns");
  w.StartArray();
  for (const char* col : kProcessColumns) w.String(col);
  w.EndArray();
  w.Key("process_samples");
  w.StartArray();
  for (const ProcessSampleRow& s : c.process_samples) {
    w.StartArray();
    for (int64_t v : {s.ts, int64_t{s.process}, int64_t{s.threads}, int64_t{s.runnable}, s.cpu_ns,
                      s.voluntary, s.involuntary, s.nr_periods, s.nr_throttled, s.throttled_ns}) {
      w.Int64(v);
    }
    w.EndArray();
  }
  w.EndArray();
  w.Key("thread_sample_columns");
  w.StartArray();
  for (const char* col : kThreadColumns) w.String(col);
  w.EndArray();
  w.Key("thread_samples");
  w.StartArray();
  for (const ThreadSampleRow& s : c.thread_samples) {
    w.StartArray();
    w.Int64(s.ts);
    w.Int64(s.process);
    w.Int64(s.tid);
    std::string_view n = c.Str(s.name);
    w.String(n.data(), static_cast<rapidjson::SizeType>(n.size()));
    // One printable ASCII letter, as the reader takes it; '?' (unknown) for anything else, which
    // the UTF-8 writer would turn into a 3-byte U+FFFD that no longer reads as a state.
    const char state = s.state > ' ' && s.state < 0x7f ? s.state : '?';
    w.String(&state, 1);
    w.Int64(s.cpu_ns);
    w.Int64(s.voluntary);
    w.Int64(s.involuntary);
    w.EndArray();
  }
  w.EndArray();
  // Step counters the tasks export (issue 18); absent when none did, and from older bundles.
  if (!c.step_counts.empty()) {
    w.Key("step_count_columns");
    w.StartArray();
    for (const char* col : kStepCountColumns) w.String(col);
    w.EndArray();
    w.Key("step_counts");
    w.StartArray();
    for (const StepCountRow& s : c.step_counts) {
      w.StartArray();
      w.Int64(s.ts);
      w.Int64(s.process);
      w.Int64(s.steps);
      w.EndArray();
    }
    w.EndArray();
  }
  // eBPF rows (issue 6); absent from older bundles.
  w.Key("traffic_columns");
  w.StartArray();
  for (const char* col : kTrafficColumns) w.String(col);
  w.EndArray();
  w.Key("traffic");
  w.StartArray();
  for (const TrafficRow& t : c.traffic) {
    w.StartArray();
    w.Int64(t.ts);
    w.Int64(t.process);
    for (std::string_view v :
         {c.Str(t.local), c.Str(t.peer),
          t.peer_task == kNoIndex ? std::string_view() : c.TaskLabelOf(t.peer_task)}) {
      w.String(v.data(), static_cast<rapidjson::SizeType>(v.size()));
    }
    w.Int64(t.hdfs ? 1 : 0);
    w.Int64(t.bytes_sent);
    w.Int64(t.bytes_received);
    w.EndArray();
  }
  w.EndArray();
  w.Key("sched_columns");
  w.StartArray();
  for (const char* col : kSchedColumns) w.String(col);
  w.EndArray();
  w.Key("sched");
  w.StartArray();
  for (const SchedRow& s : c.sched) {
    w.StartArray();
    for (int64_t v : {s.ts, int64_t{s.process}, s.voluntary, s.involuntary, s.oncpu_ns,
                      s.runq_wait_ns, s.runq_waits}) {
      w.Int64(v);
    }
    w.StartArray();
    for (int64_t v : s.runq_hist) w.Int64(v);
    w.EndArray();
    w.EndArray();
  }
  w.EndArray();
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize()) + "\n";
}

Status WriteBundle(const Capture& c, const std::string& path) {
  return WriteFileAtomically(path, BundleJson(c));
}

}  // namespace tfdiag
