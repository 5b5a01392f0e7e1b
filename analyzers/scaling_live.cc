#include "analyzers/scaling_live.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>

namespace tfdiag {

namespace {

bool IsWorkerLike(JobKind k) {
  return k == JobKind::kWorker || k == JobKind::kChief || k == JobKind::kMaster;
}

}  // namespace

bool MeasureLiveThroughput(const Capture& c, const AnalysisResult& r, ScalingRun* run) {
  // Step counters: rows sorted by (process, ts).
  std::vector<TimeNs> step_ns;
  int64_t steps = 0;
  double per_s = 0;
  std::string source;
  int counted = 0;
  for (size_t i = 0; i < c.step_counts.size();) {
    size_t j = i;
    while (j < c.step_counts.size() && c.step_counts[j].process == c.step_counts[i].process) ++j;
    const StepCountRow& first = c.step_counts[i];
    const StepCountRow& last = c.step_counts[j - 1];
    const ProcessRow& p = c.processes[first.process];
    i = j;
    if (!IsWorkerLike(c.tasks[p.task].kind) || last.ts <= first.ts) continue;
    const int64_t n = last.steps - first.steps;
    const TimeNs dt = last.ts - first.ts;
    ++counted;
    if (source.empty()) source = std::string(c.Str(p.step_source));
    if (n <= 0) continue;
    steps += n;
    per_s += 1e9 * static_cast<double>(n) / static_cast<double>(dt);
    step_ns.push_back(dt / n);
  }
  if (counted > 0 && steps > 0) {
    std::sort(step_ns.begin(), step_ns.end());
    run->steps = steps;
    run->throughput_steps_per_s = per_s;
    run->step_median_ns = step_ns[step_ns.size() / 2];
    run->throughput_source = fmt::format(
        "the workers' own step counters ({} of {} workers; e.g. {}): steps over the recording "
        "window, mean step time per worker",
        counted, run->workers, source.empty() ? "source not named" : source);
    return true;
  }
  // Proxy: bytes each worker sent to the PS tasks per second.
  double bytes_per_s = 0;
  std::map<uint32_t, bool> workers;
  for (const TrafficCell& cell : r.traffic.matrix) {
    if (!IsWorkerLike(c.tasks[cell.worker].kind)) continue;
    bytes_per_s += cell.to_ps_per_s;
    workers[cell.worker] = true;
  }
  if (bytes_per_s <= 0) return false;
  run->steps = 0;
  run->step_median_ns = 0;
  run->throughput_steps_per_s = bytes_per_s;
  run->throughput_proxy = true;
  run->throughput_unit = "worker->PS bytes/s";
  run->throughput_source = fmt::format(
      "throughput from the workers' bytes sent to the PS per second, eBPF traffic of {} workers "
      "(proxy: bytes per step assumed constant across runs; no step counter was recorded)",
      workers.size());
  return true;
}

void MeasureNodeCpu(const Capture& c, const AnalysisResult& r, ScalingRun* run) {
  // CPU used per node (cluster bundles name the node; attach's do not: one node).
  std::map<std::string, std::pair<double, int>> nodes;  // node -> (CPU used, node CPUs)
  for (const ProcessStats& ps : r.processes) {
    if (ps.process >= c.processes.size()) continue;
    const ProcessRow& p = c.processes[ps.process];
    auto& n = nodes[std::string(c.Str(p.node))];
    n.first += ps.cpu_cores;
    n.second = std::max(n.second, p.host_cpus);
  }
  for (const auto& [node, used] : nodes) {
    if (used.second <= 0) continue;
    run->cpu_used_pct = std::max(run->cpu_used_pct, 100 * used.first / used.second);
  }
  // Run-queue wait against on-CPU time, rows sorted by (process, ts): last minus first row.
  int64_t oncpu = 0, wait = 0;
  for (size_t i = 0; i < c.sched.size();) {
    size_t j = i;
    while (j < c.sched.size() && c.sched[j].process == c.sched[i].process) ++j;
    oncpu += c.sched[j - 1].oncpu_ns - c.sched[i].oncpu_ns;
    wait += c.sched[j - 1].runq_wait_ns - c.sched[i].runq_wait_ns;
    i = j;
  }
  if (oncpu + wait > 0) run->runq_wait_pct = 100.0 * wait / static_cast<double>(oncpu + wait);
  run->steal_pct = c.meta.steal_pct;
}

}  // namespace tfdiag
