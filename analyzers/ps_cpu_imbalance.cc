#include "analyzers/ps_cpu_imbalance.h"

#include <algorithm>

namespace tfdiag {

std::vector<Finding> RunPsCpuImbalance(const AnalysisInput& in, const Rule& rule) {
  std::vector<Finding> out;
  std::vector<const ProcessStats*> ps;
  for (const ProcessStats& p : in.processes) {
    if (p.kind == JobKind::kPs && p.samples >= 2) ps.push_back(&p);
  }
  if (ps.size() < 2) return out;
  std::sort(ps.begin(), ps.end(), [](const ProcessStats* a, const ProcessStats* b) {
    return a->cpu_cores > b->cpu_cores;
  });
  const ProcessStats& hot = *ps[0];
  const ProcessStats& next = *ps[1];
  if (hot.cpu_cores < rule.Param("min_cpu_cores")) return out;
  const double ratio = next.cpu_cores > 0 ? hot.cpu_cores / next.cpu_cores : 1e9;
  if (ratio < rule.Param("min_ratio_to_next")) return out;
  double total = 0;
  for (const ProcessStats* p : ps) total += p->cpu_cores;
  Finding f = MakeFinding(rule, "task", hot.task);
  f.task = hot.task;
  // Severity follows how close the hot PS is to the CPUs it may use (CFS limit, else cpuset,
  // else the node): an imbalance between PS that all idle slows nothing down.
  const double used_pct = hot.cpus > 0 ? 100 * hot.cpu_cores / hot.cpus : -1;
  if (used_pct >= 0 && used_pct < rule.Param("high_min_used_pct")) {
    f.severity = used_pct >= rule.Param("medium_min_used_pct") ? Severity::kMedium : Severity::kLow;
  }
  f.summary = fmt::format(
      "{} uses {:.2f} CPUs{}, {:.1f}x the next busiest PS {} ({:.2f} CPUs): {:.0f}% of all PS CPU",
      hot.task, hot.cpu_cores,
      used_pct >= 0 ? fmt::format(" ({:.0f}% of the {:.3g} it may use)", used_pct, hot.cpus) : "",
      std::min(ratio, 999.0), next.task, next.cpu_cores,
      total > 0 ? 100 * hot.cpu_cores / total : 0.0);
  f.evidence = {{"CPU used by " + hot.task, hot.cpu_cores, "CPUs"},
                {"CPU used by " + next.task, next.cpu_cores, "CPUs"},
                {"ratio", std::min(ratio, 1e6), "ratio"},
                {"share of all PS CPU", total > 0 ? 100 * hot.cpu_cores / total : 0, "%"},
                {"CPUs " + hot.task + " may use (CFS limit, else cpuset, else node)",
                 hot.cpus > 0 ? hot.cpus : -1, "CPUs"},
                {"CPU used against the CPUs it may use", used_pct, "%"}};
  for (const ProcessStats* p : ps) f.ops.push_back(p->task);
  const ProcessRow& row = in.capture.processes[hot.process];
  f.range_start = row.first_ns;
  f.range_end = row.last_ns;
  out.push_back(std::move(f));
  return out;
}

}  // namespace tfdiag
