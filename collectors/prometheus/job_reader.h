// A whole TF job read from the Prometheus that already scrapes the cluster (`tfdiag analyze
// --prometheus URL --job NAME`): which pods are the job's, where they ran, and their CPU,
// throttling, threads and network over a window, built into the same Capture the rules read
// (one ProcessRow per pod, with its node and pod IP; one ProcessSampleRow per step) plus the
// pods as a K8sDeployment (ps-colocation, cpu-qos).
//
// Sources, with their exact metric and label names:
//  - kubelet's embedded cAdvisor (/metrics/cadvisor): container_cpu_usage_seconds_total,
//    container_cpu_cfs_periods_total, container_cpu_cfs_throttled_periods_total,
//    container_cpu_cfs_throttled_seconds_total,
//    container_threads (container series only: container!="", container!="POD"; the pod-level
//    cgroup and the pause container would double every figure), container_network_*_bytes_total
//    (pod-level, per interface: one interface counted once, loopback excluded).
//    https://github.com/google/cadvisor/blob/master/docs/storage/prometheus.md
//  - kube-state-metrics v2: kube_pod_info (node, pod_ip, host_ip, created_by_kind/name),
//    kube_pod_labels (label_<sanitised name>, only for allow-listed labels),
//    kube_pod_container_resource_requests/limits{resource="cpu"|"memory"} (cores, bytes),
//    kube_pod_container_status_restarts_total, kube_pod_status_phase (a note per pod not Running
//    for part of the window).
//  - the tfdiag agent (attach --serve, deploy/daemonset.yaml), where it runs:
//    tfdiag_traffic_bytes_total{pod, peer, peer_task, direction} (the worker x PS matrix),
//    tfdiag_hdfs_read_bytes_total, tfdiag_runqueue_latency_seconds and
//    tfdiag_context_switches_total (scheduling rows), and tfdiag_task_cpu_seconds_total,
//    _threads, _runnable_threads, tfdiag_cgroup_*periods_total for pods cAdvisor has no series
//    for (and the runnable threads cAdvisor never has); tfdiag_task_cpuset_cpus,
//    tfdiag_task_cpu_limit_cores and tfdiag_node_cpus (the CPUs a task may use where
//    kube-state-metrics has no limit: what hot-ps's floor weighs); and `up` of the agents' scrape
//    job, to name nodes whose agent was down in the window.
//    https://github.com/kubernetes/kube-state-metrics/blob/main/docs/metrics/workload/pod-metrics.md
//
// Pods are found, in this order (the first that finds any wins, and is named):
//   1. kube_pod_info{created_by_name=NAME} (the owner: TFJob, Volcano Job, Job, StatefulSet);
//   2. kube_pod_labels with Kubeflow's labels (label_training_kubeflow_org_job_name, legacy
//      label_tf_job_name);
//   3. pod names <NAME>-<ps|worker|chief|master|evaluator>-<index> (Kubeflow's naming);
//   4. the agents' tfdiag_task_up{tf_job=NAME} (no kube-state-metrics, or tasks outside
//      Kubernetes: those have no pod name and are keyed by replica, "ps:0", and then neither
//      cAdvisor nor kube-state-metrics is queried).
// Roles and indexes come from the replica-type/index labels when exported, else from the names.
// The number of queries is bounded (at most 30; 16 without agent series, 27 with them, 17 from
// agents alone) per batch of pods whose names fit a 256 KiB regex (one batch for any real job):
// every figure is aggregated by pod in PromQL over a regex of the job's pod names, or by task
// over the agents' tf_job label. Replies are bounded in bytes and series, and the run by one
// deadline (PromClientOptions).
// Thread-safety: one call at a time per PromClient.
#pragma once

#include <string>
#include <vector>

#include "collectors/prometheus/prom_client.h"
#include "core/capture.h"
#include "core/k8s_deployment.h"
#include "core/status.h"

