// Recording the TF tasks of this node for `tfdiag attach`: discovery once, then every interval
// a sample of each task's threads (/proc/PID/task) and CPU cgroup (quota, cpuset, throttling),
// into a Capture that WriteBundle() saves. A task that exits mid-window ends its series and is
// marked exited; it is not an error. A task that starts under the labels of an exited one (a
// container restart, a job resubmitted under its name) replaces it at once: one label set, one
// series. With eBPF probes (bpf_sampler.h) each sample also drains
// per-socket traffic and per-process scheduling counters into TrafficRow/SchedRow rows.
// Thread-safety: Record() runs on the calling thread; `stop` may be set from a signal handler.
#pragma once

#include <atomic>
#include <functional>
#include <string>

#include "collectors/bpf/bpf_util.h"
#include "collectors/discovery/discovery.h"
#include "core/capture.h"
#include "core/live_figures.h"
#include "core/status.h"

namespace tfdiag {

struct RecordProgress {
  double elapsed_s = 0, duration_s = 0;
  int tasks = 0, alive = 0, threads = 0;
  double cpu_cores = 0;  // CPU used by all tasks over the last interval
};

struct RecordOptions {
  DiscoveryOptions discovery;
  double duration_s = 30;                   // window length
  double interval_s = 1;                    // sampling period
  const std::atomic<bool>* stop = nullptr;  // set to end early (Ctrl-C); the capture stays whole
  std::function<void(const RecordProgress&)> on_sample;  // after each sample
  // eBPF probes (collectors/bpf): sched and traffic. Off, or unavailable (no BTF, no rights):
  // /proc only, with a warning in the bundle's meta saying what is missing.
  bool bpf = true;
  BpfAttach bpf_attach = BpfAttach::kAuto;      // probe tp_btf then raw_tp, or force one
  std::vector<int> hdfs_ports = {9866, 50010};  // remote ports counted as HDFS DataNodes
  bool keep_rows = true;  // false: only on_figures (an agent without -o keeps no history)
  std::function<void(const LiveFigures&)> on_figures;  // after each sample (agent /metrics)
  // Each task the recording starts and stops following, as a line for the log: "recording job
  // 'J' task ps:0 (pid 123, 10.0.0.5:2222)" and "stopped recording job 'J' task ps:0 (pid 123,
  // ...): it exited". The values come from the workload (TF_CONFIG, pod names): print them
  // escaped (PrintNote). Called on the recording thread.
  std::function<void(const std::string&)> on_task_log;
  // Agent mode (> 0): no TF task is not an error; every rescan_s seconds the node is scanned
  // again and new tasks join; gone tasks leave the figures 5 minutes after they exit.
  double rescan_s = 0;
  // Agent mode: live tasks tracked at most; new ones past it are counted (LiveFigures::
  // tasks_dropped, once per process) and tracked at a rescan once others have exited. A node
  // runs at most 110 pods by default (kubelet --max-pods); 1,024 leaves room for several TF
  // processes per pod, and is what the sched probe's map holds (TFDIAG_SCHED_MAX_TGIDS).
  size_t max_tasks = 1024;
  std::string node_name;  // the node's name for the figures (NODE_NAME); "" = the host name
  // The tf_job label of every task (--tf-job): a process's own TFDIAG_JOB or --tf_job flag
  // overrides it; without any, a Kubeflow pod or address name gives the TFJob, else the job is
  // named by its PS addresses (UnnamedJobName: "ip-3f2a9c1e"). Must be IsJobName or "".
  std::string tf_job;
};

// `stop` ends a scan of the node between two processes too (a DaemonSet pod stops within a
// sampling round of SIGTERM, not after a scan of every process). Errors: kNotFound when no TF
// task matches (the message says how many processes were looked at and what could not be read,
// e.g. environ without root); kInvalidInput for bad options; kUnavailable when stopped before
// the first scan ended (a recording).
StatusOr<Capture> Record(const RecordOptions& options);

}  // namespace tfdiag
