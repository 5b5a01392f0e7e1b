#include "analyzers/live_stats.h"

namespace tfdiag {

std::vector<ProcessStats> ComputeProcessStats(const Capture& c) {
  std::vector<ProcessStats> out;
  size_t i = 0;
  for (uint32_t p = 0; p < c.processes.size(); ++p) {
    const ProcessRow& row = c.processes[p];
    ProcessStats s;
    s.process = p;
    s.task = std::string(c.TaskLabelOf(row.task));
    s.kind = c.tasks[row.task].kind;
    s.cpu_limit = row.cpu_limit;
    s.cpus =
        row.cpu_limit > 0 ? row.cpu_limit : (row.cpuset_cpus > 0 ? row.cpuset_cpus : row.host_cpus);
    while (i < c.process_samples.size() && c.process_samples[i].process < p) ++i;
    const size_t first = i;
    double threads = 0, runnable = 0;
    while (i < c.process_samples.size() && c.process_samples[i].process == p) {
      const ProcessSampleRow& x = c.process_samples[i];
      threads += x.threads;
      runnable += x.runnable;
      s.threads_max = std::max(s.threads_max, static_cast<int>(x.threads));
      ++i;
    }
    s.samples = static_cast<int>(i - first);
    if (s.samples > 0) {
      s.threads_mean = threads / s.samples;
      s.runnable_mean = runnable / s.samples;
    }
    if (s.samples >= 2) {
      const ProcessSampleRow& a = c.process_samples[first];
      const ProcessSampleRow& b = c.process_samples[i - 1];
      s.window_s = (b.ts - a.ts) / 1e9;
      if (s.window_s > 0) {
        s.cpu_cores = (b.cpu_ns - a.cpu_ns) / 1e9 / s.window_s;
        if (a.voluntary >= 0 && b.voluntary >= 0) {
          s.voluntary_per_s = (b.voluntary - a.voluntary) / s.window_s;
        }
        if (a.involuntary >= 0 && b.involuntary >= 0) {
          s.involuntary_per_s = (b.involuntary - a.involuntary) / s.window_s;
          if (s.cpus > 0) s.involuntary_per_s_per_cpu = s.involuntary_per_s / s.cpus;
        }
      }
      if (a.nr_periods >= 0 && b.nr_periods >= 0 && a.nr_throttled >= 0 && b.nr_throttled >= 0) {
        s.periods = b.nr_periods - a.nr_periods;
        // No CFS period elapsed (no quota enforced): throttling is unknown, not 0%.
        s.throttled_pct = s.periods > 0 ? 100.0 * (b.nr_throttled - a.nr_throttled) / s.periods : -1;
      }
      if (a.throttled_ns >= 0 && b.throttled_ns >= 0)
        s.throttled_s = (b.throttled_ns - a.throttled_ns) / 1e9;
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace tfdiag
