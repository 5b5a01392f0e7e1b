// Step 5 of ReadJobFromPrometheus: the Capture, the K8sDeployment and the per-pod figures built
// from the series read (job_steps.h).
#include <algorithm>
#include <cmath>
#include <set>

#include "collectors/prometheus/job_steps.h"
#include "core/capture_builder.h"

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
  meta->host = fmt::format("{} nodes (Prometheus {})", nodes.size(), job.server_version);
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

// The pod's process row: task, pod, node, CPU limit and request, restarts, time range.
ProcessRow MakeProcessRow(const PodInfo& p, const JobSeries& s, const std::map<double, double>& c,
                          double end_s, double step_s, CaptureBuilder* b) {
  ProcessRow row;
  row.task = b->AddTask(p.role, 0, p.index);
  row.pod = b->Intern(p.name);
  row.node = p.node.empty() ? 0 : b->Intern(p.node);
  row.pod_ip = p.pod_ip.empty() ? 0 : b->Intern(p.pod_ip);
  row.container = b->Intern("");
  const auto lim = s.limits.find(p.name + "/cpu"), req = s.requests.find(p.name + "/cpu");
  if (lim != s.limits.end() && lim->second > 0) {
    row.cpu_limit = lim->second;
    row.period_us = 100000;
    row.quota_us = static_cast<int64_t>(lim->second * 100000);
  }
  if (req != s.requests.end()) row.cpu_request = req->second;
  if (auto rs = s.restarts.find(p.name); rs != s.restarts.end())
    row.restarts = static_cast<int32_t>(std::lround(rs->second));
  row.first_ns = static_cast<TimeNs>(c.begin()->first * 1e9);
  row.last_ns = static_cast<TimeNs>(c.rbegin()->first * 1e9);
  row.exited = c.rbegin()->first + 2 * step_s < end_s;
  return row;
}

const std::map<double, double>& Of(const ByPod& m, const std::string& pod) {
  static const std::map<double, double> kEmpty;
  auto it = m.find(pod);
  return it == m.end() ? kEmpty : it->second;
}

// One sample per CPU point: cumulative CPU, threads, CFS periods; and the pod's network bytes
// (cAdvisor, all peers) and HDFS input (agent), cumulative from the window's start.
void AddSamples(const PodInfo& p, const JobSeries& s, uint32_t proc, CaptureBuilder* b) {
  const auto& c = Of(s.cpu, p.name);
  const auto& per = Of(s.periods, p.name);
  const auto& thr = Of(s.throttled, p.name);
  const auto& thr_s = Of(s.throttled_s, p.name);
  const auto& th = Of(s.threads, p.name);
  const auto& rxs = Of(s.rx, p.name);
  const auto& txs = Of(s.tx, p.name);
  const auto& hd = Of(s.hdfs, p.name);
  const bool cfs = !per.empty();
  double last_threads = 0;
  const StrId net_local = b->Intern("pod network (cAdvisor)"), net_peer = b->Intern("");
  const StrId hdfs_peer = b->Intern("hdfs"), agent_local = b->Intern("tfdiag agent");
  for (const auto& [t, x] : c) {
    ProcessSampleRow row;
    row.ts = static_cast<TimeNs>(t * 1e9);
    row.process = proc;
    row.cpu_ns = static_cast<int64_t>(Integral(c, t) * 1e9);
    auto ti = th.find(t);
    if (ti != th.end()) last_threads = ti->second;
    row.threads = static_cast<int32_t>(std::lround(last_threads));
    row.runnable = 0;  // not exported by cAdvisor
    if (cfs) {
      row.nr_periods = static_cast<int64_t>(std::llround(Integral(per, t)));
      row.nr_throttled = static_cast<int64_t>(std::llround(Integral(thr, t)));
      if (!thr_s.empty()) row.throttled_ns = static_cast<int64_t>(Integral(thr_s, t) * 1e9);
    }
    b->AddProcessSample(row);
    if (!rxs.empty() || !txs.empty()) {
      TrafficRow tr;  // the pod's bytes over all its peers (peer "")
      tr.ts = row.ts;
      tr.process = proc;
      tr.local = net_local;
      tr.peer = net_peer;
      tr.bytes_received = static_cast<int64_t>(Integral(rxs, t));
      tr.bytes_sent = static_cast<int64_t>(Integral(txs, t));
      b->AddTraffic(tr);
    }
    if (!hd.empty()) {
      TrafficRow tr;
      tr.ts = row.ts;
      tr.process = proc;
      tr.local = agent_local;
      tr.peer = hdfs_peer;
      tr.hdfs = true;
      tr.bytes_received = static_cast<int64_t>(Integral(hd, t));
      b->AddTraffic(tr);
    }
  }
}

