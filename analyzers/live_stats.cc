#include "analyzers/live_stats.h"

#include <fmt/format.h>

namespace tfdiag {

std::string ProcessWho(const Capture& c, const ProcessRow& row) {
  if (row.pid > 0) return fmt::format("pid {}", row.pid);
  if (!c.Str(row.pod).empty()) return fmt::format("pod {}", c.Str(row.pod));
  if (!c.Str(row.node).empty()) return fmt::format("node {}", c.Str(row.node));
  return "";
}

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
    bool runnable_known = true;
    while (i < c.process_samples.size() && c.process_samples[i].process == p) {
      const ProcessSampleRow& x = c.process_samples[i];
      threads += x.threads;
      runnable += x.runnable;
      runnable_known &= x.runnable >= 0;
      s.threads_max = std::max(s.threads_max, static_cast<int>(x.threads));
      ++i;
    }
    s.samples = static_cast<int>(i - first);
    if (s.samples > 0) {
      s.threads_mean = threads / s.samples;
      s.runnable_mean = runnable_known ? runnable / s.samples : -1;
    }
    if (s.samples >= 2) {
      const ProcessSampleRow& a = c.process_samples[first];
      const ProcessSampleRow& b = c.process_samples[i - 1];
      s.window_s = (b.ts - a.ts) / 1e9;
      // Counters only grow; a sample that reads less than the one before (the process exited
      // and its last read came back short, or the pid was reused) is a reset, as Prometheus's
      // increase() treats one: the drop adds nothing and counting resumes from the new value.
      auto increase = [&](int64_t ProcessSampleRow::*field, int64_t* out) {
        int64_t sum = 0;
        bool known = false;  // -1 marks a counter the sample could not read: skip those pairs
        for (size_t k = first + 1; k < i; ++k) {
          const int64_t prev = c.process_samples[k - 1].*field, cur = c.process_samples[k].*field;
          if (prev < 0 || cur < 0) continue;
          known = true;
          if (cur >= prev) sum += cur - prev;
        }
        *out = sum;
        return known;
      };
      int64_t cpu = 0, vol = 0, invol = 0, periods = 0, throttled = 0, throttled_ns = 0;
      if (s.window_s > 0) {
        if (increase(&ProcessSampleRow::cpu_ns, &cpu)) s.cpu_cores = cpu / 1e9 / s.window_s;
        if (increase(&ProcessSampleRow::voluntary, &vol)) s.voluntary_per_s = vol / s.window_s;
        if (increase(&ProcessSampleRow::involuntary, &invol)) {
          s.involuntary_per_s = invol / s.window_s;
          if (s.cpus > 0) s.involuntary_per_s_per_cpu = s.involuntary_per_s / s.cpus;
        }
      }
      if (increase(&ProcessSampleRow::nr_periods, &periods) &&
          increase(&ProcessSampleRow::nr_throttled, &throttled)) {
        s.periods = periods;
        // No CFS period elapsed (no quota enforced): throttling is unknown, not 0%.
        s.throttled_pct = periods > 0 ? 100.0 * throttled / periods : -1;
      }
      if (increase(&ProcessSampleRow::throttled_ns, &throttled_ns))
        s.throttled_s = throttled_ns / 1e9;
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace tfdiag
