#include "analyzers/step_breakdown.h"

#include <algorithm>
#include <string>

#include "analyzers/capture_queries.h"
#include "core/duration.h"

namespace tfdiag {

namespace {

bool HasGpu(const Capture& c, uint32_t task) {
  for (const DeviceRow& d : c.devices) {
    if (d.task == task && c.Str(d.type) == "GPU") return true;
  }
  return false;
}

// The finding of a task whose `pct` of step time is in the rule's category (`what`), graded
// moderate_pct / high_pct; a warm-up first step that alone lifts it over moderate_pct is named
// and lowers the severity one level. Appends nothing below moderate_pct.
void Judge(const Rule& rule, const TaskStats& t, const BreakdownTotals& b, double pct,
           double steady_pct, const std::string& what, const std::string& xprof_words,
           std::vector<Finding>* out) {
  if (pct < rule.Param("moderate_pct")) return;
  const bool high = pct >= rule.Param("high_pct");
  const bool warmup = b.steps > 1 && steady_pct < rule.Param("moderate_pct");
  Finding f = MakeFinding(rule, "task", t.label);
  f.task = t.label;
  const int down = (!high ? 1 : 0) + (warmup ? 1 : 0);
  for (int i = 0; i < down && f.severity > Severity::kInfo; ++i) {
    f.severity = static_cast<Severity>(static_cast<int>(f.severity) - 1);
  }
  f.summary = fmt::format(
      "{} spends {:.1f}% of its step time in {} ({} per step over {} step(s), "
      "XProf's step-time breakdown): {} {}",
      t.label, pct, what, FormatDuration(double(b.step_ns) * pct / 100.0 / b.steps), b.steps,
      high ? "highly" : "moderately", xprof_words);
  if (warmup) {
    f.summary += fmt::format("; the first step, a warm-up, carries most of it: {:.1f}% without it",
                             steady_pct);
  }
  f.evidence = BreakdownEvidence(b);
  f.evidence.insert(f.evidence.begin(), {what + " share of step time", pct, "%"});
  if (b.steps > 1) f.evidence.push_back({what + " share without the first step", steady_pct, "%"});
  f.range_start = t.first_ns;
  f.range_end = t.last_ns;
  out->push_back(std::move(f));
}

}  // namespace

double BreakdownTotals::Pct(StepCategory c, bool without_first) const {
  const int k = static_cast<int>(c);
  if (!without_first) return step_ns > 0 ? 100.0 * double(ns[k]) / double(step_ns) : 0;
  const TimeNs rest = step_ns - first_step_ns;
  return steps > 1 && rest > 0 ? 100.0 * double(ns[k] - first_ns[k]) / double(rest) : 0;
}

BreakdownTotals BreakdownOfTask(const Capture& c, uint32_t task, TimeNs from, TimeNs to) {
  BreakdownTotals b;
  const auto& rows = c.step_breakdowns;
  auto it = std::lower_bound(rows.begin(), rows.end(), task,
                             [](const StepBreakdownRow& r, uint32_t t) { return r.task < t; });
  // Steps that overlap [from, to]: a step marker may start before its capture's first op.
  for (; it != rows.end() && it->task == task && it->start <= to; ++it) {
    if (it->start + it->step_ns < from) continue;
    if (b.steps == 0) {
      b.first_step_ns = it->step_ns;
      std::copy(std::begin(it->ns), std::end(it->ns), std::begin(b.first_ns));
    }
    ++b.steps;
    b.step_ns += it->step_ns;
    for (int k = 0; k < kStepCategories; ++k) b.ns[k] += it->ns[k];
  }
  return b;
}

double InputPct(const BreakdownTotals& b, bool without_first) {
  return b.Pct(StepCategory::kInput, without_first) +
         b.Pct(StepCategory::kHostToDevice, without_first);
}

double HostPct(const BreakdownTotals& b, bool without_first) {
  return b.Pct(StepCategory::kHostCompute, without_first) +
         b.Pct(StepCategory::kCompile, without_first) + b.Pct(StepCategory::kOther, without_first);
}

std::vector<Figure> BreakdownEvidence(const BreakdownTotals& b) {
  std::vector<Figure> out;
  out.push_back({"steps with a breakdown", double(b.steps), "count"});
  out.push_back({"step time per step", b.steps > 0 ? double(b.step_ns) / b.steps : 0, "ns"});
  for (int k = 0; k < kStepCategories; ++k) {
    const StepCategory cat = static_cast<StepCategory>(k);
    if (b.ns[k] == 0) continue;
    out.push_back({std::string(StepCategoryWords(cat)) + " share of step time", b.Pct(cat), "%"});
  }
  return out;
}

std::string BreakdownShareText(const BreakdownTotals& b) {
  std::vector<std::pair<double, int>> shares;
  for (int k = 0; k < kStepCategories; ++k) {
    if (b.ns[k] > 0) shares.push_back({b.Pct(static_cast<StepCategory>(k)), k});
  }
  std::stable_sort(shares.begin(), shares.end(),
                   [](const auto& x, const auto& y) { return x.first > y.first; });
  std::string out;
  for (const auto& [pct, k] : shares) {
    out += fmt::format("{}{} {:.1f}%", out.empty() ? "" : ", ",
                       StepCategoryWords(static_cast<StepCategory>(k)), pct);
  }
  return out.empty() ? "no time" : out;
}

namespace {

// The findings of a breakdown rule over the GPU training tasks with a breakdown: `share` gives
// a task's (share over all steps, share without the first step).
template <typename Share>
std::vector<Finding> JudgeGpuTasks(const AnalysisInput& in, const Rule& rule,
                                   const std::string& what, const std::string& words, Share share) {
  std::vector<Finding> out;
  const Capture& c = in.capture;
  if (c.step_breakdowns.empty()) return out;
  for (const TaskStats& t : in.stats.tasks) {
    if (!IsTrainingTask(t.kind) || !HasGpu(c, t.task)) continue;
    const BreakdownTotals b = BreakdownOfTask(c, t.task);
    if (b.empty() || b.step_ns <= 0) continue;
    const auto [all, steady] = share(b);
    Judge(rule, t, b, all, steady, what, words, &out);
  }
  return out;
}

}  // namespace

std::vector<Finding> RunHostBound(const AnalysisInput& in, const Rule& rule) {
  return JudgeGpuTasks(
      in, rule, "host time while its GPU idles", "host-bound",
      [](const BreakdownTotals& b) { return std::make_pair(HostPct(b), HostPct(b, true)); });
}

std::vector<Finding> RunLaunchBound(const AnalysisInput& in, const Rule& rule) {
  return JudgeGpuTasks(in, rule, "kernel launch", "launch-bound", [](const BreakdownTotals& b) {
    return std::make_pair(b.Pct(StepCategory::kKernelLaunch),
                          b.Pct(StepCategory::kKernelLaunch, true));
  });
}

}  // namespace tfdiag
