// The latest cumulative figures of each recorded TF task, handed by the attach recorder to the
// agent's /metrics exporter after every sample (plain data; no collector or exporter types).
// Counters are cumulative since attach (eBPF) or since the process started (/proc); -1 unknown.
// Thread-safety: plain values; the exporter guards its copy with a mutex.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/capture.h"

namespace tfdiag {

// One peer of a task: a TF task of the cluster spec (by its spec address), an HDFS DataNode
// (remote ip:port), or "other": every peer that is neither, folded into one (bpf_sampler.h).
struct LivePeerFigures {
  std::string peer;                            // "ip:port", or "other"
  std::string peer_task;                       // "ps:0", "" unknown
  bool hdfs = false;                           // an HDFS DataNode port
  int64_t bytes_sent = 0, bytes_received = 0;  // bytes, summed over the sockets to this peer
};

struct LiveTaskFigures {
  std::string job, task, pod, node;  // "worker", "worker:0", pod name ("" unknown), host name
  std::string tf_job;      // the TFJob's name: the pod name less "-<type>-<index>"; "" unknown
  std::string namespace_;  // the pod's namespace (its service account mount); "" unknown
  int32_t index = -1;      // replica index
  int32_t pid = 0;
  bool alive = true;
  int conflict = 0;        // exporter: N > 0 for a later claimant of a label set (conflict="N")
  double cpu_seconds = 0;  // user + system CPU of all threads, s
  int32_t threads = 0, runnable = 0;
  int64_t nr_periods = -1, nr_throttled = -1;  // cgroup CFS periods / throttled periods
  int64_t voluntary = -1, involuntary = -1;    // context switches (/proc, all threads)
  int64_t steps = -1;  // steps the task counted itself (its step counter file); -1 none
  // The CPUs the task may use, for the floors (hot-ps, input-bound) on every path: its CFS
  // limit in CPUs (quota / period, the tightest of its cgroup and their parents; 0 no quota;
  // -1 its cgroup could not be read) and the CPUs of its cpuset (0 unknown).
  double cpu_limit = -1;
  int32_t cpuset_cpus = 0;
  // Unix time (s) from which the task's eBPF byte counters count: the agent found the task then
  // and they were 0 (a rate over a window that starts before it is over the time since); 0 none.
  double traffic_since_s = 0;
  // Unix time (s) the task's process exited (its pidfd, to 20 ms; else the sample that found it
  // gone); 0 while it lives.
  double exit_time_s = 0;
  bool has_traffic = false;
  std::vector<LivePeerFigures> peers;  // at most TrafficTableLimits::max_peers + 1 ("other")
  int64_t hdfs_read_bytes = 0;         // bytes received from HDFS DataNode ports
  int64_t other_sockets = 0;           // sockets folded into peer "other" so far
  bool has_sched = false;
  int64_t runq_wait_ns = 0, runq_waits = 0;
  int64_t runq_hist[kRunqHistSlots] = {};  // log2 ns buckets
};

struct LiveFigures {
  TimeNs ts = 0;          // CLOCK_REALTIME ns of the sample
  std::string node;       // the node's name (NODE_NAME or the host name)
  int32_t host_cpus = 0;  // CPUs of the node (/proc/stat's cpuN lines); 0 unknown
  // Sockets the eBPF traffic probe could not count (its kernel map was full), since attach;
  // -1 when the probe does not run.
  int64_t untracked_sockets = -1;
  // Agent: exited tasks dropped from the figures before their 5 minutes because more than 256
  // had exited (collectors/attach/recorder_tasks.cc), since start; -1 when not an agent.
  int64_t exited_tasks_dropped = -1;
  // Agent: /proc/PID/environ reads since start (each process is read once, its environment
  // cached per process: collectors/discovery/discovery.h EnvironCache); -1 when not an agent.
  int64_t environ_reads = -1;
  // Agent: connections the HTTP server closed at accept (its per-client or total cap), since
  // start (report/metrics_server.h); -1 when not serving.
  int64_t connections_refused = -1;
  // Agent: processes whose TF_CONFIG was left unparsed at a rescan because the rescan's budget of
  // environment bytes was spent, and new tasks not tracked because kAgentMaxTasks were; since
  // start; -1 when not an agent.
  int64_t environ_dropped = -1;
  int64_t tasks_dropped = -1;
  // Agent: cluster-spec addresses not learned past the eBPF sampler's node-wide bound
  // (collectors/attach/bpf_sampler.h kMaxSpecAddresses), since start; -1 when not an agent or
  // without the traffic probe.
  int64_t spec_addresses_dropped = -1;
  std::vector<LiveTaskFigures> tasks;
};

}  // namespace tfdiag
