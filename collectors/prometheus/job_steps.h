// The steps of ReadJobFromPrometheus (job_reader.h), shared by job_reader.cc (discovery and
// queries) and job_capture.cc (building the Capture). Internal to collectors/prometheus.
// Thread-safety: plain data and functions of their arguments; one PromClient per call.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collectors/prometheus/job_reader.h"
#include "core/tf_roles.h"

namespace tfdiag::prom {

// One pod of the job, as discovery and kube_pod_info/kube_pod_labels give it; or a task the
// tfdiag agents saw (agent = true), which has no pod name when it runs outside Kubernetes.
struct PodInfo {
  std::string name, node, pod_ip, host_ip, owner_kind, owner_name, role, role_source;
  int index = -1;
  bool agent = false;  // seen by the agents (tfdiag_task_up)
  bool ksm = false;    // known to kube-state-metrics (kube_pod_info or kube_pod_labels)
};
// Roles (TfRoleOf) and task indexes (ParseTaskIndex, kMaxTaskIndex): core/tf_roles.h.

// How the series of a pod are keyed: its name, else (a task outside Kubernetes) "ps:0".
std::string Key(const PodInfo& p);
// The same key for an agent series (labels pod, replica_type, replica_index).
std::string AgentKey(const PromSeries& s);
// (namespace, Key) -> PodInfo.
using PodMap = std::map<std::pair<std::string, std::string>, PodInfo>;

// A series' points (t in s, value), sorted by t, one value per t: 16 bytes a point (a
// std::map<double, double> took 48, the peak of a large matrix reply).
using Points = std::vector<std::pair<double, double>>;
// Series of a range query by pod.
using ByPod = std::map<std::string, Points>;
// An instant query's value by pod (or by "pod/resource").
using InstantMap = std::map<std::string, double>;

// Every figure read for the job, each from one query aggregated by pod.
struct JobSeries {
  ByPod cpu;                    // cores (rate of container_cpu_usage_seconds_total)
  ByPod periods;                // CFS periods per s
  ByPod throttled;              // throttled CFS periods per s
  ByPod throttled_s;            // throttled s per s
  ByPod threads;                // container_threads
  ByPod rx, tx;                 // pod network bytes per s, interfaces but lo
  ByPod hdfs;                   // bytes per s received from HDFS DataNodes (agent)
  InstantMap limits, requests;  // "pod/cpu" cores, "pod/memory" bytes
  InstantMap restarts;          // container restarts within the window
  InstantMap phase;             // "pod/Pending" -> share of the pod's samples in that phase (0..1)
  // The tfdiag agents' series (attach --serve), keyed by AgentKey; empty when none ran.
  // Bytes by (pod, peer, peer_task, direction): increases over the window ("sent", "received")
  // and last values ("sent_total", "received_total").
  std::vector<PromSeries> peer_bytes;
  bool agents = false;               // the job has tfdiag_task_up series
  ByPod a_cpu;                       // cores (tfdiag_task_cpu_seconds_total, /proc)
  ByPod a_threads, a_runnable;       // threads, threads in state R (/proc)
  ByPod a_periods, a_throttled;      // CFS periods and throttled periods per s (cgroup)
  ByPod a_voluntary, a_involuntary;  // context switches per s (/proc)
  // Increases over the window: run-queue waits per histogram bucket (le "2.048e-06", ...,
  // "+Inf"), their sum in s (le "sum"), context switches (le "voluntary", "involuntary"); and
  // the latest Unix s the task's byte counters count from (le "since") and it exited (le "exit");
  // the CPUs of its cpuset (le "cpuset") and its CFS limit in CPUs (le "cpu_limit", 0 none).
  std::map<std::string, std::map<std::string, double>> a_totals;
  InstantMap node_cpus;  // the agents' tfdiag_node_cpus by node name
  // Notes on series Prometheus holds twice for one identity (NoteDuplicateSeries).
  std::vector<std::string> duplicates;
};

// The longest pod-name regex of one query (a query holds it up to 3 times: under 1 MiB, far
// below Prometheus's 10 MB form limit); more pods are queried in batches.
constexpr size_t kMaxPodRegexBytes = 256 << 10;

// The window and selectors every query of one analysis shares.
struct QueryContext {
  PromClient* client = nullptr;
  const PromJobOptions* o = nullptr;
  std::string W;      // the window as a PromQL duration, "1800s"
  std::string R;      // the rate() range, "60s"
  double step_s = 0;  // range queries' resolution, s
  std::string
      pods_sel;  // namespace="ns",pod=~"a|b|c" (a batch of the pods); "" when none has a name
  std::string agent_sel;  // the agents' series of the job: pods_sel, or tf_job="NAME"
};

// "1800s": seconds rounded up, as a PromQL duration.
std::string Dur(double s);
// Sum over [first, upto] of rate x dt: a counter's increase counted from its rates, so that a
// restart (a counter reset) neither subtracts nor adds. `rate` is t (s) -> per second.
double Integral(const Points& rate, double upto);

// Step 1: finds the job's pods by the selectors of job_reader.h in order (the first that finds
// any wins); fills job->tried, job->discovery, job->namespace_. Errors: the client's,
// kNotFound naming every selector tried, kUsage for pods in several namespaces.
Status DiscoverPods(PromClient* client, const PromJobOptions& o, const std::string& W, PromJob* job,
                    PodMap* pods);
// Step 2: where each pod ran (kube_pod_info) and its role and index (Kubeflow's labels).
// Errors: the client's.
Status ReadPlacement(const QueryContext& q, PromJob* job, PodMap* pods);
// Roles and indexes from pod names where labels gave none; notes on pods without a role or a
// node, and where roles came from.
void AssignRoles(const PromJobOptions& o, PromJob* job, PodMap* pods);
// Step 3: the per-pod figures from cAdvisor and kube-state-metrics (CPU, CFS, threads,
// network, resources, restarts, phases), 11 queries over q.pods_sel. Errors: the client's.
StatusOr<JobSeries> QueryJobSeries(const QueryContext& q);
// Step 3b: the agents' series (q.agent_sel), when the job has any: CPU, threads, runnable
// threads, CFS periods, bytes per peer task, HDFS input, run-queue latency and context
// switches (totals, and per s by kind), the CPUs each task may use (cpuset, CFS limit, its
// node's); at most 12 queries. Errors: the client's.
Status QueryAgentSeries(const QueryContext& q, JobSeries* s);
// Adds the series of another batch of pods (disjoint keys; a key in both keeps `into`'s).
void MergeJobSeries(JobSeries&& from, JobSeries* into);

// Series Prometheus holds twice for one identity (job_duplicates.cc): cAdvisor containers
// (q.pods_sel) from more than one scrape job, or, `agents`, a task's agent series (q.agent_sel)
// from more than one scrape target on one node. Appends one note per identity (at most 5, then
// a count) to *notes; the queries take such series once. Errors: the server's.
Status NoteDuplicateSeries(const QueryContext& q, bool agents, std::vector<std::string>* notes);
// Step 3c: a note per pod that was not Running for part of the window (kube_pod_status_phase:
// Pending, Failed, Unknown), PS pods first.
void NotePhases(const PodMap& pods, const JobSeries& s, PromJob* job);
// Step 4: a note per node of the job whose tfdiag agent was down in the window (`up` == 0 of
// a scrape job named like tfdiag). Errors: the client's.
Status NoteAgentsDown(const QueryContext& q, const PodMap& pods, PromJob* job);
// Step 5: the Capture (one process per pod with CPU series), the K8sDeployment and the per-pod
// figures; notes on pods without CPU series, restarts and agent coverage. kNotFound when no
// pod has CPU series.
Status BuildJobCapture(const PromJobOptions& o, const PodMap& pods, const JobSeries& s,
                       const std::string& pods_sel, PromJob* job);

}  // namespace tfdiag::prom
