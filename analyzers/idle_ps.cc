#include "analyzers/idle_ps.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "analyzers/replay_fixes.h"
#include "core/duration.h"

namespace tfdiag {

std::vector<Finding> RunIdlePs(const AnalysisInput& in, const Rule& rule) {
  std::vector<Finding> out;
  const TaskStatsTable& st = in.stats;
  if (st.num_ps < rule.Param("min_ps") ||
      st.ps_busy_total_ns < rule.Param("min_total_ps_busy_us") * 1000) {
    return out;
  }
  std::vector<const TaskStats*> ps;
  for (const TaskStats& t : st.tasks) {
    if (t.kind == JobKind::kPs) ps.push_back(&t);
  }
  std::sort(ps.begin(), ps.end(),
            [](const TaskStats* a, const TaskStats* b) { return a->busy_ns > b->busy_ns; });
  // The reference: the busiest PS, or the next one when the busiest stands out alone (hot-ps).
  size_t ref = 0;
  if (ps[1]->busy_ns * rule.Param("outlier_ratio") <= ps[0]->busy_ns) ref = 1;
  const TaskStats* hottest = ps[ref];
  if (hottest->busy_ns <= 0) return out;
  const double limit = rule.Param("max_fraction_of_hottest");
  for (size_t i = ref + 1; i < ps.size(); ++i) {
    const TaskStats& t = *ps[i];
    const double frac = static_cast<double>(t.busy_ns) / static_cast<double>(hottest->busy_ns);
    if (frac >= limit) continue;
    Finding f = MakeFinding(rule, "task", t.label);
    f.task = t.label;
    f.summary = t.ops == 0
                    ? fmt::format("{} ran no op in the capture", t.label)
                    : fmt::format(
                          "{} is busy {:.1f}% as long as {} ({} vs {}) and hosts "
                          "{} variable(s)",
                          t.label, 100 * frac, hottest->label, FormatDuration(double(t.busy_ns)),
                          FormatDuration(double(hottest->busy_ns)), t.variables.size());
    f.evidence = {{"busy time of " + t.label, t.busy_ns / 1e3, "us"},
                  {"busy time of the reference PS " + hottest->label, hottest->busy_ns / 1e3, "us"},
                  {"fraction of the reference PS", 100 * frac, "%"},
                  {"share of all PS busy time", 100 * t.ps_share, "%"},
                  {"variables hosted", double(t.variables.size()), "count"}};
    for (const VariableLoad& v : t.variables) {
      if (f.ops.size() >= 5) break;
      f.ops.push_back(v.name);
    }
    f.range_start = in.capture.start;
    f.range_end = in.capture.end;
    out.push_back(std::move(f));
  }
  return out;
}

FixPlan IdlePsFix(const AnalysisInput& in, const ReplayModel& m, const Finding& f,
                  const Rule& rule) {
  if (m.workers.empty() || in.graph == nullptr) return {};
  FixPlan plan;
  double work = 0;
  for (const ReplayModel::Ps& p : m.ps) work += p.pull_ns + p.push_ns;
  for (const std::string& label : FindingSubjects(f)) {
    const uint32_t t = in.capture.FindTask(label);
    if (t != kNoIndex) plan.fix.drop_ps.push_back(t);
  }
  if (plan.fix.drop_ps.empty() || plan.fix.drop_ps.size() >= size_t(in.stats.num_ps)) {
    plan.why = "the finding names no PS of the capture that could be removed";
    plan.fix = Fix{};
    return plan;
  }
  // The fix text: lower the PS count; the variables partitioned over the PS left (as
  // ps-worker-ratio's text says), so all PS work spreads evenly over them.
  plan.fix.ps_count = in.stats.num_ps - int(plan.fix.drop_ps.size());
  plan.why = FewerPsNotModelled(m, plan.fix.ps_count);
  if (plan.why.empty()) plan.why = PartOpsOutweighWork(m, plan.fix.ps_count);
  if (!plan.why.empty()) {
    plan.fix = Fix{};
    return plan;
  }
  // The fix text lowers the count and says nothing of the placement: with a partitioner that
  // follows the PS count (fixed_size_partitioner(num_ps)) every variable is cut anew over the PS
  // left, the model above; with the placement kept, the idle PS's work goes to the PS left, each
  // keeping its own (a hot PS stays hot). The capture does not say which the job does: where the
  // two readings' replays are more than max_placement_spread_pct (25%) apart, no prediction is made
  // (gen2 report seed 505, one PS busy 95%: re-partitioned -47%, its twin, the count lowered alone,
  // +0%; indep report5 13020: -47% re-partitioned where the twin re-partitions too but the PS left
  // are slower).
  {
    Fix kept = plan.fix;
    kept.ps_count = 0;
    const int steps = ReplaySteps(m);
    const double cut = ReplayMedianStep(m, plan.fix, steps);
    const double as_placed = ReplayMedianStep(m, kept, steps);
    const double lo = std::min(cut, as_placed);
    if (lo > 0 && std::abs(cut - as_placed) / lo > rule.Param("max_placement_spread_pct") / 100) {
      plan.why = fmt::format(
          "what removing the idle PS buys depends on the placement after it, which the capture "
          "does not show: with the variables partitioned over the {} PS left "
          "(fixed_size_partitioner(num_ps)) the replay gives {:.0f}% of today's step, with "
          "each PS keeping its variables (the idle PS's work spread over the rest) {:.0f}%",
          plan.fix.ps_count, 100 * cut / ReplayMedianStep(m, Fix{}, steps),
          100 * as_placed / ReplayMedianStep(m, Fix{}, steps));
      plan.fix = Fix{};
      return plan;
    }
  }
  plan.estimated = FewerPsCaveat(m, plan.fix.ps_count);
  plan.what = fmt::format(
      "{} idle PS removed ({} PS left), the variables partitioned over the PS left "
      "(fixed_size_partitioner(num_ps)): all {} of PS work per worker step spread evenly, each "
      "part op at the PS's fixed cost per op",
      plan.fix.drop_ps.size(), plan.fix.ps_count, FormatDurationShort(work));
  return plan;
}

}  // namespace tfdiag
