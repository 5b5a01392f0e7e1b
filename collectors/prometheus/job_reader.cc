#include "collectors/prometheus/job_reader.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/capture_builder.h"

namespace tfdiag {

namespace {

constexpr const char* kRoles = "ps|worker|chief|master|evaluator";

// "PS" / "Worker" / "tf-ps" -> "ps", "worker"; "" when not a TF role.
std::string NormRole(std::string r) {
  std::transform(r.begin(), r.end(), r.begin(), [](unsigned char ch) { return std::tolower(ch); });
  for (const char* k : {"ps", "worker", "chief", "master", "evaluator"}) {
    if (r == k) return r;
  }
  return "";
}

// Role and index from a pod name "<job>-<role>-<index>".
bool RoleFromName(const std::string& job, const std::string& pod, std::string* role, int* index) {
  if (pod.rfind(job + "-", 0) != 0) return false;
  const std::string rest = pod.substr(job.size() + 1);
  const size_t dash = rest.rfind('-');
  if (dash == std::string::npos || dash + 1 == rest.size()) return false;
  const std::string r = NormRole(rest.substr(0, dash)), idx = rest.substr(dash + 1);
  if (r.empty() || idx.size() > 6 || !std::all_of(idx.begin(), idx.end(), ::isdigit)) return false;
  *role = r;
  *index = std::stoi(idx);
  return true;
}

struct PodInfo {
  std::string name, node, pod_ip, host_ip, owner_kind, owner_name, role, role_source;
  int index = -1;
};

std::string Dur(double s) { return fmt::format("{}s", static_cast<int64_t>(std::ceil(s))); }

// Series of a range query by pod: t (s) -> value.
using ByPod = std::map<std::string, std::map<double, double>>;
ByPod IndexByPod(const std::vector<PromSeries>& v) {
  ByPod out;
  for (const PromSeries& s : v) {
    auto& m = out[s.Label("pod")];
    for (const auto& [t, x] : s.points) {
      if (std::isfinite(x)) m[t] = x;
    }
  }
  return out;
}
std::map<std::string, double> InstantByPod(const std::vector<PromSeries>& v) {
  std::map<std::string, double> out;
  for (const PromSeries& s : v) {
    if (!s.points.empty() && std::isfinite(s.points[0].second))
      out[s.Label("pod")] = s.points[0].second;
  }
  return out;
}

// Sum over [first, last] of rate x dt: the counter's increase, counted from rates so that a
// restart (a counter reset) neither subtracts nor adds.
double Integral(const std::map<double, double>& rate, double upto) {
  double sum = 0;
  for (auto a = rate.begin(); a != rate.end(); ++a) {
    auto b = std::next(a);
    if (b == rate.end() || b->first > upto) break;
    sum += a->second * (b->first - a->first);
  }
  return sum;
}

}  // namespace

StatusOr<PromJob> ReadJobFromPrometheus(PromClient* client, const PromJobOptions& o) {
  PromJob job;
  if (o.job.empty()) return UsageError("--job: expected the TF job's name");
  if (!(o.end_s > o.start_s)) return UsageError("--start/--end: the window is empty");
  job.start_s = o.start_s;
  job.end_s = o.end_s;
  const double window = o.end_s - o.start_s;
  job.step_s = o.step_s > 0 ? o.step_s : std::max(15.0, std::ceil(window / 240));
  StatusOr<std::string> version = client->BuildVersion();
  if (!version.ok()) return version.status();
  job.server_version = *version;
  const std::string W = Dur(window);
  const std::string q_job = PromQuote(o.job);
  std::string ns_sel = o.namespace_.empty() ? "" : "namespace=\"" + PromQuote(o.namespace_) + "\",";

  // 1-3: discovery, each an instant query at the end over the whole window (pods that lived at
  // any time in it, replaced pods included).
  std::map<std::pair<std::string, std::string>, PodInfo> pods;  // (namespace, pod)
  auto take_info = [&](const std::vector<PromSeries>& v) {
    for (const PromSeries& s : v) {
      PodInfo& p = pods[{s.Label("namespace"), s.Label("pod")}];
      p.name = s.Label("pod");
      if (!s.Label("node").empty()) p.node = s.Label("node");
      if (!s.Label("pod_ip").empty()) p.pod_ip = s.Label("pod_ip");
      if (!s.Label("host_ip").empty()) p.host_ip = s.Label("host_ip");
      if (!s.Label("created_by_kind").empty()) p.owner_kind = s.Label("created_by_kind");
      if (!s.Label("created_by_name").empty()) p.owner_name = s.Label("created_by_name");
    }
  };
  const std::string info_by =
      "max by (namespace, pod, node, pod_ip, host_ip, created_by_kind, created_by_name) ";
  const std::vector<std::pair<std::string, std::string>> selectors = {
      {"kube_pod_info{created_by_name=\"" + o.job + "\"} (the pods' owner)",
       info_by + "(max_over_time(kube_pod_info{" + ns_sel + "created_by_name=\"" + q_job + "\"}[" +
           W + "]))"},
      {"kube_pod_labels{label_training_kubeflow_org_job_name=\"" + o.job +
           "\"} or legacy label_tf_job_name (Kubeflow labels; kube-state-metrics v2 exports them "
           "only when allow-listed with --metric-labels-allowlist)",
       "max by (namespace, pod) (max_over_time(kube_pod_labels{" + ns_sel +
           "label_training_kubeflow_org_job_name=\"" + q_job + "\"}[" + W +
           "]) or max_over_time(kube_pod_labels{" + ns_sel + "label_tf_job_name=\"" + q_job +
           "\"}[" + W + "]))"},
      {"pod names " + o.job + "-<ps|worker|chief|master|evaluator>-<index> in kube_pod_info",
       info_by + "(max_over_time(kube_pod_info{" + ns_sel + "pod=~\"" +
           PromQuote(PromRegexEscape(o.job)) + "-(" + kRoles + ")-[0-9]+\"}[" + W + "]))"},
  };
  for (const auto& [what, q] : selectors) {
    job.tried.push_back(what);
    StatusOr<std::vector<PromSeries>> r = client->Query(q, o.end_s);
    if (!r.ok()) return r.status();
    if (r->empty()) continue;
    take_info(*r);
    job.discovery = what;
    break;
  }
  if (pods.empty()) {
    std::string tried;
    for (const std::string& t : job.tried) tried += "\n  - " + t;
    return NotFound(
        "no pod of job '{}'{} found in Prometheus between {:.0f} and {:.0f} (Unix s); tried:{}",
        o.job, o.namespace_.empty() ? "" : " in namespace " + o.namespace_, o.start_s, o.end_s,
        tried);
  }
  std::set<std::string> namespaces;
  for (const auto& [key, p] : pods) namespaces.insert(key.first);
  if (namespaces.size() > 1) {
    std::string list;
    for (const std::string& n : namespaces) list += (list.empty() ? "" : ", ") + n;
    return UsageError("job '{}' has pods in several namespaces ({}): choose one with --namespace",
                      o.job, list);
  }
  job.namespace_ = *namespaces.begin();
  ns_sel = "namespace=\"" + PromQuote(job.namespace_) + "\",";
  std::string pod_re;
  for (const auto& [key, p] : pods) pod_re += (pod_re.empty() ? "" : "|") + PromRegexEscape(p.name);
  const std::string pods_sel = ns_sel + "pod=~\"" + PromQuote(pod_re) + "\"";

  // 4-5: where each pod ran, and its Kubeflow role labels when exported.
  {
    StatusOr<std::vector<PromSeries>> r = client->Query(
        info_by + "(max_over_time(kube_pod_info{" + pods_sel + "}[" + W + "]))", o.end_s);
    if (!r.ok()) return r.status();
    take_info(*r);
    StatusOr<std::vector<PromSeries>> l = client->Query(
        "max by (pod, label_training_kubeflow_org_replica_type, "
        "label_training_kubeflow_org_replica_index, label_tf_replica_type, "
        "label_tf_replica_index) (max_over_time(kube_pod_labels{" +
            pods_sel + "}[" + W + "]))",
        o.end_s);
    if (!l.ok()) return l.status();
    for (const PromSeries& s : *l) {
      auto it = pods.find({job.namespace_, s.Label("pod")});
      if (it == pods.end()) continue;
      std::string type = s.Label("label_training_kubeflow_org_replica_type");
      std::string idx = s.Label("label_training_kubeflow_org_replica_index");
      if (type.empty())
        type = s.Label("label_tf_replica_type"), idx = s.Label("label_tf_replica_index");
      if (NormRole(type).empty() || idx.empty() || idx.size() > 6 ||
          !std::all_of(idx.begin(), idx.end(), ::isdigit))
        continue;
      it->second.role = NormRole(type);
      it->second.index = std::stoi(idx);
      it->second.role_source = "label";
    }
  }
  int from_labels = 0, from_names = 0;
  for (auto& [key, p] : pods) {
    if (p.role.empty() && RoleFromName(o.job, p.name, &p.role, &p.index)) p.role_source = "name";
    if (p.role_source == "label") ++from_labels;
    if (p.role_source == "name") ++from_names;
    if (p.role.empty())
      job.notes.push_back("pod " + p.name + ": no replica type in its labels or name; skipped");
    if (!p.role.empty() && p.node.empty())
      job.notes.push_back("pod " + p.name + ": no node in kube_pod_info");
  }
  job.notes.push_back(
      fmt::format("pods found by {}; roles from replica-type labels for {}, from pod names for {}",
                  job.discovery, from_labels, from_names));

  // 6-13: the figures, each one query aggregated by pod.
  const std::string cont = pods_sel + ",container!=\"\",container!=\"POD\"";
  const std::string R = Dur(std::max(60.0, 2 * job.step_s));
  auto range = [&](const std::string& q) -> StatusOr<ByPod> {
    StatusOr<std::vector<PromSeries>> r = client->QueryRange(q, o.start_s, o.end_s, job.step_s);
    if (!r.ok()) return r.status();
    return IndexByPod(*r);
  };
  auto instant = [&](const std::string& q) -> StatusOr<std::map<std::string, double>> {
    StatusOr<std::vector<PromSeries>> r = client->Query(q, o.end_s);
    if (!r.ok()) return r.status();
    return InstantByPod(*r);
  };
  auto instant_res = [&](const std::string& q) -> StatusOr<std::map<std::string, double>> {
    StatusOr<std::vector<PromSeries>> r = client->Query(q, o.end_s);
    if (!r.ok()) return r.status();
    std::map<std::string, double> out;
    for (const PromSeries& s : *r) {
      if (!s.points.empty() && std::isfinite(s.points[0].second))
        out[s.Label("pod") + "/" + s.Label("resource")] = s.points[0].second;
    }
    return out;
  };
#define TFDIAG_TRY_ASSIGN(var, expr)            \
  auto var##_or = (expr);                       \
  if (!var##_or.ok()) return var##_or.status(); \
  auto var = std::move(*var##_or)
  TFDIAG_TRY_ASSIGN(cpu, range("sum by (pod) (rate(container_cpu_usage_seconds_total{" + cont +
                               "}[" + R + "]))"));
  TFDIAG_TRY_ASSIGN(periods, range("sum by (pod) (rate(container_cpu_cfs_periods_total{" + cont +
                                   "}[" + R + "]))"));
  TFDIAG_TRY_ASSIGN(throttled,
                    range("sum by (pod) (rate(container_cpu_cfs_throttled_periods_total{" + cont +
                          "}[" + R + "]))"));
  TFDIAG_TRY_ASSIGN(throttled_s,
                    range("sum by (pod) (rate(container_cpu_cfs_throttled_seconds_total{" + cont +
                          "}[" + R + "]))"));
  TFDIAG_TRY_ASSIGN(threads, range("sum by (pod) (container_threads{" + cont + "})"));
  // Network counters are the pod's (the pause container's netns); the kubelet may export one
  // interface from several cgroups, so each interface is counted once (max), then summed.
  TFDIAG_TRY_ASSIGN(rx, range("sum by (pod) (max by (pod, interface) "
                              "(rate(container_network_receive_bytes_total{" +
                              pods_sel + ",interface!=\"lo\"}[" + R + "])))"));
  TFDIAG_TRY_ASSIGN(tx, range("sum by (pod) (max by (pod, interface) "
                              "(rate(container_network_transmit_bytes_total{" +
                              pods_sel + ",interface!=\"lo\"}[" + R + "])))"));
  // CPU (cores) and memory (bytes) per pod, summed over its containers; keyed "pod/resource".
  TFDIAG_TRY_ASSIGN(limits, instant_res("sum by (pod, resource) (max by (pod, container, resource) "
                                        "(max_over_time(kube_pod_container_resource_limits{" +
                                        pods_sel + ",resource=~\"cpu|memory\"}[" + W + "])))"));
  TFDIAG_TRY_ASSIGN(requests,
                    instant_res("sum by (pod, resource) (max by (pod, container, resource) "
                                "(max_over_time(kube_pod_container_resource_requests{" +
                                pods_sel + ",resource=~\"cpu|memory\"}[" + W + "])))"));
  TFDIAG_TRY_ASSIGN(
      restarts, instant("sum by (pod) (max_over_time(kube_pod_container_status_restarts_total{" +
                        pods_sel + "}[" + W +
                        "]) - min_over_time("
                        "kube_pod_container_status_restarts_total{" +
                        pods_sel + "}[" + W + "]))"));
  // 12-13: the tfdiag agents' series, where agents run (deploy/daemonset.yaml): bytes between
  // each task and each peer task over the window (the worker x PS matrix), and HDFS input.
  const std::string agent_sel = "{" + pods_sel + "}";
  StatusOr<std::vector<PromSeries>> peer_bytes = client->Query(
      "sum by (pod, peer, peer_task, direction) (increase(tfdiag_traffic_bytes_total{" + pods_sel +
          ",peer_task=~\"(ps|worker|chief|master|evaluator):[0-9]+\"}[" + W + "]))",
      o.end_s);
  if (!peer_bytes.ok()) return peer_bytes.status();
  // Agents that were down in the window (scrape `up` of a job named like tfdiag, with the
  // agent_node label deploy/prometheus.yml adds): their nodes' agent figures are missing.
  StatusOr<std::vector<PromSeries>> agents_down = client->Query(
      "min by (instance, agent_node) (min_over_time(up{job=~\".*tfdiag.*\"}[" + W + "])) == 0",
      o.end_s);
  if (!agents_down.ok()) return agents_down.status();
  {
    std::set<std::string> job_nodes;
    for (const auto& [key, p] : pods) job_nodes.insert(p.node);
    for (const PromSeries& a : *agents_down) {
      const std::string node = a.Label("agent_node");
      if (!node.empty() && !job_nodes.count(node)) continue;
      job.notes.push_back(fmt::format(
          "the tfdiag agent on node {} ({}) was down during the window: bytes per peer and HDFS "
          "input of that node's pods are missing or partial",
          node.empty() ? "?" : node, a.Label("instance")));
    }
  }
  TFDIAG_TRY_ASSIGN(
      hdfs, range("sum by (pod) (rate(tfdiag_hdfs_read_bytes_total" + agent_sel + "[" + R + "]))"));
#undef TFDIAG_TRY_ASSIGN

  CaptureBuilder b;
  CaptureMeta& meta = b.meta();
  meta.window_start = static_cast<TimeNs>(o.start_s * 1e9);
  meta.window_end = static_cast<TimeNs>(o.end_s * 1e9);
  meta.interval_ms = static_cast<int64_t>(job.step_s * 1000);
  meta.probes = "prometheus";
  {
    std::set<std::string> nodes;
    for (const auto& [key, p] : pods) nodes.insert(p.node);
    meta.host = fmt::format("{} nodes (Prometheus {})", nodes.size(), job.server_version);
    meta.kernel = "-";
  }
  meta.tool_version = TFDIAG_VERSION;
  int no_cpu = 0, with_agent = 0;
  for (const auto& [key, p] : pods) {
    if (p.role.empty()) continue;
    K8sPod kp;
    kp.name = p.name;
    kp.namespace_ = job.namespace_;
    kp.node = p.node;
    kp.pod_ip = p.pod_ip;
    kp.role = p.role;
    kp.role_source = p.role_source;
    kp.index = p.index;
    kp.owner_kind = p.owner_kind;
    kp.owner_name = p.owner_name;
    kp.source.file = "prometheus";
    kp.source.path = "kube_pod_info{pod=\"" + p.name + "\"}";
    const auto lim = limits.find(p.name + "/cpu"), req = requests.find(p.name + "/cpu");
    const auto mlim = limits.find(p.name + "/memory"), mreq = requests.find(p.name + "/memory");
    const auto& c = cpu[p.name];
    if (c.size() < 2) {
      ++no_cpu;
      job.notes.push_back("pod " + p.name + " (" + p.role + ":" + std::to_string(p.index) +
                          "): fewer than 2 CPU points in the window (cAdvisor series missing)");
      job.k8s.pods.push_back(std::move(kp));
      continue;
    }
    ProcessRow row;
    row.task = b.AddTask(p.role, 0, p.index);
    row.pod = b.Intern(p.name);
    row.node = p.node.empty() ? 0 : b.Intern(p.node);
    row.pod_ip = p.pod_ip.empty() ? 0 : b.Intern(p.pod_ip);
    row.container = b.Intern("");
    if (lim != limits.end() && lim->second > 0) {
      row.cpu_limit = lim->second;
      row.period_us = 100000;
      row.quota_us = static_cast<int64_t>(lim->second * 100000);
    }
    if (req != requests.end()) row.cpu_request = req->second;
    if (auto rs = restarts.find(p.name); rs != restarts.end())
      row.restarts = static_cast<int32_t>(std::lround(rs->second));
    row.first_ns = static_cast<TimeNs>(c.begin()->first * 1e9);
    row.last_ns = static_cast<TimeNs>(c.rbegin()->first * 1e9);
    row.exited = c.rbegin()->first + 2 * job.step_s < o.end_s;
    const uint32_t proc = b.AddProcess(row);
    const auto& per = periods[p.name];
    const auto& thr = throttled[p.name];
    const auto& thr_s = throttled_s[p.name];
    const auto& th = threads[p.name];
    const bool cfs = !per.empty();
    double last_threads = 0;
    const auto& rxs = rx[p.name];
    const auto& txs = tx[p.name];
    const StrId net_local = b.Intern("pod network (cAdvisor)"), net_peer = b.Intern("");
    const auto& hd = hdfs[p.name];
    const StrId hdfs_peer = b.Intern("hdfs"), agent_local = b.Intern("tfdiag agent");
    for (const auto& [t, x] : c) {
      ProcessSampleRow s;
      s.ts = static_cast<TimeNs>(t * 1e9);
      s.process = proc;
      s.cpu_ns = static_cast<int64_t>(Integral(c, t) * 1e9);
      auto ti = th.find(t);
      if (ti != th.end()) last_threads = ti->second;
      s.threads = static_cast<int32_t>(std::lround(last_threads));
      s.runnable = 0;  // not exported by cAdvisor
      if (cfs) {
        s.nr_periods = static_cast<int64_t>(std::llround(Integral(per, t)));
        s.nr_throttled = static_cast<int64_t>(std::llround(Integral(thr, t)));
        if (!thr_s.empty()) s.throttled_ns = static_cast<int64_t>(Integral(thr_s, t) * 1e9);
      }
      b.AddProcessSample(s);
      if (!rxs.empty() || !txs.empty()) {
        // The pod's bytes over all its peers (peer ""), cumulative from the window's start.
        TrafficRow tr;
        tr.ts = s.ts;
        tr.process = proc;
        tr.local = net_local;
        tr.peer = net_peer;
        tr.bytes_received = static_cast<int64_t>(Integral(rxs, t));
        tr.bytes_sent = static_cast<int64_t>(Integral(txs, t));
        b.AddTraffic(tr);
      }
      if (!hd.empty()) {
        TrafficRow tr;
        tr.ts = s.ts;
        tr.process = proc;
        tr.local = agent_local;
        tr.peer = hdfs_peer;
        tr.hdfs = true;
        tr.bytes_received = static_cast<int64_t>(Integral(hd, t));
        b.AddTraffic(tr);
      }
    }
    // Bytes to and from each peer task over the window (agent), one row at the window's end.
    std::map<std::pair<std::string, std::string>, std::pair<int64_t, int64_t>> peers;
    for (const PromSeries& ps : *peer_bytes) {
      if (ps.Label("pod") != p.name || ps.points.empty() || !std::isfinite(ps.points[0].second))
        continue;
      auto& v = peers[{ps.Label("peer"), ps.Label("peer_task")}];
      (ps.Label("direction") == "sent" ? v.first : v.second) +=
          static_cast<int64_t>(ps.points[0].second);
    }
    for (const auto& [peer, v] : peers) {
      const std::string& label = peer.second;
      const size_t colon = label.find(':');
      if (colon == std::string::npos || label.size() - colon > 7) continue;
      TrafficRow tr;
      tr.ts = row.last_ns;
      tr.process = proc;
      tr.local = agent_local;
      tr.peer = b.Intern(peer.first);
      tr.peer_task = b.AddTask(label.substr(0, colon), 0, std::stoi(label.substr(colon + 1)));
      tr.bytes_sent = v.first;
      tr.bytes_received = v.second;
      b.AddTraffic(tr);
    }
    if (!peers.empty()) ++with_agent;
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
    if (cfs && np > 0) fig.throttled_pct = 100 * Integral(thr, fig.last_s) / np;
    double tsum = 0;
    for (const auto& [t, x] : th) tsum += x;
    fig.threads = th.empty() ? 0 : tsum / th.size();
    const auto& r = rx[p.name];
    const auto& w = tx[p.name];
    if (span > 0) {
      fig.rx_bytes_per_s = Integral(r, fig.last_s) / span;
      fig.tx_bytes_per_s = Integral(w, fig.last_s) / span;
    }
    fig.restarts = row.restarts;
    if (row.restarts > 0) {
      job.notes.push_back(fmt::format("pod {} ({}) restarted {} time(s) within the window", p.name,
                                      fig.task, row.restarts));
    }
    job.pods.push_back(std::move(fig));
    K8sContainer kc;
    kc.name = "(all containers)";
    kc.res.cpu_limit_m = row.cpu_limit > 0 ? std::llround(row.cpu_limit * 1000) : -1;
    kc.res.cpu_request_m = row.cpu_request > 0 ? std::llround(row.cpu_request * 1000) : -1;
    kc.res.cpu_limit_text = fmt::format("{}m", kc.res.cpu_limit_m);
    kc.res.cpu_request_text = fmt::format("{}m", kc.res.cpu_request_m);
    if (mlim != limits.end()) kc.res.mem_limit = static_cast<int64_t>(mlim->second);
    if (mreq != requests.end()) kc.res.mem_request = static_cast<int64_t>(mreq->second);
    kp.containers.push_back(std::move(kc));
    job.k8s.pods.push_back(std::move(kp));
  }
  if (job.pods.empty()) {
    return NotFound(
        "job '{}': {} pod(s) found by {}, but none has container CPU series "
        "(container_cpu_usage_seconds_total{{{},container!=\"\"}}) in the window: is the "
        "kubelet's /metrics/cadvisor scraped?",
        o.job, pods.size(), job.discovery, pods_sel);
  }
  job.notes.push_back(
      with_agent > 0
          ? fmt::format("{} of {} pods have tfdiag agent traffic series (worker x PS bytes)",
                        with_agent, job.pods.size())
          : "no tfdiag agent series for these pods (deploy/daemonset.yaml adds the worker x PS "
            "bytes matrix, HDFS input and run-queue latency)");
  std::sort(job.pods.begin(), job.pods.end(),
            [](const PromPodFigures& a, const PromPodFigures& b) { return a.task < b.task; });
  meta.warnings = job.notes;
  job.capture = b.Finish();
  return job;
}

}  // namespace tfdiag
