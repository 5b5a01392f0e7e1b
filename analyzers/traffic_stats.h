// Figures from the eBPF rows of a bundle (tfdiag attach with probes): the worker x PS traffic
// matrix, bytes per PS, HDFS input per worker with its rate over time, and scheduling per
// process (switches, run-queue latency). Rows are cumulative since attach, so totals are the
// last row of each socket and rates divide by the recording window. Pure functions.
#pragma once

#include <string>
#include <vector>

#include "core/capture.h"

namespace tfdiag {

// Bytes between one worker-like task and one PS over the window (seen from the worker's side
// when it was recorded, else from the PS's side).
struct TrafficCell {
  uint32_t worker = 0, ps = 0;     // task indices
  int64_t to_ps = 0, from_ps = 0;  // bytes
  // bytes/s over the time the worker was measured running (first sample to the last whose CPU
  // time grew; the window when unknown)
  double to_ps_per_s = 0, from_ps_per_s = 0;
};

struct PsBytes {
  uint32_t task = 0;
  int64_t received = 0, sent = 0;  // bytes the PS received from / sent to workers
  double share = 0;                // (received + sent) / all PS bytes
};

struct HdfsInput {
  uint32_t process = 0;  // index into Capture::processes
  uint32_t task = 0;
  int64_t bytes = 0;                // received from HDFS DataNode ports
  double bytes_per_s = 0;           // over the time the process was measured running
  std::vector<double> rate_series;  // bytes/s per sample interval
};

struct TrafficStats {
  bool has_traffic = false;
  double window_s = 0;
  std::vector<TrafficCell> matrix;  // sorted by (worker, ps)
  std::vector<PsBytes> ps;          // sorted by task
  int64_t ps_total = 0;             // bytes, both directions, all PS
  std::vector<HdfsInput> hdfs;      // per recorded process that read from HDFS
};

TrafficStats ComputeTrafficStats(const Capture& c);

// Scheduling of one process over the window from SchedRow (last minus first row).
struct SchedStats {
  uint32_t process = 0;
  double window_s = 0;
  int64_t voluntary = 0, involuntary = 0;  // switches in the window
  double involuntary_share = 0;            // involuntary / all switches
  int64_t runq_waits = 0;
  double runq_mean_us = 0;  // mean run-queue wait, us
  // CPUs the process asked for: (on-CPU ns + run-queue wait ns) / window ns, i.e. its threads
  // running or runnable, on average. Unlike CPU used, a starved process (waiting on the run
  // queue of a busy node) still shows its demand; a process blocked on I/O shows little.
  double cpu_demand = 0;
  double runq_p99_us = 0;  // 99th percentile (upper bound of its log2 bucket), us; 0 unknown
  // Share of the process's runnable time (on a CPU + waiting on a run queue) spent waiting:
  // run-queue wait ns / (on-CPU ns + run-queue wait ns), 0..1; -1 when neither grew.
  double runq_wait_share = -1;
  double oncpu_cores = 0;  // on-CPU ns / window ns: CPUs actually used
};

// One entry per process that has SchedRow rows (at least two).
std::vector<SchedStats> ComputeSchedStats(const Capture& c);

}  // namespace tfdiag
