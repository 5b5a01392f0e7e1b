// Step 5 of ReadJobFromPrometheus: the Capture, the K8sDeployment and the per-pod figures built
// from the series read (job_steps.h).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>
#include <tuple>

#include "collectors/prometheus/job_steps.h"
#include "core/capture_builder.h"
#include "core/checked_number.h"
#include "core/plural.h"

namespace tfdiag::prom {

namespace {

// The capture's header: the window, the resolution, the nodes and the server.
void FillMeta(const PromJobOptions& o, const PodMap& pods, const PromJob& job, CaptureMeta* meta) {
  meta->window_start = static_cast<TimeNs>(o.start_s * 1e9);
  meta->window_end = static_cast<TimeNs>(o.end_s * 1e9);
  meta->interval_ms = static_cast<int64_t>(job.step_s * 1000);
  meta->probes = "prometheus";
  std::set<std::string> nodes;
  for (const auto& [key, p] : pods) nodes.insert(p.node);
  meta->host = fmt::format("{} (Prometheus {})", Count(nodes.size(), "node"), job.server_version);
  meta->kernel = "-";
  meta->tool_version = TFDIAG_VERSION;
}

// The pod as a K8sDeployment pod (its containers are added once its figures are known).
K8sPod MakeK8sPod(const PodInfo& p, const std::string& ns) {
  K8sPod kp;
  kp.name = p.name;
  kp.namespace_ = ns;
  kp.node = p.node;
  kp.pod_ip = p.pod_ip;
  kp.role = p.role;
  kp.role_source = p.role_source;
  kp.index = p.index;
  kp.owner_kind = p.owner_kind;
  kp.owner_name = p.owner_name;
  kp.source.file = "prometheus";
  kp.source.path = "kube_pod_info{pod=\"" + p.name + "\"}";
  return kp;
}

// Most CPUs a pod's limit or request may name (as the bundle reader's cpu_limit).
constexpr double kMaxCpus = 1e6;

// The pod's process row: task, pod, node, CPU limit and request, restarts, time range. Errors:
// kInvalidInput naming the series of a CPU limit or request past kMaxCpus or a restart count
// that is no count.
StatusOr<ProcessRow> MakeProcessRow(const PodInfo& p, const JobSeries& s, const Points& c,
                                    double end_s, double step_s, CaptureBuilder* b) {
  const auto lim = s.limits.find(p.name + "/cpu"), req = s.requests.find(p.name + "/cpu");
  for (const auto& [it, m, metric] :
       {std::tuple{lim, &s.limits, "limits"}, std::tuple{req, &s.requests, "requests"}}) {
    if (it != m->end() && !(it->second >= 0 && it->second <= kMaxCpus)) {
      return InvalidInput(
          "Prometheus series kube_pod_container_resource_{}{{pod=\"{}\",resource=\"cpu\"}}: {} "
          "cores; expected 0..{:g}",
          metric, p.name, it->second, kMaxCpus);
    }
  }
  int64_t restarts = 0;
  if (auto rs = s.restarts.find(p.name);
      rs != s.restarts.end() && !RoundedIn(rs->second, 0, INT32_MAX, &restarts)) {
    return InvalidInput(
        "Prometheus series kube_pod_container_status_restarts_total{{pod=\"{}\"}}: an increase "
        "of {} over the window; expected a restart count in 0..{}",
        p.name, rs->second, INT32_MAX);
  }
  ProcessRow row;
  row.task = b->AddTask(p.role, 0, p.index);
  row.pod = b->Intern(p.name);
  row.node = p.node.empty() ? 0 : b->Intern(p.node);
  row.pod_ip = p.pod_ip.empty() ? 0 : b->Intern(p.pod_ip);
  row.container = b->Intern("");
  if (lim != s.limits.end() && lim->second > 0) {
    row.cpu_limit = lim->second;
    row.period_us = 100000;
    row.quota_us = static_cast<int64_t>(lim->second * 100000);
  }
  if (req != s.requests.end()) row.cpu_request = req->second;
  row.restarts = static_cast<int32_t>(restarts);
  row.first_ns = static_cast<TimeNs>(c.begin()->first * 1e9);
  row.last_ns = static_cast<TimeNs>(c.rbegin()->first * 1e9);
  row.exited = c.rbegin()->first + 2 * step_s < end_s;
  return row;
}

const Points& Of(const ByPod& m, const std::string& key) {
  static const Points kEmpty;
  auto it = m.find(key);
  return it == m.end() ? kEmpty : it->second;
}

// The series one pod's figures come from: cAdvisor's where it has them (container scope, the
// pod's network), else the tfdiag agent's (the task's process, from /proc and its cgroup).
struct PodSeries {
  const Points *cpu, *threads, *runnable, *periods, *throttled, *throttled_s, *rx, *tx, *hdfs;
  const Points *voluntary, *involuntary;  // the agent's (cAdvisor exports no switches)
  bool cpu_from_agent = false;
};
PodSeries SeriesOf(const PodInfo& p, const JobSeries& s) {
  const std::string key = Key(p);
  auto pick = [&](const ByPod& cadvisor, const ByPod& agent) {
    const auto& c = Of(cadvisor, p.name.empty() ? "\n" : p.name);
    return c.empty() ? &Of(agent, key) : &c;
  };
  PodSeries x;
  x.cpu = &Of(s.cpu, p.name.empty() ? "\n" : p.name);
  if (x.cpu->size() < 2 && Of(s.a_cpu, key).size() >= 2) {
    x.cpu = &Of(s.a_cpu, key);
    x.cpu_from_agent = true;
  }
  x.threads = pick(s.threads, s.a_threads);
  x.runnable = &Of(s.a_runnable, key);  // cAdvisor does not export runnable threads
  x.periods = pick(s.periods, s.a_periods);
  x.throttled =
      x.periods == &Of(s.a_periods, key) ? &Of(s.a_throttled, key) : &Of(s.throttled, p.name);
  x.throttled_s = &Of(s.throttled_s, p.name.empty() ? "\n" : p.name);
  x.rx = &Of(s.rx, p.name.empty() ? "\n" : p.name);
  x.tx = &Of(s.tx, p.name.empty() ? "\n" : p.name);
  x.hdfs = &Of(s.hdfs, key);
  x.voluntary = &Of(s.a_voluntary, key);
  x.involuntary = &Of(s.a_involuntary, key);
  return x;
}

// The latest value at or before t of a gauge series; `fallback` before its first point.
double At(const Points& m, double t, double fallback) {
  auto it =
      std::upper_bound(m.begin(), m.end(), t,
                       [](double x, const std::pair<double, double>& p) { return x < p.first; });
  return it == m.begin() ? fallback : std::prev(it)->second;
}

// One sample per CPU point: cumulative CPU, threads, runnable threads (-1 unknown), CFS
// periods; and the pod's network bytes (cAdvisor, all peers) and HDFS input (agent),
// cumulative from the window's start.
void AddSamples(const PodSeries& x, uint32_t proc, CaptureBuilder* b) {
  const auto& c = *x.cpu;
  const bool cfs = !x.periods->empty();
  const StrId net_local = b->Intern("pod network (cAdvisor)"), net_peer = b->Intern("");
  const StrId hdfs_peer = b->Intern("hdfs"), agent_local = b->Intern("tfdiag agent");
  for (const auto& [t, v] : c) {
    ProcessSampleRow row;
    row.ts = static_cast<TimeNs>(t * 1e9);
    row.process = proc;
    // Figures from the server's doubles, saturated (a hostile rate of 1e300 is no UB).
    row.cpu_ns = SaturatedRound(Integral(c, t) * 1e9, 0);
    row.threads = static_cast<int32_t>(SaturatedRound(At(*x.threads, t, 0), 0, INT32_MAX));
    // Runnable threads: the agent's (/proc), else unknown (cAdvisor does not export them).
    row.runnable = x.runnable->empty()
                       ? -1
                       : static_cast<int32_t>(SaturatedRound(At(*x.runnable, t, 0), 0, INT32_MAX));
    // Context switches: the agent's, cumulative from the window's start; else unknown (-1).
    if (!x.voluntary->empty()) row.voluntary = SaturatedRound(Integral(*x.voluntary, t), 0);
    if (!x.involuntary->empty()) row.involuntary = SaturatedRound(Integral(*x.involuntary, t), 0);
    if (cfs) {
      row.nr_periods = SaturatedRound(Integral(*x.periods, t), 0);
      row.nr_throttled = SaturatedRound(Integral(*x.throttled, t), 0);
      if (!x.throttled_s->empty())
        row.throttled_ns = SaturatedRound(Integral(*x.throttled_s, t) * 1e9, 0);
    }
    b->AddProcessSample(row);
    if (!x.rx->empty() || !x.tx->empty()) {
      TrafficRow tr;  // the pod's bytes over all its peers (peer "")
      tr.ts = row.ts;
      tr.process = proc;
      tr.local = net_local;
      tr.peer = net_peer;
      tr.bytes_received = SaturatedRound(Integral(*x.rx, t), 0);
      tr.bytes_sent = SaturatedRound(Integral(*x.tx, t), 0);
      b->AddTraffic(tr);
    }
    if (!x.hdfs->empty()) {
      TrafficRow tr;
      tr.ts = row.ts;
      tr.process = proc;
      tr.local = agent_local;
      tr.peer = hdfs_peer;
      tr.hdfs = true;
      tr.bytes_received = SaturatedRound(Integral(*x.hdfs, t), 0);
      b->AddTraffic(tr);
    }
  }
}

// The agent's run-queue latency and context switches over the window as two SchedRows (zero
// at the first sample, the window's increases at the last), the shape the eBPF probe gives.
// Buckets: le = 2^(i+1) ns in s (report/prometheus_exporter.cc), cumulative.
void AddSched(const PodInfo& p, const JobSeries& s, uint32_t proc, const ProcessRow& row,
              int64_t cpu_ns, CaptureBuilder* b) {
  auto it = s.a_totals.find(Key(p));
  if (it == s.a_totals.end()) return;
  const auto& m = it->second;
  auto get = [&](const std::string& k) {
    auto v = m.find(k);
    return v == m.end() ? -1.0 : v->second;
  };
  SchedRow first, last;
  first.ts = row.first_ns;
  first.process = last.process = proc;
  last.ts = row.last_ns;
  last.oncpu_ns = cpu_ns;
  last.voluntary = SaturatedRound(get("voluntary"), 0);
  last.involuntary = SaturatedRound(get("involuntary"), 0);
  const double waits = get("+Inf");
  if (!(waits >= 0)) return;  // no histogram: the agent ran without the sched probe
  last.runq_waits = SaturatedRound(waits, 0);
  last.runq_wait_ns = SaturatedRound(get("sum") * 1e9, 0);
  // The bounds as the exporter wrote them ("2.048e-06"): the slot from log2 of the bound in ns.
  std::map<int, double> cum;
  for (const auto& [le, v] : m) {
    char* end = nullptr;
    const double bound = std::strtod(le.c_str(), &end);
    // Buckets end at 2^32 ns (4.3 s): a larger bound is no bucket of the agent's.
    if (end == le.c_str() || *end != '\0' || !(bound > 0 && bound < 1e3)) continue;
    const int slot = static_cast<int>(std::lround(std::log2(bound * 1e9))) - 1;
    if (slot >= 0 && slot < kRunqHistSlots) cum[slot] = v;
  }
  double below = 0;
  for (const auto& [slot, c] : cum) {
    last.runq_hist[slot] = SaturatedRound(c - below, 0);
    below = c;
  }
  b->AddSched(first);
  b->AddSched(last);
}

// Bytes to and from each peer task over the window (agent), one row at the window's end; *any
// says whether the pod had any. `from_zero`: the agent's counters started within the window
// (AgentSpan), so their last values are the bytes since then; else their increases. Errors:
// kInvalidInput naming a series whose peer_task is not
// "<ps|worker|chief|master|evaluator>:<index 0..999999>" (the query asks for only those: a server
// that answers others is not answering it).
Status AddPeerBytes(const PodInfo& p, const JobSeries& s, uint32_t proc, TimeNs at, bool from_zero,
                    CaptureBuilder* b, bool* any) {
  std::map<std::pair<std::string, std::string>, std::pair<int64_t, int64_t>> peers;
  std::map<std::string, std::pair<std::string, int>> tasks;  // peer_task -> (job, index)
  for (const PromSeries& ps : s.peer_bytes) {
    if (AgentKey(ps) != Key(p) || ps.points.empty() || !std::isfinite(ps.points[0].second))
      continue;
    const std::string dir = ps.Label("direction");
    const bool total = dir.size() > 6 && dir.compare(dir.size() - 6, 6, "_total") == 0;
    if (total != from_zero) continue;
    const std::string label = ps.Label("peer_task");
    const size_t colon = label.find(':');
    int index = 0;
    if (colon == std::string::npos || TfRoleOf(label.substr(0, colon)) != label.substr(0, colon) ||
        !ParseTaskIndex(std::string_view(label).substr(colon + 1), &index)) {
      return InvalidInput(
          "Prometheus series "
          "tfdiag_traffic_bytes_total{{pod=\"{}\",peer=\"{}\",peer_task=\"{}\"}}: "
          "peer_task: expected <{}>:<index 0..{}>",
          ps.Label("pod"), ps.Label("peer"), label, TfRolesAlternation(), kMaxTaskIndex);
    }
    tasks[label] = {label.substr(0, colon), index};
    auto& v = peers[{ps.Label("peer"), label}];
    int64_t& sum = dir.rfind("sent", 0) == 0 ? v.first : v.second;
    sum = SaturatedAdd(sum, SaturatedRound(ps.points[0].second, 0));
  }
  const StrId agent_local = b->Intern("tfdiag agent");
  for (const auto& [peer, v] : peers) {
    const auto& [job, index] = tasks.at(peer.second);
    TrafficRow tr;
    tr.ts = at;
    tr.process = proc;
    tr.local = agent_local;
    tr.peer = b->Intern(peer.first);
    tr.peer_task = b->AddTask(job, 0, index);
    tr.bytes_sent = v.first;
    tr.bytes_received = v.second;
    b->AddTraffic(tr);
  }
  *any = !peers.empty();
  return OkStatus();
}

// When the agent's byte counters of a task count from (it found the task then; they were 0) and
// when the task exited, Unix s; 0 when unknown or outside [start_s, end_s].
struct AgentSpan {
  double since_s = 0, exit_s = 0;
};
AgentSpan SpanOf(const PodInfo& p, const JobSeries& s, double start_s, double end_s) {
  AgentSpan span;
  auto it = s.a_totals.find(Key(p));
  if (it == s.a_totals.end()) return span;
  auto get = [&](const char* k) {
    auto v = it->second.find(k);
    return v == it->second.end() ? 0.0 : v->second;
  };
  const double since = get("since"), exit = get("exit");
  if (since >= start_s && since < end_s) span.since_s = since;
  if (exit > std::max(since, start_s) && exit <= end_s) span.exit_s = exit;
  return span;
}

// The CPUs the task may use as its agent saw them (the same figures a bundle's process row
// holds): its node's CPUs, its cpuset's, and its CFS limit where kube-state-metrics gave none.
// Values outside 1..kMaxCpus are not CPUs and are left unknown.
void AddAgentCpus(const PodInfo& p, const JobSeries& s, ProcessRow* row) {
  auto cpus = [](double v, int32_t* out) {
    if (v >= 1 && v <= kMaxCpus) *out = static_cast<int32_t>(std::lround(v));
  };
  if (auto n = s.node_cpus.find(p.node); n != s.node_cpus.end()) cpus(n->second, &row->host_cpus);
  auto it = s.a_totals.find(Key(p));
  if (it == s.a_totals.end()) return;
  if (auto c = it->second.find("cpuset"); c != it->second.end()) cpus(c->second, &row->cpuset_cpus);
  auto l = it->second.find("cpu_limit");
  if (row->cpu_limit <= 0 && l != it->second.end() && l->second > 0 && l->second <= kMaxCpus) {
    row->cpu_limit = l->second;
    row->period_us = 100000;
    row->quota_us = static_cast<int64_t>(l->second * 100000);
  }
}

// The pod's figures over the window, for the JSON report.
PromPodFigures MakeFigures(const PodInfo& p, const PodSeries& x, const ProcessRow& row) {
  const auto& c = *x.cpu;
  const auto& per = *x.periods;
  const auto& th = *x.threads;
  PromPodFigures fig;
  fig.pod = p.name;
  fig.node = p.node;
  fig.pod_ip = p.pod_ip;
  fig.task = p.role + ":" + std::to_string(p.index);
  fig.first_s = c.begin()->first;
  fig.last_s = c.rbegin()->first;
  const double span = fig.last_s - fig.first_s;
  if (span > 0) fig.cpu_cores = Integral(c, fig.last_s) / span;
  fig.cpu_limit = row.cpu_limit;
  fig.cpu_request = row.cpu_request;
  const double np = Integral(per, fig.last_s);
  if (!per.empty() && np > 0) fig.throttled_pct = 100 * Integral(*x.throttled, fig.last_s) / np;
  double tsum = 0;
  for (const auto& [t, v] : th) tsum += v;
  if (!th.empty()) fig.threads = tsum / th.size();
  if (span > 0 && !x.rx->empty()) fig.rx_bytes_per_s = Integral(*x.rx, fig.last_s) / span;
  if (span > 0 && !x.tx->empty()) fig.tx_bytes_per_s = Integral(*x.tx, fig.last_s) / span;
  fig.restarts = row.restarts;
  return fig;
}

// The pod's containers summed, as one K8sContainer with its CPU and memory resources.
K8sContainer MakeContainer(const PodInfo& p, const JobSeries& s, const ProcessRow& row) {
  K8sContainer kc;
  kc.name = "(all containers)";
  kc.res.cpu_limit_m = row.cpu_limit > 0 ? SaturatedRound(row.cpu_limit * 1000) : -1;
  kc.res.cpu_request_m = row.cpu_request > 0 ? SaturatedRound(row.cpu_request * 1000) : -1;
  kc.res.cpu_limit_text = fmt::format("{}m", kc.res.cpu_limit_m);
  kc.res.cpu_request_text = fmt::format("{}m", kc.res.cpu_request_m);
  const auto mlim = s.limits.find(p.name + "/memory"), mreq = s.requests.find(p.name + "/memory");
  if (mlim != s.limits.end()) kc.res.mem_limit = SaturatedRound(mlim->second, 0);
  if (mreq != s.requests.end()) kc.res.mem_request = SaturatedRound(mreq->second, 0);
  return kc;
}

}  // namespace

Status BuildJobCapture(const PromJobOptions& o, const PodMap& pods, const JobSeries& s,
                       const std::string& pods_sel, PromJob* job) {
  CaptureBuilder b;
  FillMeta(o, pods, *job, &b.meta());
  int with_agent = 0, cpu_from_agents = 0;
  for (const auto& [key, p] : pods) {
    if (p.role.empty()) continue;
    K8sPod kp = MakeK8sPod(p, job->namespace_);
    const PodSeries x = SeriesOf(p, s);
    const std::string task = p.role + ":" + std::to_string(p.index);
    if (x.cpu->size() < 2) {
      job->notes.push_back(fmt::format(
          "{} ({}{}): fewer than 2 CPU points in the window (cAdvisor series missing{})",
          p.name.empty() ? "task" : "pod " + p.name, task, p.node.empty() ? "" : " on " + p.node,
          s.agents ? ", and the agent's" : ""));
      if (p.ksm) job->k8s.pods.push_back(std::move(kp));
      continue;
    }
    if (x.cpu_from_agent) ++cpu_from_agents;
    StatusOr<ProcessRow> made = MakeProcessRow(p, s, *x.cpu, o.end_s, job->step_s, &b);
    if (!made.ok()) return made.status();
    // The time the agent counted the task's bytes (traffic_stats.cc reads a process's rates over
    // first_ns..last_ns when they are wider than its samples): from when it found the task to its
    // exit, when those fall in the window.
    ProcessRow row = *made;
    AddAgentCpus(p, s, &row);
    const AgentSpan span = SpanOf(p, s, o.start_s, o.end_s);
    if (span.since_s > 0) row.first_ns = static_cast<TimeNs>(span.since_s * 1e9);
    if (span.exit_s > 0) {
      row.last_ns = static_cast<TimeNs>(span.exit_s * 1e9);
      row.exited = true;
    }
    const uint32_t proc = b.AddProcess(row);
    AddSamples(x, proc, &b);
    AddSched(p, s, proc, *made, SaturatedRound(Integral(*x.cpu, x.cpu->rbegin()->first) * 1e9, 0),
             &b);
    bool any_peer = false;
    TFDIAG_RETURN_IF_ERROR(
        AddPeerBytes(p, s, proc, made->last_ns, span.since_s > 0, &b, &any_peer));
    if (any_peer) ++with_agent;
    PromPodFigures fig = MakeFigures(p, x, row);
    if (row.restarts > 0) {
      job->notes.push_back(fmt::format("pod {} ({}) restarted {} time(s) within the window", p.name,
                                       fig.task, row.restarts));
    }
    job->pods.push_back(std::move(fig));
    // Pods kube-state-metrics knows, with their resources; tasks only the agents saw (outside
    // Kubernetes, or no kube-state-metrics) have no spec to judge (cpu-qos).
    kp.containers.push_back(MakeContainer(p, s, *made));  // the spec's, not the agent's cgroup
    if (p.ksm) job->k8s.pods.push_back(std::move(kp));
  }
  if (job->pods.empty()) {
    return NotFound(
        "job '{}': {} pod(s) found by {}, but none has CPU series in the window "
        "(container_cpu_usage_seconds_total{{{},container!=\"\"}}, or the tfdiag agents' "
        "tfdiag_task_cpu_seconds_total): is the kubelet's /metrics/cadvisor scraped?",
        o.job, pods.size(), job->discovery, pods_sel);
  }
  if (cpu_from_agents > 0) {
    job->notes.push_back(fmt::format(
        "CPU of {} of {} pods from the tfdiag agents (tfdiag_task_cpu_seconds_total: the task's "
        "process) where cAdvisor had no container series",
        cpu_from_agents, job->pods.size()));
  }
  job->notes.push_back(
      with_agent > 0
          ? fmt::format("{} of {} pods have tfdiag agent traffic series (worker x PS bytes)",
                        with_agent, job->pods.size())
          : "no tfdiag agent series for these pods (deploy/daemonset.yaml adds the worker x PS "
            "bytes matrix, HDFS input and run-queue latency)");
  std::sort(job->pods.begin(), job->pods.end(),
            [](const PromPodFigures& x, const PromPodFigures& y) { return x.task < y.task; });
  b.meta().warnings = job->notes;
  job->capture = b.Finish();
  return OkStatus();
}

}  // namespace tfdiag::prom
