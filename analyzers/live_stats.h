// Figures derived from the live samples of a bundle (tfdiag attach), one row per process:
// thread counts, runnable threads, CPU used, context-switch rates and CFS throttling over the
// window. Rates use the first and last sample of each process. Pure functions.
#pragma once

#include <string>
#include <vector>

#include "core/capture.h"

namespace tfdiag {

struct ProcessStats {
  uint32_t process = 0;  // index into Capture::processes
  std::string task;      // "ps:0"
  JobKind kind = JobKind::kOther;
  int samples = 0;
  double window_s = 0;   // last - first sample, seconds
  double cpus = 0;       // CPUs the process may use: CFS limit, else cpuset size, else host
  double cpu_limit = 0;  // CFS quota / period; 0 none
  int threads_max = 0;
  double threads_mean = 0;
  double runnable_mean = 0;  // threads in state R, averaged over samples; -1 unknown (no /proc)
  double cpu_cores = 0;      // CPU time used per second of window
  double voluntary_per_s = -1, involuntary_per_s = -1;  // context switches per second; -1 unknown
  double involuntary_per_s_per_cpu = -1;
  double throttled_pct = -1;  // throttled periods / periods in the window, percent; -1 unknown
  double throttled_s = -1;    // seconds throttled in the window
  int64_t periods = -1;       // CFS periods in the window
};

std::vector<ProcessStats> ComputeProcessStats(const Capture& c);

// How a report names a process beside its task: "pid 1234" when it was seen in /proc, else
// (a capture built without /proc, e.g. from Prometheus) "pod NAME", "node NAME", or "".
std::string ProcessWho(const Capture& c, const ProcessRow& row);

}  // namespace tfdiag
