#include "analyzers/ps_count_saturated.h"

#include <fmt/format.h>

#include <algorithm>

namespace tfdiag {

PsCpuBound ReadPsCpuBound(const AnalysisInput& in, const ReplayModel& m) {
  PsCpuBound b;
  if (m.workers.empty() || m.ps.empty() || m.measured_step_ns <= 0) {
    b.why_not = "the capture has no worker steps to replay";
    return b;
  }
  if (m.sync) {
    b.why_not = "SyncReplicasOptimizer: the barrier, not the PS queue alone, paces the step";
    return b;
  }
  const ReplayModel::Ps* busiest = nullptr;
  for (const ReplayModel::Ps& p : m.ps) {
    const double u = (p.pull_ns + p.push_ns) * double(m.workers.size()) /
                     double(std::max(1, p.threads)) / m.measured_step_ns;
    if (u > b.util) b.util = u, busiest = &p;
  }
  if (busiest == nullptr) {
    b.why_not = "no PS does any work";
    return b;
  }
  b.label = std::string(in.capture.TaskLabelOf(busiest->task));
  const TaskStats* t = in.stats.Find(b.label);
  b.busy_pct = t != nullptr ? t->busy_pct : 0;
  if (b.util < kMinCpuBoundUtil || b.util > kMaxCpuBoundUtil) {
    b.why_not = fmt::format(
        "the busiest PS, {}, serves {:.0f}% of its threads' time per step, outside {:.0f}-{:.0f}%",
        b.label, 100 * b.util, 100 * kMinCpuBoundUtil, 100 * kMaxCpuBoundUtil);
    return b;
  }
  if (b.busy_pct < kMinCpuBoundBusyPct) {
    b.why_not = fmt::format("the busiest PS, {}, is busy {:.0f}% of the capture (under {:.0f}%)",
                            b.label, b.busy_pct, kMinCpuBoundBusyPct);
    return b;
  }
  b.bound = true;
  return b;
}

}  // namespace tfdiag
