#include "analyzers/straggler_worker.h"

#include <algorithm>

#include "analyzers/capture_queries.h"
#include "core/duration.h"

namespace tfdiag {

std::vector<Finding> RunStragglerWorker(const AnalysisInput& in, const Rule& rule) {
  std::vector<Finding> out;
  std::vector<const TaskStats*> workers;
  for (const TaskStats& t : in.stats.tasks) {
    if (IsTrainingTask(t.kind) && t.kind != JobKind::kLocal && t.steps >= rule.Param("min_steps")) {
      workers.push_back(&t);
    }
  }
  if (workers.size() < 2) return out;
  for (const TaskStats* w : workers) {
    std::vector<TimeNs> others;
    for (const TaskStats* o : workers) {
      if (o != w) others.push_back(o->step_median_ns);
    }
    std::sort(others.begin(), others.end());
    const TimeNs median = others[others.size() / 2];
    if (median <= 0) continue;
    const double ratio = static_cast<double>(w->step_median_ns) / median;
    if (ratio < rule.Param("min_ratio")) continue;
    Finding f = MakeFinding(rule, "task", w->label);
    f.task = w->label;
    f.summary = fmt::format(
        "{}'s median step takes {}, {:.1f}x the other workers' median ({}) over {} "
        "steps",
        w->label, FormatDuration(double(w->step_median_ns)), ratio, FormatDuration(double(median)),
        w->steps);
    f.evidence = {{"median step of " + w->label, w->step_median_ns / 1e3, "us"},
                  {"median step of the other workers", median / 1e3, "us"},
                  {"ratio", ratio, "ratio"},
                  {"steps", double(w->steps), "count"},
                  {"busy time", w->busy_ns / 1e3, "us"}};
    if (!w->by_type.empty()) f.ops = {w->by_type[0].type};
    f.range_start = w->first_ns;
    f.range_end = w->last_ns;
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace tfdiag
