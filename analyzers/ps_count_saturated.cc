#include "analyzers/ps_count_saturated.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace tfdiag {

double PsUtilisation(const ReplayModel& m, const ReplayModel::Ps& p, double step_ns) {
  return PsUtilisation(m, p, step_ns, 0);
}

double PsUtilisation(const ReplayModel& m, const ReplayModel::Ps& p, double step_ns,
                     double added_ns) {
  if (step_ns <= 0) return 0;
  const double threads =
      std::max(0.0, p.pull_ns + p.push_ns + added_ns) / double(std::max(1, p.threads));
  return std::max(threads, p.locked_ns) * double(m.workers.size()) / step_ns;
}

double PsLoadEvenness(const ReplayModel& m) {
  double sum = 0, most = 0;
  for (const ReplayModel::Ps& p : m.ps) {
    const double u = PsUtilisation(m, p, 1);
    sum += u;
    most = std::max(most, u);
  }
  return most > 0 ? sum / most / double(m.ps.size()) : 0;
}

PsCpuBoundLimits PsCpuBoundLimitsOf(const Rule& rule) {
  PsCpuBoundLimits l;
  auto read = [&](const char* name, double scale, double* out) {
    if (const RuleParam* p = rule.FindParam(name)) *out = p->value / scale;
  };
  read("cpu_bound_min_util_pct", 100, &l.min_util);
  read("cpu_bound_max_util_pct", 100, &l.max_util);
  read("cpu_bound_min_busy_pct", 1, &l.min_busy_pct);
  read("cpu_bound_min_evenness_pct", 100, &l.min_evenness);
  read("cpu_bound_max_held_miss_pct", 100, &l.max_held_miss);
  return l;
}

namespace {

// The job's mean step per worker: the time captured x the workers / the steps they took (the
// throughput identity holds on the mean, not the median); 0 where the capture counts no steps.
double MeanStepNs(const AnalysisInput& in, const ReplayModel& m) {
  int64_t steps = 0;
  for (const ReplayModel::Worker& w : m.workers) {
    const TaskStats* t = in.stats.Find(in.capture.TaskLabelOf(w.task));
    if (t != nullptr) steps += t->steps;
  }
  return steps > 0 ? double(in.stats.span_ns) * double(m.workers.size()) / double(steps) : 0;
}

}  // namespace

PsCpuBound ReadPsCpuBound(const AnalysisInput& in, const ReplayModel& m, double held_miss,
                          const PsCpuBoundLimits& lim) {
  PsCpuBound b;
  b.held_miss = held_miss;
  if (m.workers.empty() || m.ps.empty() || m.measured_step_ns <= 0) {
    b.why_not = "the capture has no worker steps to replay";
    return b;
  }
  if (m.sync) {
    b.why_not = kSyncPacesStep;
    return b;
  }
  const double mean_ns = MeanStepNs(in, m);
  if (mean_ns <= 0) {
    b.why_not = "the capture counts no worker steps";
    return b;
  }
  const ReplayModel::Ps* busiest = nullptr;
  for (const ReplayModel::Ps& p : m.ps) {
    const double u = PsUtilisation(m, p, mean_ns);
    if (u > b.util) b.util = u, busiest = &p;
  }
  if (busiest == nullptr) {
    b.why_not = "no PS does any work";
    return b;
  }
  b.evenness = PsLoadEvenness(m);
  b.label = std::string(in.capture.TaskLabelOf(busiest->task));
  b.threads = busiest->threads;
  const TaskStats* t = in.stats.Find(b.label);
  b.busy_pct = t != nullptr ? t->busy_pct : 0;
  if (b.util < lim.min_util || b.util > lim.max_util) {
    b.why_not = fmt::format(
        "the busiest PS, {}, serves {:.2f}x its threads' time per mean step, outside "
        "{:.2f}-{:.2f}x",
        b.label, b.util, lim.min_util, lim.max_util);
    return b;
  }
  if (b.busy_pct < lim.min_busy_pct) {
    b.why_not = fmt::format("the busiest PS, {}, is busy {:.0f}% of the capture (under {:.0f}%)",
                            b.label, b.busy_pct, lim.min_busy_pct);
    return b;
  }
  if (m.ps.size() > 1 && b.evenness < lim.min_evenness) {
    b.why_not = fmt::format(
        "the PS load is uneven: the {} PS's utilisations sum to {:.1f} times the busiest's "
        "({}), under {:.1f}",
        m.ps.size(), b.evenness * double(m.ps.size()), b.label,
        lim.min_evenness * double(m.ps.size()));
    return b;
  }
  if (std::abs(held_miss) > lim.max_held_miss) {
    b.why_not = fmt::format(
        "the replay with the workers' waits held misses the measured step by {:.0f}% (over "
        "{:.0f}%)",
        std::abs(100 * held_miss), 100 * lim.max_held_miss);
    return b;
  }
  b.bound = true;
  return b;
}

}  // namespace tfdiag