namespace tfdiag {

struct PromJobOptions {
  std::string job;                // TFJob (or Volcano Job, ...) name
  std::string namespace_;         // "" = any namespace (an error if the name is in several)
  double start_s = 0, end_s = 0;  // window, Unix seconds
  double step_s = 0;  // resolution; 0 = max(15 s, window / 240) with rates over max(60 s, 2
                      // steps); given: rates over 4 steps
  // The scrape job whose `up` says an agent was down: deploy/prometheus.yml's `tfdiag-agent`
  // (--agent-scrape-job when Prometheus names it otherwise). Matched exactly.
  std::string agent_scrape_job = "tfdiag-agent";
};

// Per pod figures over the window, for the JSON report and tests.
struct PromPodFigures {
  std::string pod, node, pod_ip, task;    // task "ps:0"
  double cpu_cores = -1;                  // mean CPU used, cores (a listed pod has >= 2 CPU points)
  double cpu_limit = 0, cpu_request = 0;  // cores; 0 none known (-1 in the JSON)
  double throttled_pct = -1;  // throttled / all CFS periods in the window; -1 no CFS quota
  double threads = -1;        // mean container_threads; -1 no series
  // Pod network, all interfaces but lo, bytes/s; -1 no series (or one point).
  double rx_bytes_per_s = -1, tx_bytes_per_s = -1;
  int restarts = 0;
  double first_s = 0, last_s = 0;  // first and last point with CPU data
};

struct PromJob {
  Capture capture;
  K8sDeployment k8s;                 // the pods (name, namespace, node, pod IP, role, index)
  std::string discovery;             // the selector that found the pods
  std::string discovery_promql;      // its PromQL (SARIF locates the job's findings on it)
  std::vector<std::string> tried;    // every selector tried, in order
  std::vector<std::string> notes;    // what was inferred or missing
  std::vector<PromPodFigures> pods;  // sorted by task
  std::string namespace_;            // resolved
  double start_s = 0, end_s = 0, step_s = 0;
  std::string server_version;
};

// Errors: the client's (unreachable, auth, not Prometheus, timeout; exit 2), kNotFound naming
// every selector tried and the jobs the agents report (AgentJobsText) when no pod matches, kUsage
// when the job's pods are in several namespaces and none was given.
StatusOr<PromJob> ReadJobFromPrometheus(PromClient* client, const PromJobOptions& o);

// "prometheus" section of `analyze -f json`: server, window, step, discovery, every query sent
// (kind, PromQL, bytes, series, wall time) and the per-pod figures. A JSON object.
std::string PromJobJson(const PromJob& job, const PromClient& client);

// The jobs the tfdiag agents report in [start_s, end_s] (tfdiag_task_up's tf_job values, the
// `ip-<hash>` names of jobs outside Kubernetes included; `namespace_` "" = any) with their task
// counts and PS tasks (node, and address when the agents' eBPF traffic series name it), for an
// error when --job matches nothing: lines "    - NAME (N tasks; PS ps:0 10.0.0.5:2222 on
// node-a, ...)" (at most 20, then "and N more"), each after a "\n", names passed through
// Printable (core/escape.h), or "\n  no tfdiag agent reported a job in the window". Three
// instant queries. Errors: the client's.
StatusOr<std::string> AgentJobsText(PromClient* client, const std::string& namespace_,
                                    double start_s, double end_s);

// The training jobs kube-state-metrics holds in [start_s, end_s]: pods whose owner
// (kube_pod_info's created_by_kind) is a Kubeflow training kind (TFJob, and PyTorchJob, MPIJob,
// XGBoostJob, PaddleJob, MXJob, JAXJob), per owner with its kind, namespace and pod count, for
// an error when --job matches nothing: "\n  training jobs kube-state-metrics holds ...:" then
// lines "\n    - NAME (KIND, namespace NS, N pods)" (at most 20, then "and N more"), escaped;
// "" when there are none (no kube-state-metrics, or none in the window). One instant query.
// Errors: the client's.
StatusOr<std::string> TfJobsText(PromClient* client, double start_s, double end_s);

// Unix seconds as RFC 3339 in UTC ("2026-11-23T18:00:00Z"), as errors print a window.
std::string FormatPromTime(double unix_s);

// Most points a range query may return per series: Prometheus refuses more ("exceeded maximum
// resolution of 11,000 points per timeseries", promql/engine.go).
inline constexpr double kMaxPointsPerSeries = 11000;

// Errors: kUsage when `step_s` over [start_s, end_s] makes more than kMaxPointsPerSeries points
// per series, naming the window (RFC 3339) and the smallest step it allows; `given` is the
// --step text as the user wrote it.
Status CheckPromStep(double start_s, double end_s, double step_s, const std::string& given);

// Parses a time given as RFC 3339 ("2026-11-23T18:00:00Z", offsets allowed) or Unix seconds.
StatusOr<double> ParsePromTime(const std::string& s);
// Parses a Prometheus duration ("30m", "1h30m", "90s", "2d") into seconds.
StatusOr<double> ParsePromDuration(const std::string& s);

}  // namespace tfdiag
