#include "collectors/prometheus/job_reader.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "collectors/prometheus/job_steps.h"
#include "core/checked_number.h"
#include "core/escape.h"

namespace tfdiag {
namespace prom {

namespace {

// Role and index from a pod name "<job>-<role>-<index>" (ParseTfPodName).
bool RoleFromName(const std::string& job, const std::string& pod, std::string* role, int* index) {
  const std::optional<TfPodName> p = ParseTfPodName(pod);
  if (!p.has_value() || p->job != job || p->role.empty()) return false;
  *role = p->role;
  *index = p->index;
  return true;
}

// A range query's series keyed by `key(series)`.
template <typename KeyOf>
ByPod IndexBy(const std::vector<PromSeries>& v, KeyOf key) {
  ByPod out;
  for (const PromSeries& s : v) {
    Points& m = out[key(s)];
    for (const auto& [t, x] : s.points) {
      if (std::isfinite(x)) m.emplace_back(t, x);
    }
  }
  // Sorted by time; of points at one time (series that share a key), the last one read.
  for (auto& [k, m] : out) {
    std::stable_sort(m.begin(), m.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    size_t w = 0;
    for (size_t i = 0; i < m.size(); ++i) {
      if (w > 0 && m[w - 1].first == m[i].first) {
        m[w - 1] = m[i];
      } else {
        m[w++] = m[i];
      }
    }
    m.resize(w);
  }
  return out;
}

// An instant vector's values keyed by `key(series)`.
template <typename Key>
InstantMap InstantBy(const std::vector<PromSeries>& v, Key key) {
  InstantMap out;
  for (const PromSeries& s : v) {
    if (!s.points.empty() && std::isfinite(s.points[0].second)) out[key(s)] = s.points[0].second;
  }
  return out;
}

// Merges kube_pod_info-like series (labels namespace, pod, node, pod_ip, host_ip,
// created_by_kind, created_by_name) into `pods`.
void TakeInfo(const std::vector<PromSeries>& v, PodMap* pods) {
  for (const PromSeries& s : v) {
    PodInfo& p = (*pods)[{s.Label("namespace"), s.Label("pod")}];
    p.name = s.Label("pod");
    p.ksm = true;
    if (!s.Label("node").empty()) p.node = s.Label("node");
    if (!s.Label("pod_ip").empty()) p.pod_ip = s.Label("pod_ip");
    if (!s.Label("host_ip").empty()) p.host_ip = s.Label("host_ip");
    if (!s.Label("created_by_kind").empty()) p.owner_kind = s.Label("created_by_kind");
    if (!s.Label("created_by_name").empty()) p.owner_name = s.Label("created_by_name");
  }
}

ByPod IndexByPod(const std::vector<PromSeries>& v) {
  return IndexBy(v, [](const PromSeries& s) { return s.Label("pod"); });
}

// Merges the agents' tfdiag_task_up series (labels namespace, pod, node, replica_type,
// replica_index) into `pods`: one entry per task, keyed by pod, else by task.
void TakeAgentTasks(const std::vector<PromSeries>& v, PodMap* pods) {
  for (const PromSeries& s : v) {
    const std::string role = TfRoleOf(s.Label("replica_type"));
    int index = 0;
    if (role.empty() || !ParseTaskIndex(s.Label("replica_index"), &index)) continue;
    PodInfo& p = (*pods)[{s.Label("namespace"), AgentKey(s)}];
    p.name = s.Label("pod");
    p.node = s.Label("node");
    p.role = role;
    p.index = index;
    p.role_source = "agent";
    p.agent = true;
  }
}

const char* const kInfoBy =
    "max by (namespace, pod, node, pod_ip, host_ip, created_by_kind, created_by_name) ";

}  // namespace

std::string Key(const PodInfo& p) {
  return p.name.empty() ? p.role + ":" + std::to_string(p.index) : p.name;
}

std::string AgentKey(const PromSeries& s) {
  const std::string pod = s.Label("pod");
  return pod.empty() ? s.Label("replica_type") + ":" + s.Label("replica_index") : pod;
}

std::string Dur(double s) { return fmt::format("{}s", static_cast<int64_t>(std::ceil(s))); }

double Integral(const Points& rate, double upto) {
  double sum = 0;
  for (size_t i = 0; i + 1 < rate.size() && rate[i + 1].first <= upto; ++i) {
    sum += rate[i].second * (rate[i + 1].first - rate[i].first);
  }
  return sum;
}

Status DiscoverPods(PromClient* client, const PromJobOptions& o, const std::string& W, PromJob* job,
                    PodMap* pods) {
  const std::string q_job = PromQuote(o.job);
  const std::string ns_sel =
      o.namespace_.empty() ? "" : "namespace=\"" + PromQuote(o.namespace_) + "\",";
  // Each an instant query at the end over the whole window (pods that lived at any time in it,
  // replaced pods included).
  struct Selector {
    std::string what, promql;
    bool agent = false;  // the agents' series
  };
  const std::vector<Selector> selectors = {
      {"kube_pod_info{created_by_name=\"" + o.job + "\"} (the pods' owner)",
       kInfoBy + std::string("(max_over_time(kube_pod_info{") + ns_sel + "created_by_name=\"" +
           q_job + "\"}[" + W + "]))"},
      {"kube_pod_labels{label_training_kubeflow_org_job_name=\"" + o.job +
           "\"} or legacy label_tf_job_name (Kubeflow labels; kube-state-metrics v2 exports them "
           "only when allow-listed with --metric-labels-allowlist)",
       "max by (namespace, pod) (max_over_time(kube_pod_labels{" + ns_sel +
           "label_training_kubeflow_org_job_name=\"" + q_job + "\"}[" + W +
           "]) or max_over_time(kube_pod_labels{" + ns_sel + "label_tf_job_name=\"" + q_job +
           "\"}[" + W + "]))"},
      {"pod names " + o.job + "-<" + TfRolesAlternation() + ">-<index> in kube_pod_info",
       kInfoBy + std::string("(max_over_time(kube_pod_info{") + ns_sel + "pod=~\"" +
           PromQuote(PromRegexEscape(o.job)) + "-(" + TfRolesAlternation() + ")-[0-9]+\"}[" + W +
           "]))"},
      {"tfdiag agents' series tfdiag_task_up{tf_job=\"" + o.job +
           "\"} (tasks the agents saw; without kube-state-metrics, or outside Kubernetes)",
       "max by (namespace, pod, node, replica_type, replica_index) (max_over_time("
       "tfdiag_task_up{" +
           ns_sel + "tf_job=\"" + q_job + "\"}[" + W + "]))",
       true},
  };
  for (const Selector& sel : selectors) {
    job->tried.push_back(sel.what);
    StatusOr<std::vector<PromSeries>> r = client->Query(sel.promql, o.end_s);
    if (!r.ok()) return r.status();
    if (r->empty()) continue;
    if (sel.agent) {
      TakeAgentTasks(*r, pods);
    } else {
      TakeInfo(*r, pods);
    }
    if (pods->empty()) continue;
    job->discovery = sel.what;
    job->discovery_promql = sel.promql;
    break;
  }
  if (pods->empty()) {
    // The message's own line breaks are "\n  " (cli/main.cc keeps those); every value in it is
    // escaped here, so none of its characters can break a line.
    std::string tried;
    for (const std::string& t : job->tried) tried += "\n  - " + Printable(t);
    StatusOr<std::string> jobs = AgentJobsText(client, o.namespace_, o.start_s, o.end_s);
    if (!jobs.ok()) return jobs.status();
    StatusOr<std::string> tf_jobs = TfJobsText(client, o.start_s, o.end_s);
    if (!tf_jobs.ok()) return tf_jobs.status();
    return NotFound("no pod of job '{}'{} found in Prometheus between {} and {}; tried:{}{}{}",
                    Printable(o.job),
                    o.namespace_.empty() ? "" : " in namespace " + Printable(o.namespace_),
                    FormatPromTime(o.start_s), FormatPromTime(o.end_s), tried, *tf_jobs, *jobs);
  }
  std::set<std::string> namespaces;
  for (const auto& [key, p] : *pods) namespaces.insert(key.first);
  if (namespaces.size() > 1) {
    std::string list;
    for (const std::string& n : namespaces) list += (list.empty() ? "" : ", ") + n;
    return UsageError("job '{}' has pods in several namespaces ({}): choose one with --namespace",
                      o.job, list);
  }
  job->namespace_ = *namespaces.begin();
  return OkStatus();
}

Status ReadPlacement(const QueryContext& q, PromJob* job, PodMap* pods) {
  const PromJobOptions& o = *q.o;
  StatusOr<std::vector<PromSeries>> r = q.client->Query(
      kInfoBy + std::string("(max_over_time(kube_pod_info{") + q.pods_sel + "}[" + q.W + "]))",
      o.end_s);
  if (!r.ok()) return r.status();
  TakeInfo(*r, pods);
  StatusOr<std::vector<PromSeries>> l = q.client->Query(
      "max by (pod, label_training_kubeflow_org_replica_type, "
      "label_training_kubeflow_org_replica_index, label_tf_replica_type, "
      "label_tf_replica_index) (max_over_time(kube_pod_labels{" +
          q.pods_sel + "}[" + q.W + "]))",
      o.end_s);
  if (!l.ok()) return l.status();
  for (const PromSeries& s : *l) {
    auto it = pods->find({job->namespace_, s.Label("pod")});
    if (it == pods->end()) continue;
    std::string type = s.Label("label_training_kubeflow_org_replica_type");
    std::string idx = s.Label("label_training_kubeflow_org_replica_index");
    if (type.empty())
      type = s.Label("label_tf_replica_type"), idx = s.Label("label_tf_replica_index");
    int index = 0;
    if (TfRoleOf(type).empty() || !ParseTaskIndex(idx, &index)) continue;
    it->second.role = TfRoleOf(type);
    it->second.index = index;
    it->second.role_source = "label";
  }
  return OkStatus();
}

void AssignRoles(const PromJobOptions& o, PromJob* job, PodMap* pods) {
  int from_labels = 0, from_names = 0, from_agents = 0;
  for (auto& [key, p] : *pods) {
    if (p.role.empty() && RoleFromName(o.job, p.name, &p.role, &p.index)) p.role_source = "name";
    if (p.role_source == "label") ++from_labels;
    if (p.role_source == "name") ++from_names;
    if (p.role_source == "agent") ++from_agents;
    if (p.role.empty())
      job->notes.push_back("pod " + p.name + ": no replica type in its labels or name; skipped");
    if (!p.role.empty() && p.node.empty())
      job->notes.push_back("pod " + Key(p) + ": no node in kube_pod_info or the agent's labels");
  }
  job->notes.push_back(fmt::format(
      "pods found by {}; roles from replica-type labels for {}, from pod names for {}{}",
      job->discovery, from_labels, from_names,
      from_agents > 0 ? fmt::format(", from the agents' labels for {}", from_agents) : ""));
}

StatusOr<JobSeries> QueryJobSeries(const QueryContext& q) {
  const PromJobOptions& o = *q.o;
  JobSeries s;
  const std::string cont = q.pods_sel + ",container!=\"\",container!=\"POD\"";
  const std::string& R = q.R;
  const double step = q.step_s;
  // One range query aggregated by pod.
  auto range = [&](const std::string& promql, ByPod* out) -> Status {
    StatusOr<std::vector<PromSeries>> r = q.client->QueryRange(promql, o.start_s, o.end_s, step);
    if (!r.ok()) return r.status();
    *out = IndexByPod(*r);
    return OkStatus();
  };
  // One instant query at the window's end, keyed by pod, or by "pod/resource" when by_resource.
  auto instant = [&](const std::string& promql, bool by_resource, InstantMap* out) -> Status {
    StatusOr<std::vector<PromSeries>> r = q.client->Query(promql, o.end_s);
    if (!r.ok()) return r.status();
    *out = InstantBy(*r, [&](const PromSeries& x) {
      return by_resource ? x.Label("pod") + "/" + x.Label("resource") : x.Label("pod");
    });
    return OkStatus();
  };
  // Each series once per (pod, container): the same container scraped by two jobs (a kubelet
  // and a cadvisor job, say) is not counted twice (NoteDuplicateSeries says so).
  TFDIAG_RETURN_IF_ERROR(NoteDuplicateSeries(q, false, &s.duplicates));
  TFDIAG_RETURN_IF_ERROR(
      range("sum by (pod) (max by (pod, container) (rate(container_cpu_usage_seconds_total{" +
                cont + "}[" + R + "])))",
            &s.cpu));
  TFDIAG_RETURN_IF_ERROR(
      range("sum by (pod) (max by (pod, container) (rate(container_cpu_cfs_periods_total{" + cont +
                "}[" + R + "])))",
            &s.periods));
  TFDIAG_RETURN_IF_ERROR(range(
      "sum by (pod) (max by (pod, container) (rate(container_cpu_cfs_throttled_periods_total{" +
          cont + "}[" + R + "])))",
      &s.throttled));
  TFDIAG_RETURN_IF_ERROR(range(
      "sum by (pod) (max by (pod, container) (rate(container_cpu_cfs_throttled_seconds_total{" +
          cont + "}[" + R + "])))",
      &s.throttled_s));
  TFDIAG_RETURN_IF_ERROR(range(
      "sum by (pod) (max by (pod, container) (container_threads{" + cont + "}))", &s.threads));
  // Network counters are the pod's (the pause container's netns); the kubelet may export one
  // interface from several cgroups, so each interface is counted once (max), then summed.
  TFDIAG_RETURN_IF_ERROR(
      range("sum by (pod) (max by (pod, interface) "
            "(rate(container_network_receive_bytes_total{" +
                q.pods_sel + ",interface!=\"lo\"}[" + R + "])))",
            &s.rx));
  TFDIAG_RETURN_IF_ERROR(
      range("sum by (pod) (max by (pod, interface) "
            "(rate(container_network_transmit_bytes_total{" +
                q.pods_sel + ",interface!=\"lo\"}[" + R + "])))",
            &s.tx));
  // CPU (cores) and memory (bytes) per pod, summed over its containers; keyed "pod/resource".
  TFDIAG_RETURN_IF_ERROR(
      instant("sum by (pod, resource) (max by (pod, container, resource) "
              "(max_over_time(kube_pod_container_resource_limits{" +
                  q.pods_sel + ",resource=~\"cpu|memory\"}[" + q.W + "])))",
              true, &s.limits));
  TFDIAG_RETURN_IF_ERROR(
      instant("sum by (pod, resource) (max by (pod, container, resource) "
              "(max_over_time(kube_pod_container_resource_requests{" +
                  q.pods_sel + ",resource=~\"cpu|memory\"}[" + q.W + "])))",
              true, &s.requests));
  TFDIAG_RETURN_IF_ERROR(instant(
      "sum by (pod) (max by (pod, container) "
      "(max_over_time(kube_pod_container_status_restarts_total{" +
          q.pods_sel + "}[" + q.W + "]) - min_over_time(kube_pod_container_status_restarts_total{" +
          q.pods_sel + "}[" + q.W + "])))",
      false, &s.restarts));
  // The share of each pod's samples in each phase over the window (a pod that lived for part
  // of the window counts only while it existed).
  {
    StatusOr<std::vector<PromSeries>> r =
        q.client->Query("avg by (pod, phase) (avg_over_time(kube_pod_status_phase{" + q.pods_sel +
                            "}[" + q.W + "]))",
                        o.end_s);
    if (!r.ok()) return r.status();
    s.phase =
        InstantBy(*r, [](const PromSeries& x) { return x.Label("pod") + "/" + x.Label("phase"); });
  }
  return s;
}

Status QueryAgentSeries(const QueryContext& q, JobSeries* s) {
  const PromJobOptions& o = *q.o;
  const std::string by = " by (pod, replica_type, replica_index) ";
  const std::string sel = "{" + q.agent_sel + "}";
  // Does the job have agent series at all? (Discovery by the agents already says so.)
  StatusOr<std::vector<PromSeries>> up = q.client->Query(
      "count" + by + "(max_over_time(tfdiag_task_up" + sel + "[" + q.W + "]))", o.end_s);
  if (!up.ok()) return up.status();
  s->agents = !up->empty();
  if (!s->agents) return OkStatus();
  // Each task's series once per node: one agent scraped by two jobs, or two agents on one node,
  // count once (max); a pod that moved to another node within the window is summed over nodes.
  TFDIAG_RETURN_IF_ERROR(NoteDuplicateSeries(q, true, &s->duplicates));
  auto range = [&](const std::string& promql, ByPod* out) -> Status {
    StatusOr<std::vector<PromSeries>> r =
        q.client->QueryRange(promql, o.start_s, o.end_s, q.step_s);
    if (!r.ok()) return r.status();
    *out = IndexBy(*r, AgentKey);
    return OkStatus();
  };
  auto once = [&](const std::string& inner, const std::string& extra = "") {
    return "sum by (pod, replica_type, replica_index" + extra +
           ") (max by (pod, replica_type, replica_index, node" + extra + ") (" + inner + "))";
  };
  auto rate = [&](const char* metric) {
    return once(std::string("rate(") + metric + sel + "[" + q.R + "])");
  };
  TFDIAG_RETURN_IF_ERROR(range(rate("tfdiag_task_cpu_seconds_total"), &s->a_cpu));
  TFDIAG_RETURN_IF_ERROR(range(once("tfdiag_task_threads" + sel), &s->a_threads));
  TFDIAG_RETURN_IF_ERROR(range(once("tfdiag_task_runnable_threads" + sel), &s->a_runnable));
  TFDIAG_RETURN_IF_ERROR(range(rate("tfdiag_cgroup_periods_total"), &s->a_periods));
  TFDIAG_RETURN_IF_ERROR(range(rate("tfdiag_cgroup_throttled_periods_total"), &s->a_throttled));
  TFDIAG_RETURN_IF_ERROR(range(rate("tfdiag_hdfs_read_bytes_total"), &s->hdfs));
  // Context switches per s by kind (the processes table's invol/s; cAdvisor has none).
  for (const auto& [kind, into] :
       {std::pair{"voluntary", &s->a_voluntary}, std::pair{"involuntary", &s->a_involuntary}}) {
    TFDIAG_RETURN_IF_ERROR(range(once("rate(tfdiag_context_switches_total{kind=\"" +
                                      std::string(kind) + "\"," + q.agent_sel + "}[" + q.R + "])"),
                                 into));
  }
  // Bytes between each task and each peer task over the window (the worker x PS matrix): their
  // increase (direction "sent", "received"), and their last values (direction "sent_total",
  // "received_total"), which count from the agent's tfdiag_task_traffic_since_seconds: a task
  // found within the window has all its bytes since then, where increase() would lose those
  // before Prometheus's first scrape of its new series.
  const std::string peer_sel = "tfdiag_traffic_bytes_total{" + q.agent_sel + ",peer_task=~\"(" +
                               TfRolesAlternation() + "):[0-9]+\"}[" + q.W + "]";
  const std::string peer_by = ", peer, peer_task, direction";
  StatusOr<std::vector<PromSeries>> peer_bytes =
      q.client->Query(once("increase(" + peer_sel + ")", peer_by) + " or label_replace(" +
                          once("last_over_time(" + peer_sel + ")", peer_by) +
                          ", \"direction\", \"${1}_total\", \"direction\", \"(.*)\")",
                      o.end_s);
  if (!peer_bytes.ok()) return peer_bytes.status();
  s->peer_bytes = std::move(*peer_bytes);
  // One query for the window's totals: run-queue waits per bucket (le), their sum (le="sum")
  // and context switches by kind (le="voluntary"|"involuntary").
  StatusOr<std::vector<PromSeries>> totals = q.client->Query(
      once("increase(tfdiag_runqueue_latency_seconds_bucket" + sel + "[" + q.W + "])", ", le") +
          " or label_replace(" +
          once("increase(tfdiag_runqueue_latency_seconds_sum" + sel + "[" + q.W + "])") +
          ", \"le\", \"sum\", \"\", \"\") or label_replace(" +
          once("increase(tfdiag_context_switches_total" + sel + "[" + q.W + "])", ", kind") +
          ", \"le\", \"$1\", \"kind\", \"(.*)\")",
      o.end_s);
  if (!totals.ok()) return totals.status();
  // When the agent's byte counters of the task start (le="since") and when it exited
  // (le="exit"): Unix s, the latest in the window.
  StatusOr<std::vector<PromSeries>> span = q.client->Query(
      "label_replace(max" + by + "(max_over_time(tfdiag_task_traffic_since_seconds" + sel + "[" +
          q.W + "])), \"le\", \"since\", \"\", \"\") or label_replace(max" + by +
          "(max_over_time(tfdiag_task_exit_time_seconds" + sel + "[" + q.W +
          "])), \"le\", \"exit\", \"\", \"\") or label_replace(max" + by +
          "(max_over_time(tfdiag_task_cpuset_cpus" + sel + "[" + q.W +
          "])), \"le\", \"cpuset\", \"\", \"\") or label_replace(max" + by +
          "(max_over_time(tfdiag_task_cpu_limit_cores" + sel + "[" + q.W +
          "])), \"le\", \"cpu_limit\", \"\", \"\")",
      o.end_s);
  if (!span.ok()) return span.status();
  // The CPUs of each node the agents ran on (the floors' last resort: a task with neither a CFS
  // limit nor a cpuset may use its node's).
  StatusOr<std::vector<PromSeries>> node_cpus =
      q.client->Query("max by (node) (max_over_time(tfdiag_node_cpus[" + q.W + "]))", o.end_s);
  if (!node_cpus.ok()) return node_cpus.status();
  for (const PromSeries& n : *node_cpus) {
    if (!n.points.empty() && std::isfinite(n.points[0].second) && !n.Label("node").empty())
      s->node_cpus[n.Label("node")] = n.points[0].second;
  }
  for (const auto* part : {&*totals, &*span}) {
    for (const PromSeries& t : *part) {
      if (!t.points.empty() && std::isfinite(t.points[0].second))
        s->a_totals[AgentKey(t)][t.Label("le")] = t.points[0].second;
    }
  }
  return OkStatus();
}

void MergeJobSeries(JobSeries&& from, JobSeries* into) {
  for (auto [f, t] : {std::pair{&from.cpu, &into->cpu},
                      {&from.periods, &into->periods},
                      {&from.throttled, &into->throttled},
                      {&from.throttled_s, &into->throttled_s},
                      {&from.threads, &into->threads},
                      {&from.rx, &into->rx},
                      {&from.tx, &into->tx},
                      {&from.hdfs, &into->hdfs},
                      {&from.a_cpu, &into->a_cpu},
                      {&from.a_threads, &into->a_threads},
                      {&from.a_runnable, &into->a_runnable},
                      {&from.a_periods, &into->a_periods},
                      {&from.a_throttled, &into->a_throttled},
                      {&from.a_voluntary, &into->a_voluntary},
                      {&from.a_involuntary, &into->a_involuntary}}) {
    t->merge(*f);
  }
  for (auto [f, t] : {std::pair{&from.limits, &into->limits},
                      {&from.requests, &into->requests},
                      {&from.restarts, &into->restarts},
                      {&from.phase, &into->phase}}) {
    t->merge(*f);
  }
  into->peer_bytes.insert(into->peer_bytes.end(), std::make_move_iterator(from.peer_bytes.begin()),
                          std::make_move_iterator(from.peer_bytes.end()));
  into->agents |= from.agents;
  into->duplicates.insert(into->duplicates.end(), from.duplicates.begin(), from.duplicates.end());
  into->a_totals.merge(from.a_totals);
  into->node_cpus.merge(from.node_cpus);
}

void NotePhases(const PodMap& pods, const JobSeries& s, PromJob* job) {
  std::vector<std::string> ps_notes, other;
  for (const auto& [key, p] : pods) {
    if (p.role.empty() || p.name.empty()) continue;
    for (const char* phase : {"Pending", "Failed", "Unknown"}) {
      auto it = s.phase.find(p.name + "/" + phase);
      if (it == s.phase.end() || !(it->second > 0)) continue;
      const std::string task = p.role + ":" + std::to_string(p.index);
      std::string note = fmt::format(
          "pod {} ({}) was {} for {:.0f}% of its time in the window (kube_pod_status_phase): its "
          "figures cover only the rest",
          p.name, task, phase, 100 * it->second);
      if (p.role == "ps") {
        note += "; a PS that is not Running stalls every worker that needs its variables";
        ps_notes.push_back(note);
      } else {
        other.push_back(note);
      }
    }
  }
  for (auto* v : {&ps_notes, &other}) job->notes.insert(job->notes.end(), v->begin(), v->end());
}

Status NoteAgentsDown(const QueryContext& q, const PodMap& pods, PromJob* job) {
  // Agents that were down in the window (`up` of the agents' scrape job, with the agent_node
  // label deploy/prometheus.yml adds): their nodes' agent figures are missing. Only that job:
  // another scrape job whose name holds "tfdiag" is no agent.
  StatusOr<std::vector<PromSeries>> down =
      q.client->Query("min by (instance, agent_node) (min_over_time(up{job=\"" +
                          PromQuote(q.o->agent_scrape_job) + "\"}[" + q.W + "])) == 0",
                      q.o->end_s);
  if (!down.ok()) return down.status();
  std::set<std::string> job_nodes;
  for (const auto& [key, p] : pods) job_nodes.insert(p.node);
  for (const PromSeries& a : *down) {
    const std::string node = a.Label("agent_node");
    if (!node.empty() && !job_nodes.count(node)) continue;
    job->notes.push_back(fmt::format(
        "the tfdiag agent on node {} ({}) was down during the window: bytes per peer and HDFS "
        "input of that node's pods are missing or partial",
        node.empty() ? "?" : node, a.Label("instance")));
  }
  return OkStatus();
}

}  // namespace prom

StatusOr<PromJob> ReadJobFromPrometheus(PromClient* client, const PromJobOptions& o) {
  using namespace prom;  // NOLINT: the steps of this function
  PromJob job;
  if (o.job.empty()) return UsageError("--job: expected the TF job's name");
  if (!(o.end_s > o.start_s)) return UsageError("--start/--end: the window is empty");
  job.start_s = o.start_s;
  job.end_s = o.end_s;
  const double window = o.end_s - o.start_s;
  job.step_s = o.step_s > 0 ? o.step_s : std::max(15.0, std::ceil(window / 240));
  if (o.step_s > 0) {
    TFDIAG_RETURN_IF_ERROR(
        CheckPromStep(o.start_s, o.end_s, o.step_s, fmt::format("{}s", o.step_s)));
  }
  StatusOr<std::string> version = client->BuildVersion();
  if (!version.ok()) return version.status();
  job.server_version = *version;
  QueryContext q;
  q.client = client;
  q.o = &o;
  q.W = Dur(window);
  // rate() over 4 steps when the step is given (Prometheus's advice: >= 4 scrape intervals),
  // else over max(60 s, 2 steps).
  q.R = Dur(o.step_s > 0 ? std::max(4.0, 4 * o.step_s) : std::max(60.0, 2 * job.step_s));
  q.step_s = job.step_s;
  PodMap pods;
  TFDIAG_RETURN_IF_ERROR(DiscoverPods(client, o, q.W, &job, &pods));
  // The pods' names in regexes of at most kMaxPodRegexBytes, one set of queries per batch (a
  // million names in one regex were past libcurl's 8 MB and Prometheus's 10 MB form limit).
  std::vector<std::string> pod_res;
  size_t named_pods = 0;
  bool by_agents = false;
  for (const auto& [key, p] : pods) {
    by_agents |= p.agent;
    if (p.name.empty()) continue;
    ++named_pods;
    const std::string re = PromRegexEscape(p.name);
    if (pod_res.empty() || pod_res.back().size() + 1 + re.size() > kMaxPodRegexBytes) {
      pod_res.emplace_back();
    }
    pod_res.back() += (pod_res.back().empty() ? "" : "|") + re;
  }
  const std::string ns_sel = "namespace=\"" + PromQuote(job.namespace_) + "\"";
  auto pods_sel = [&](const std::string& re) { return ns_sel + ",pod=~\"" + PromQuote(re) + "\""; };
  JobSeries series;
  for (const std::string& re : pod_res) {
    // Pods with names: where they ran and their figures, from kube-state-metrics and cAdvisor.
    q.pods_sel = pods_sel(re);
    TFDIAG_RETURN_IF_ERROR(ReadPlacement(q, &job, &pods));
    StatusOr<JobSeries> part = QueryJobSeries(q);
    if (!part.ok()) return part.status();
    MergeJobSeries(std::move(*part), &series);
  }
  if (pod_res.empty()) {
    job.notes.push_back(
        "no task has a pod name (tasks outside Kubernetes): kube-state-metrics and cAdvisor "
        "were not queried; figures are the tfdiag agents' (/proc, cgroups, eBPF)");
  }
  AssignRoles(o, &job, &pods);
  if (by_agents) {
    q.agent_sel =
        (job.namespace_.empty() ? "" : ns_sel + ",") + "tf_job=\"" + PromQuote(o.job) + "\"";
    TFDIAG_RETURN_IF_ERROR(QueryAgentSeries(q, &series));
  } else {
    for (const std::string& re : pod_res) {
      q.agent_sel = pods_sel(re);
      JobSeries part;
      TFDIAG_RETURN_IF_ERROR(QueryAgentSeries(q, &part));
      MergeJobSeries(std::move(part), &series);
    }
  }
  job.notes.insert(job.notes.end(), series.duplicates.begin(), series.duplicates.end());
  NotePhases(pods, series, &job);
  TFDIAG_RETURN_IF_ERROR(NoteAgentsDown(q, pods, &job));
  // The selector an error names: the pods' one, or, when their names took several batches, not
  // the last batch's as if it were all of them.
  const std::string sel_named = pod_res.size() <= 1
                                    ? q.pods_sel
                                    : fmt::format("{},pod=~<the job's {} pod names, in {} regexes>",
                                                  ns_sel, named_pods, pod_res.size());
  TFDIAG_RETURN_IF_ERROR(BuildJobCapture(o, pods, series, sel_named, &job));
  return job;
}

}  // namespace tfdiag