// Bytes to and from each peer task over the window (agent), one row at the window's end.
// Returns whether the pod had any.
bool AddPeerBytes(const PodInfo& p, const JobSeries& s, uint32_t proc, TimeNs at,
                  CaptureBuilder* b) {
  std::map<std::pair<std::string, std::string>, std::pair<int64_t, int64_t>> peers;
  for (const PromSeries& ps : s.peer_bytes) {
    if (ps.Label("pod") != p.name || ps.points.empty() || !std::isfinite(ps.points[0].second))
      continue;
    auto& v = peers[{ps.Label("peer"), ps.Label("peer_task")}];
    (ps.Label("direction") == "sent" ? v.first : v.second) +=
        static_cast<int64_t>(ps.points[0].second);
  }
  const StrId agent_local = b->Intern("tfdiag agent");
  for (const auto& [peer, v] : peers) {
    const std::string& label = peer.second;
    const size_t colon = label.find(':');
    if (colon == std::string::npos || label.size() - colon > 7) continue;
    TrafficRow tr;
    tr.ts = at;
    tr.process = proc;
    tr.local = agent_local;
    tr.peer = b->Intern(peer.first);
    tr.peer_task = b->AddTask(label.substr(0, colon), 0, std::stoi(label.substr(colon + 1)));
    tr.bytes_sent = v.first;
    tr.bytes_received = v.second;
    b->AddTraffic(tr);
  }
  return !peers.empty();
}

// The pod's figures over the window, for the JSON report.
PromPodFigures MakeFigures(const PodInfo& p, const JobSeries& s, const ProcessRow& row) {
  const auto& c = Of(s.cpu, p.name);
  const auto& per = Of(s.periods, p.name);
  const auto& th = Of(s.threads, p.name);
  PromPodFigures fig;
  fig.pod = p.name;
  fig.node = p.node;
  fig.pod_ip = p.pod_ip;
  fig.task = p.role + ":" + std::to_string(p.index);
  fig.first_s = c.begin()->first;
  fig.last_s = c.rbegin()->first;
  const double span = fig.last_s - fig.first_s;
  fig.cpu_cores = span > 0 ? Integral(c, fig.last_s) / span : 0;
  fig.cpu_limit = row.cpu_limit;
  fig.cpu_request = row.cpu_request;
  const double np = Integral(per, fig.last_s);
  if (!per.empty() && np > 0)
    fig.throttled_pct = 100 * Integral(Of(s.throttled, p.name), fig.last_s) / np;
  double tsum = 0;
  for (const auto& [t, x] : th) tsum += x;
  fig.threads = th.empty() ? 0 : tsum / th.size();
  if (span > 0) {
    fig.rx_bytes_per_s = Integral(Of(s.rx, p.name), fig.last_s) / span;
    fig.tx_bytes_per_s = Integral(Of(s.tx, p.name), fig.last_s) / span;
  }
  fig.restarts = row.restarts;
  return fig;
}

// The pod's containers summed, as one K8sContainer with its CPU and memory resources.
K8sContainer MakeContainer(const PodInfo& p, const JobSeries& s, const ProcessRow& row) {
  K8sContainer kc;
  kc.name = "(all containers)";
  kc.res.cpu_limit_m = row.cpu_limit > 0 ? std::llround(row.cpu_limit * 1000) : -1;
  kc.res.cpu_request_m = row.cpu_request > 0 ? std::llround(row.cpu_request * 1000) : -1;
  kc.res.cpu_limit_text = fmt::format("{}m", kc.res.cpu_limit_m);
  kc.res.cpu_request_text = fmt::format("{}m", kc.res.cpu_request_m);
  const auto mlim = s.limits.find(p.name + "/memory"), mreq = s.requests.find(p.name + "/memory");
  if (mlim != s.limits.end()) kc.res.mem_limit = static_cast<int64_t>(mlim->second);
  if (mreq != s.requests.end()) kc.res.mem_request = static_cast<int64_t>(mreq->second);
  return kc;
}

}  // namespace

Status BuildJobCapture(const PromJobOptions& o, const PodMap& pods, const JobSeries& s,
                       const std::string& pods_sel, PromJob* job) {
  CaptureBuilder b;
  FillMeta(o, pods, *job, &b.meta());
  int with_agent = 0;
  for (const auto& [key, p] : pods) {
    if (p.role.empty()) continue;
    K8sPod kp = MakeK8sPod(p, job->namespace_);
    const auto& c = Of(s.cpu, p.name);
    if (c.size() < 2) {
      job->notes.push_back("pod " + p.name + " (" + p.role + ":" + std::to_string(p.index) +
                           "): fewer than 2 CPU points in the window (cAdvisor series missing)");
      job->k8s.pods.push_back(std::move(kp));
      continue;
    }
    const ProcessRow row = MakeProcessRow(p, s, c, o.end_s, job->step_s, &b);
    const uint32_t proc = b.AddProcess(row);
    AddSamples(p, s, proc, &b);
    if (AddPeerBytes(p, s, proc, row.last_ns, &b)) ++with_agent;
    PromPodFigures fig = MakeFigures(p, s, row);
    if (row.restarts > 0) {
      job->notes.push_back(fmt::format("pod {} ({}) restarted {} time(s) within the window", p.name,
                                       fig.task, row.restarts));
    }
    job->pods.push_back(std::move(fig));
    kp.containers.push_back(MakeContainer(p, s, row));
    job->k8s.pods.push_back(std::move(kp));
  }
  if (job->pods.empty()) {
    return NotFound(
        "job '{}': {} pod(s) found by {}, but none has container CPU series "
        "(container_cpu_usage_seconds_total{{{},container!=\"\"}}) in the window: is the "
        "kubelet's /metrics/cadvisor scraped?",
        o.job, pods.size(), job->discovery, pods_sel);
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
