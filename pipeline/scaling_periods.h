// `tfdiag scaling --prometheus URL --job NAME --start T --end T`: one job whose worker count
// changed over time, cut into runs. The periods in which the job ran with a steady number of
// worker pods are found from the pods' Running phase over the window; each period becomes a
// ScalingRun (analyzers/scaling.h) that CompareRuns judges like runs given as files.
//
// Sources, with their exact metric and label names:
//  - Pods and when they ran, the first that finds any (named in `pods_source`):
//    1. kube-state-metrics v2 kube_pod_status_phase{phase="Running"} == 1 of the pods whose
//       kube_pod_info has created_by_name=NAME (the owner: TFJob, Volcano Job, Job);
//    2. the same for pods named <NAME>-<ps|worker|chief|master|evaluator>-<index> (Kubeflow's
//    naming);
//    3. the tfdiag agents' tfdiag_task_up{tf_job=NAME} == 1 (report/prometheus_exporter.h).
//    Roles and indexes come from the pod names (<NAME>-<type>-<index>) or the agents'
//    replica_type/replica_index labels.
//    https://github.com/kubernetes/kube-state-metrics/blob/main/docs/metrics/workload/pod-metrics.md
//  - Throughput, the first metric with series for the period's workers (named in each run's
//    throughput_source): `step_metric` when given (the job's own step counter, a counter with a
//    `pod` label); the agents' tfdiag_task_steps_total; else, as a proxy (bytes per step assumed
//    constant across periods), the agents' tfdiag_traffic_bytes_total{direction="sent",
//    peer_task=~"ps:.*"}, else cAdvisor's container_network_transmit_bytes_total
//    (interface!="lo") of the worker pods.
//  - PS busy share: cAdvisor container_cpu_usage_seconds_total (container series only) over
//    kube_pod_container_resource_limits{resource="cpu"} (else requests), per PS pod; else the
//    agents' tfdiag_task_cpu_seconds_total over the same limit; without a limit or request the
//    busy share is unknown and the PS's CPU in cores is given (ScalingPs::cpu_cores).
//    https://github.com/google/cadvisor/blob/master/docs/storage/prometheus.md
//  - What the agents measured per task and period (ScalingRun::worker_cpu, ps_cpu,
//    runq_wait_pct, throttled_pct; the scaling-limit rule judges CPU starvation on them):
//    tfdiag_task_cpu_seconds_total, tfdiag_task_runnable_threads (mean),
//    tfdiag_runqueue_latency_seconds (_sum per s: the wait; _bucket: p99 per role by
//    histogram_quantile), tfdiag_context_switches_total (all, and kind="involuntary"),
//    tfdiag_cgroup_throttled_periods_total / tfdiag_cgroup_periods_total
//    (report/prometheus_exporter.h). The agents' series are selected by tf_job when the agents
//    found the tasks (tasks outside Kubernetes have no pod name), else by the pods' names, and
//    keyed by task (replica_type:replica_index).
// A period is the longest stretch of grid points (every step_s) with the same number of Running
// worker pods; the points next to a change are dropped (pods starting or stopping), and periods
// shorter than min_points points are left out (named in notes). Rates are taken over the period
// by instant queries at its end (rate(...[<period length>s])).
// Thread-safety: one call at a time per PromClient.
#pragma once

#include <string>
#include <vector>

#include "analyzers/scaling.h"
#include "collectors/prometheus/prom_client.h"
#include "core/status.h"

namespace tfdiag {

struct PromScalingOptions {
  std::string job;                // TFJob (or Volcano Job, ...) name
  std::string namespace_;         // "" = any namespace
  double start_s = 0, end_s = 0;  // window, Unix seconds
  double step_s = 0;              // grid; 0 = max(15 s, window / 240)
  int min_points = 4;             // shortest period kept, in grid points (after trimming)
  std::string step_metric;        // the job's own step counter ("" = the agents', then a proxy)
};

// One period with a steady worker count.
struct PromScalingPeriod {
  double start_s = 0, end_s = 0;  // Unix seconds, grid points (inclusive)
  int workers = 0;                // Running worker-like pods (the steady count)
  int ps = 0;  // PS tasks that ran in the period: as many as the run's ps_busy lists
};

struct PromScalingResult {
  std::vector<PromScalingPeriod> periods;  // in time order
  std::vector<ScalingRun> runs;            // one per period, same order
  std::string pods_source;                 // the selector that found the pods
  std::vector<std::string> notes;          // periods left out, metrics missing, ...
  double step_s = 0;
};

// Errors: the client's (unreachable, auth, not Prometheus, timeout; exit 2), kNotFound naming
// every selector tried when no pod of the job ran in the window, kInvalidInput when fewer than
// two periods with a steady worker count were found (says which counts were seen, and when).
StatusOr<PromScalingResult> ReadScalingPeriods(PromClient* client, const PromScalingOptions& o);

}  // namespace tfdiag
