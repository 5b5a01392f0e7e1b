// The agent mode of `tfdiag attach --serve ADDR`: a prometheus-cpp Collectable that exposes the
// latest LiveFigures (the HTTP server around it: report/metrics_server.h).
//
// Labels on every series (exporter manners, as node_exporter and kube-state-metrics: never
// `job` or `instance`, which Prometheus owns and would rename to exported_job):
//   tf_job (the TFJob's name; a process's TFDIAG_JOB or --tf_job, or --tf-job; without a name,
//   "ip-" and a hash of the job's PS addresses, discovery.h UnnamedJobName), replica_type ("ps"),
//   replica_index ("0"), pod, namespace, node.
// Metrics (counters cumulative, as collected):
//   tfdiag_task_up                          gauge    1 while the process lives, 0 once gone
//   tfdiag_task_cpu_seconds_total           counter  CPU time of all threads, s (/proc)
//   tfdiag_task_threads                     gauge    threads
//   tfdiag_task_runnable_threads            gauge    threads in state R
//   tfdiag_task_steps_total                 counter  steps the task counted itself, only for
//       tasks that keep a *.tfdiag-steps file open (collectors/attach/step_counter.h)
//   tfdiag_cgroup_periods_total             counter  CFS periods of the task's cgroup
//   tfdiag_cgroup_throttled_periods_total   counter  CFS periods throttled
//   tfdiag_context_switches_total{kind}     counter  kind voluntary|involuntary (/proc)
//   tfdiag_traffic_bytes_total{direction,peer,peer_task}  counter  bytes sent|received (eBPF);
//       peers that are TF tasks of the cluster spec keep their spec ip:port; HDFS DataNodes are
//       folded into peer="hdfs", every other peer into peer="other" (bounded series)
//   tfdiag_traffic_other_sockets_total      counter  sockets folded into peer="other" (eBPF)
//   tfdiag_traffic_untracked_sockets_total{node}  counter  sockets not counted: the probe's
//       kernel map (65,536 sockets) was full (eBPF)
//   tfdiag_hdfs_read_bytes_total            counter  bytes received from HDFS DataNodes (eBPF)
//   tfdiag_agent_exited_tasks_dropped_total{node}  counter  exited tasks dropped before their
//       5 minutes because more than 256 had exited (process churn)
//   tfdiag_agent_environ_reads_total{node}  counter  /proc/PID/environ reads: each process's is
//       read once (at its first scan; TF tasks once more for TFDIAG_JOB), not at every rescan
//   tfdiag_agent_environ_dropped_total{node}  counter  processes whose TF_CONFIG was left for a
//       later rescan: that rescan's 32 MiB budget was spent (collectors/attach/recorder_tasks.cc),
//       each counted once while it waits
//   tfdiag_agent_tasks_dropped_total{node}  counter  TF tasks not tracked: 1,024 live ones were
//   tfdiag_agent_spec_addresses_dropped_total{node}  counter  cluster-spec addresses not
//       learned past the sampler's 65,536 (bpf_sampler.h kMaxSpecAddresses)
//   tfdiag_agent_series_dropped_total{node}  counter  series left off pages past kMaxSeries
//   tfdiag_agent_connections_refused_total{node}  counter  HTTP connections closed by the caps
//       (report/metrics_server.h)
//   tfdiag_task_cpuset_cpus                gauge    CPUs of the task's cpuset (when known)
//   tfdiag_task_cpu_limit_cores            gauge    CFS quota / period, CPUs; 0 no quota (when
//       its cgroup was read): with tfdiag_node_cpus what hot-ps's floor needs on every path
//   tfdiag_node_cpus{node}                 gauge    CPUs of the node (/proc/stat)
//   tfdiag_runqueue_latency_seconds         histogram  wakeup -> on CPU, log2 buckets (eBPF)
//   tfdiag_agent_identity_conflicts{node}  gauge  live tasks sharing one label set with another
//       live task: all keep their series, each with an extra label conflict="1", "2", ... in
//       pid order (none keeps the plain labels); the first sight is logged (a pod claiming
//       another's pod, namespace and task)
// Gone tasks are shown with tfdiag_task_up 0 for kGoneKeepNs (5 minutes of LiveFigures::ts, at
// any --interval), then dropped. Label values are valid UTF-8 of at most 256 bytes
// (report/label_value.h: bad bytes become U+FFFD). A label
// set appears once: of several processes with the same labels, the live one (several live ones:
// all, each marked conflict), else the first of the update (the recorder drops an exited
// task as soon as another takes its labels), never one carried over from an earlier update. Bound:
// per task at most 2 x (its cluster spec's tasks + 2) traffic series plus a fixed dozen, whatever
// the connections; the agent's own tables are bounded too (collectors/attach/ traffic_table.h), so
// a scrape costs O(tasks x peers), not O(connections ever made). Thread-safety: Update() and
// Collect() may run concurrently (a mutex guards the figures).
#pragma once

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "core/live_figures.h"
#include "core/status.h"

namespace tfdiag {

class TfdiagCollectable : public prometheus::Collectable {
 public:
  // How long a task that went away stays on the page, by the figures' clock (LiveFigures::ts),
  // at any sampling interval: 5 minutes, the staleness Prometheus gives a series that stopped.
  static constexpr TimeNs kGoneKeepNs = TimeNs{300} * 1000000000;
  // Gone tasks shown at most (the oldest carried-over ones are not kept past it).
  static constexpr size_t kMaxGoneTasks = 256;
  // Series on one page at most (tfdiag_agent_series_dropped_total counts the rest): with the
  // agent's 1,024 live and 256 exited tasks a page could pass it (idle tasks have about 20 series,
  // busy ones about 60).
  static constexpr size_t kMaxSeries = 50000;
  // Returns one line per new identity conflict (processes newly sharing a label set), for the
  // log; label values in them are Printable.
  std::vector<std::string> Update(const LiveFigures& figures);
  std::vector<prometheus::MetricFamily> Collect() const override;
  size_t tasks() const;

 private:
  mutable std::mutex mu_;
  LiveFigures figures_;
  std::map<int32_t, TimeNs> gone_since_;  // pid -> the figures' ts when first seen gone
  std::set<int32_t> conflicted_;          // pids marked conflict at the last update
  size_t conflicts_ = 0;                  // live tasks in a conflict at the last update
  mutable int64_t series_dropped_ = 0;    // series left off pages (guarded by mu_)
};

}  // namespace tfdiag
