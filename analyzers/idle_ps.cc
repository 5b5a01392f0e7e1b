#include "analyzers/idle_ps.h"

#include <algorithm>

namespace tfdiag {

std::vector<Finding> RunIdlePs(const AnalysisInput& in, const Rule& rule) {
  std::vector<Finding> out;
  const TaskStatsTable& st = in.stats;
  if (st.num_ps < rule.Param("min_ps") ||
      st.ps_busy_total_ns < rule.Param("min_total_ps_busy_us") * 1000) {
    return out;
  }
  const TaskStats* hottest = nullptr;
  for (const TaskStats& t : st.tasks) {
    if (t.kind == JobKind::kPs && (hottest == nullptr || t.busy_ns > hottest->busy_ns)) hottest = &t;
  }
  const double limit = rule.Param("max_fraction_of_hottest");
  for (const TaskStats& t : st.tasks) {
    if (t.kind != JobKind::kPs || &t == hottest) continue;
    const double frac = static_cast<double>(t.busy_ns) / static_cast<double>(hottest->busy_ns);
    if (frac >= limit) continue;
    Finding f = MakeFinding(rule, "task", t.label);
    f.task = t.label;
    f.summary = t.ops == 0 ? fmt::format("{} ran no op in the capture", t.label)
                           : fmt::format("{} is busy {:.1f}% as long as the busiest PS {} ({:.2f} "
                                         "ms vs {:.2f} ms) and hosts {} variable(s)",
                                         t.label, 100 * frac, hottest->label, t.busy_ns / 1e6,
                                         hottest->busy_ns / 1e6, t.variables.size());
    f.evidence = {{"busy time of " + t.label, t.busy_ns / 1e3, "us"},
                  {"busy time of the busiest PS " + hottest->label, hottest->busy_ns / 1e3, "us"},
                  {"fraction of the busiest PS", 100 * frac, "%"},
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

}  // namespace tfdiag
