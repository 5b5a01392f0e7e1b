#include "analyzers/hot_ps.h"

#include <algorithm>

namespace tfdiag {

std::vector<Finding> RunHotPs(const AnalysisInput& in, const Rule& rule) {
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
  const double fair = 1.0 / static_cast<double>(ps.size());
  // Only the busiest PS can stand out alone.
  std::sort(ps.begin(), ps.end(),
            [](const TaskStats* a, const TaskStats* b) { return a->busy_ns > b->busy_ns; });
  {
    const TaskStats* hot = ps[0];
    const TimeNs next = ps[1]->busy_ns;
    const double ratio =
        next > 0 ? static_cast<double>(hot->busy_ns) / static_cast<double>(next) : 1e9;
    if (hot->ps_share < rule.Param("min_share_over_fair") * fair ||
        ratio < rule.Param("min_ratio_to_next")) {
      return out;
    }
    Finding f = MakeFinding(rule, "task", hot->label);
    f.task = hot->label;
    // The variables behind the load, until they cover `variables_share` of the PS's op time.
    double covered = 0;
    std::string names;
    for (const VariableLoad& v : hot->variables) {
      if (covered >= rule.Param("variables_share") || v.share < rule.Param("min_variable_share")) {
        break;
      }
      covered += v.share;
      f.ops.push_back(v.name);
      f.evidence.push_back({"op time share of " + v.name, 100.0 * v.share, "%"});
      if (v.bytes >= 0) f.evidence.push_back({"size of " + v.name, double(v.bytes), "bytes"});
      names += (names.empty() ? "" : ", ") + v.name + fmt::format(" ({:.0f}%)", 100 * v.share);
    }
    f.summary = fmt::format(
        "{} does {:.0f}% of all PS busy time ({} PS, fair share {:.0f}%), {:.1f}x the next busiest "
        "PS {}{}",
        hot->label, 100 * hot->ps_share, ps.size(), 100 * fair, std::min(ratio, 999.0),
        ps[1]->label, names.empty() ? "" : "; hot variables: " + names);
    f.evidence.insert(f.evidence.begin(),
                      {{"busy time of " + hot->label, hot->busy_ns / 1e3, "us"},
                       {"share of all PS busy time", 100 * hot->ps_share, "%"},
                       {"fair share (1/N)", 100 * fair, "%"},
                       {"busy time / next busiest PS", std::min(ratio, 1e6), "ratio"},
                       {"busy time of the next busiest PS " + ps[1]->label, next / 1e3, "us"},
                       {"cross-task transfers served", double(hot->edges_out), "count"}});
    if (hot->bytes_out >= 0)
      f.evidence.push_back({"bytes served", double(hot->bytes_out), "bytes"});
    if (!f.ops.empty()) {
      f.fix = fmt::format("For this job: partition {} into {} shards (num_ps = {}).\n", f.ops[0],
                          ps.size(), ps.size()) +
              f.fix;
    }
    f.range_start = hot->first_ns;
    f.range_end = hot->last_ns;
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace tfdiag
