#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>

#include "analyzers/capture_queries.h"
#include "core/saturating.h"
#include "report/breakdown_sections.h"
#include "report/import_sections.h"
#include "report/json_writer.h"
#include "report/outlook_json.h"
#include "report/report.h"

namespace tfdiag {

namespace {

using json::Json;
using json::WriteEvidence;
using json::WriteFinding;

// Sums over a pod's containers: Kubernetes schedules a pod on the sum of their requests. -1 when
// no container sets the figure.
template <typename F>
int64_t PodSum(const std::vector<K8sContainer>& cs, F get) {
  int64_t sum = -1;
  for (const K8sContainer& k : cs) {
    const int64_t v = get(k.res);
    if (v >= 0) sum = std::max<int64_t>(sum, 0) + v;
  }
  return sum;
}

// inputs[] rows for manifests and pod lists, and the "deployment" section: one object per
// replica type and per pod {file, doc, kind, name, role, replicas, cpu_request_m, cpu_limit_m,
// gpus, node} (issue 14).
template <typename W>
void DeploymentInputs(const K8sDeployment& k, Json<W>& j, W* w) {
  for (const K8sFileSummary& f : k.summaries) {
    w->StartObject();
    j.Str("path", f.file);
    j.Str("format", f.format == "JSON" ? "k8s-json" : "k8s-yaml");
    j.Int("documents", f.documents);
    j.Int("objects", f.objects);
    j.Int("tf_replica_types", f.replica_types);
    j.Int("pods", f.pods);
    j.Int("tf_pods", f.tf_pods);
    w->EndObject();
  }
}

template <typename W>
void Deployment(const K8sDeployment& k, Json<W>& j, W* w) {
  j.Key("deployment");
  w->StartObject();
  j.Key("objects");
  w->StartArray();
  auto common = [&](const K8sSource& src, const std::string& kind, const std::string& name,
                    const std::string& role, const std::vector<K8sContainer>& cs) {
    j.Str("file", src.file);
    j.Int("doc", src.doc + 1);
    j.Str("path", src.path);
    j.Str("kind", kind);
    j.Str("name", name);
    j.Str("role", role);
    j.Int("cpu_request_m", PodSum(cs, [](const K8sResources& r) { return r.CpuRequestM(); }));
    j.Int("cpu_limit_m", PodSum(cs, [](const K8sResources& r) { return r.cpu_limit_m; }));
    j.Int("gpus",
          std::max<int64_t>(0, PodSum(cs, [](const K8sResources& r) { return r.gpu_limit; })));
  };
  for (const K8sReplicaType& r : k.replicas) {
    w->StartObject();
    common(r.source, r.object_kind, r.object_name, r.role, r.containers);
    j.Str("replica_type", r.name);
    j.Int("replicas", r.replicas);
    j.Str("node", "");
    w->EndObject();
  }
  for (const K8sPod& p : k.pods) {
    w->StartObject();
    common(p.source, "Pod", p.name, p.role, p.containers);
    j.Str("replica_type", "");
    j.Int("replicas", 1);
    j.Str("node", p.node);
    w->EndObject();
  }
  w->EndArray();
  w->EndObject();
}

template <typename W>
void Write(const Capture& c, const AnalysisResult& r, std::string_view prometheus, W* w) {
  Json<W> j(w);
  w->StartObject();
  j.Str("schema", kAnalysisSchema);
  j.Key("tool");
  w->StartObject();
  j.Str("name", "tfdiag");
  j.Str("version", TFDIAG_VERSION);
  w->EndObject();

  j.Key("inputs");
  w->StartArray();
  for (const FileStats& f : c.stats.files) {
    w->StartObject();
    j.Str("path", f.path);
    j.Str("format", f.format);
    j.Key("gzip");
    w->Bool(f.gzip);
    j.Int("size_bytes", f.bytes);
    j.Int("events", f.events);
    j.Int("ops", f.ops);
    j.Int("skipped_events", f.skipped);
    j.Int("parse_chunks", f.chunks);
    w->EndObject();
  }
  if (r.k8s != nullptr) DeploymentInputs(*r.k8s, j, w);
  w->EndArray();
  if (r.k8s != nullptr) {
    Deployment(*r.k8s, j, w);
  } else {
    j.Key("deployment");  // always there: no manifest or pod list, no objects
    w->StartObject();
    j.Key("objects");
    w->StartArray();
    w->EndArray();
    w->EndObject();
  }

  j.Key("cluster");
  w->StartObject();
  j.Int("ps", r.stats.num_ps);
  j.Int("workers", r.stats.num_workers);
  j.Int("tasks", static_cast<int64_t>(c.tasks.size()));
  j.Int("devices", DeviceCount(c));  // a GPU once, not per stream (devices_list: every row)
  j.Int("ops", static_cast<int64_t>(c.ops.size()));
  // A bundle without timeline ops spans its recording window.
  const bool window = c.ops.empty() && c.meta.window_end > c.meta.window_start;
  const TimeNs start = window ? c.meta.window_start : c.start;
  const TimeNs end = window ? c.meta.window_end : c.end;
  j.Int("start_ns", start);
  j.Int("end_ns", end);
  j.Int("span_ns", SatSub(end, start));
  j.Key("devices_list");
  w->StartArray();
  for (const DeviceRow& d : c.devices) {
    w->StartObject();
    j.Str("name", c.Str(d.name));
    j.Str("task", c.TaskLabelOf(d.task));
    j.Str("type", c.Str(d.type));
    w->EndObject();
  }
  w->EndArray();
  w->EndObject();

  j.Key("tasks");
  w->StartArray();
  for (const TaskStats& s : r.stats.tasks) {
    w->StartObject();
    j.Str("task", s.label);
    j.Str("job_kind", JobKindName(s.kind));
    j.Int("devices", s.devices);
    j.Int("ops", s.ops);
    j.Int("busy_ns", s.busy_ns);
    j.Num("busy_pct", s.busy_pct);
    j.Int("op_time_ns", s.op_time_ns);
    j.Int("recv_tensor_count", s.recv_count);
    j.Int("recv_tensor_ns", s.recv_ns);
    j.Int("steps", s.steps);
    j.Int("step_mean_ns", s.step_mean_ns);
    j.Int("step_median_ns", s.step_median_ns);
    if (s.warmup_steps > 0) j.Int("warmup_steps", s.warmup_steps);
    // XProf's step-time breakdown over the task's steps (TF2 profiles), else null.
    j.Key("step_breakdown");
    if (const BreakdownTotals b = BreakdownOfTask(c, s.task); !b.empty()) {
      WriteBreakdownJson(j, b);
    } else {
      w->Null();
    }
    j.Key("op_types");
    w->StartArray();
    for (const OpTypeTime& t : s.by_type) {
      w->StartObject();
      j.Str("type", t.type);
      j.Int("count", t.count);
      j.Int("total_ns", t.total_ns);
      w->EndObject();
    }
    w->EndArray();
    w->EndObject();
  }
  w->EndArray();

  WriteCapturesJson(c, j);

  j.Key("ps_load");
  w->StartArray();
  for (const TaskStats& s : r.stats.tasks) {
    if (s.kind != JobKind::kPs) continue;
    w->StartObject();
    j.Str("task", s.label);
    j.Int("busy_ns", s.busy_ns);
    j.Num("busy_pct", s.busy_pct);
    j.Num("share_pct", 100 * s.ps_share);
    j.Int("transfers_served", s.edges_out);
    j.Int("tensors_served", s.tensors_out);
    j.Int("bytes_served", s.bytes_out);
    j.Int("transfers_received", s.edges_in);
    j.Int("bytes_received", s.bytes_in);
    j.Key("variables");
    w->StartArray();
    for (const VariableLoad& v : s.variables) {
      w->StartObject();
      j.Str("name", v.name);
      j.Int("ops", v.ops);
      j.Int("op_time_ns", v.total_ns);
      j.Num("share_pct", 100 * v.share);
      j.Int("size_bytes", v.bytes);
      w->EndObject();
    }
    w->EndArray();
    w->EndObject();
  }
  w->EndArray();

  j.Key("processes");
  w->StartArray();
  for (const ProcessStats& p : r.processes) {
    const ProcessRow& row = c.processes[p.process];
    w->StartObject();
    j.Str("task", p.task);
    j.Int("pid", row.pid > 0 ? row.pid : -1);  // -1: unknown (a pod seen by Prometheus)
    j.Str("pod", c.Str(row.pod));
    j.Str("pod_uid", c.Str(row.pod_uid));
    j.Str("qos", c.Str(row.qos));
    j.Num("cpu_limit", row.cpu_limit > 0 ? row.cpu_limit : -1);  // -1: no limit or unknown
    j.Str("cpuset", c.Str(row.cpuset));
    j.Int("cpuset_cpus", row.cpuset_cpus > 0 ? row.cpuset_cpus : -1);  // -1: unknown
    j.Int("host_cpus", row.host_cpus > 0 ? row.host_cpus : -1);        // -1: unknown (cluster)
    j.Key("exited");
    w->Bool(row.exited);
    j.Int("samples", p.samples);
    j.Num("threads_mean", p.threads_mean);
    j.Num("runnable_mean", p.runnable_mean);
    j.Num("cpu_used_cpus", p.cpu_cores);
    j.Num("voluntary_switches_per_s", p.voluntary_per_s);
    j.Num("involuntary_switches_per_s", p.involuntary_per_s);
    j.Num("throttled_pct", p.throttled_pct);
    w->EndObject();
  }
  w->EndArray();

  j.Key("edges");
  w->StartArray();
  for (const EdgeRow& e : c.edges) {
    w->StartObject();
    j.Str("from", c.TaskLabelOf(e.src_task));
    j.Str("to", c.TaskLabelOf(e.dst_task));
    j.Str("tensor", c.Str(e.tensor));
    j.Str("kind", e.kind == EdgeKind::kDataFlow ? "dataflow" : "partition_input");
    j.Int("count", e.count);
    j.Int("bytes", e.bytes);
    w->EndObject();
  }
  w->EndArray();

  j.Key("import");
  w->StartObject();
  j.Int("skipped_events", c.stats.TotalSkipped());
  j.Key("skipped");
  w->StartObject();
  for (const auto& [reason, n] : c.stats.skipped) j.Int(reason, n);
  w->EndObject();
  j.Key("ignored");
  w->StartObject();
  for (const auto& [reason, n] : c.stats.ignored) j.Int(reason, n);
  w->EndObject();
  j.Int("unresolved_inputs", c.stats.unresolved_inputs);
  j.Int("ambiguous_inputs", c.stats.ambiguous_inputs);
  WriteImportNotesJson(c, w);
  w->EndObject();
  WriteHorovodJson(c, w);
  WriteSchedJson(c, r.sched, w);

  // Inputs that do not describe one run (different times or clusters).
  j.Key("notes");
  w->StartArray();
  for (const std::string& n : r.notes) w->String(n.c_str());
  // What the manifest reader inferred or skipped (also printed as notes on stderr).
  if (r.k8s != nullptr) {
    for (const std::string& n : r.k8s->notes) w->String(n.c_str());
  }
  w->EndArray();

  j.Key("findings");
  w->StartArray();
  for (const Finding& f : r.findings) WriteFinding(j, f);
  w->EndArray();
  json::WriteOutlookJson(j, r.outlook);

  j.Key("rules");
  w->StartObject();
  j.Key("run");
  w->StartArray();
  for (const std::string& id : r.rules_run) w->String(id.c_str());
  w->EndArray();
  j.Key("disabled");
  w->StartArray();
  for (const std::string& id : r.rules_disabled) w->String(id.c_str());
  w->EndArray();
  // Findings objects opted out of (tfdiag.io/ignore annotation).
  j.Key("ignored");
  w->StartArray();
  for (const auto& [id, subject] : r.rules_ignored) {
    w->StartObject();
    j.Str("rule", id);
    j.Str("subject", subject);
    w->EndObject();
  }
  w->EndArray();
  // Enabled rules that could not judge this input, and why.
  j.Key("not_applicable");
  w->StartArray();
  for (const auto& [id, why] : r.rules_not_applicable) {
    w->StartObject();
    j.Str("rule", id);
    j.Str("reason", why);
    w->EndObject();
  }
  w->EndArray();
  w->EndObject();
  j.Key("prometheus");
  if (prometheus.empty()) {
    w->Null();
  } else {
    w->RawValue(prometheus.data(), prometheus.size(), rapidjson::kObjectType);
  }
  w->EndObject();
}

}  // namespace

StatusOr<std::string> RenderJson(const Capture& c, const AnalysisResult& r, bool pretty,
                                 std::string_view prometheus) {
  return json::RenderDocument(pretty, kAnalysisSchema,
                              [&](auto* w) { Write(c, r, prometheus, w); });
}

}  // namespace tfdiag
