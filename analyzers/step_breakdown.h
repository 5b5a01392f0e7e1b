// XProf's step-time breakdown summed over a task's marked steps (Capture::step_breakdowns, made
// by the TF2 readers, collectors/xplane/step_breakdown.h), and the rules judged on it:
// host-bound (the GPU idles while the host computes or nothing is traced: XProf's "Host compute"
// and "All others") and launch-bound (XProf's "Kernel launch"); input-bound reads it too
// (input_bound.h). Thresholds: rules/default.rules.json.
// Thread-safety: pure functions of the Capture.
#pragma once

#include <string>
#include <vector>

#include "analyzers/analysis_input.h"

namespace tfdiag {

// A task's breakdown over its steps in a time range, ns per StepCategory.
struct BreakdownTotals {
  int steps = 0;
  TimeNs step_ns = 0;
  TimeNs ns[kStepCategories] = {};
  // The first step's own figures (a warm-up step's weight in the totals).
  TimeNs first_step_ns = 0;
  TimeNs first_ns[kStepCategories] = {};
  bool empty() const { return steps == 0; }
  TimeNs at(StepCategory c) const { return ns[static_cast<int>(c)]; }
  // Share of the summed step time, percent (0 without steps); `without_first`: over the steps
  // after the first (0 when there is only one).
  double Pct(StepCategory c, bool without_first = false) const;
};

// The breakdown of `task`'s steps that overlap [from, to] (ns; the whole capture by default).
BreakdownTotals BreakdownOfTask(const Capture& c, uint32_t task, TimeNs from = INT64_MIN,
                                TimeNs to = INT64_MAX);

// Input wait as XProf counts it (input + host to device) over the steps, percent.
double InputPct(const BreakdownTotals& b, bool without_first = false);
// Host time: host compute, compile and XProf's "All others" (other), percent.
double HostPct(const BreakdownTotals& b, bool without_first = false);

std::vector<Finding> RunHostBound(const AnalysisInput& in, const Rule& rule);
std::vector<Finding> RunLaunchBound(const AnalysisInput& in, const Rule& rule);

// "input 62.3%, device compute 35.3%, kernel launch 2.4%": the categories with time, largest
// share first ("no time" without any), for the report and the viewer.
std::string BreakdownShareText(const BreakdownTotals& b);

// The evidence figures of a breakdown (share of step time per category, steps, ms per step).
std::vector<Figure> BreakdownEvidence(const BreakdownTotals& b);

}  // namespace tfdiag
