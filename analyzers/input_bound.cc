#include "analyzers/input_bound.h"

#include "analyzers/capture_queries.h"
#include "analyzers/op_names.h"

namespace tfdiag {

std::vector<Finding> RunInputBound(const AnalysisInput& in, const Rule& rule) {
  std::vector<Finding> out;
  const Capture& c = in.capture;
  for (const TaskStats& t : in.stats.tasks) {
    if (!IsTrainingTask(t.kind) || t.steps == 0) continue;
    const TimeNs step_total = t.step_mean_ns * t.steps;
    TimeNs input = 0, longest = 0;
    int64_t count = 0;
    std::string op_name;
    ForEachOpOfTask(c, t.task, [&](const OpRow& op) {
      if (!IsInputOp(c.Str(op.type), c.Str(op.name))) return;
      ++count;
      input += op.dur();
      if (op.dur() > longest) longest = op.dur(), op_name = c.Str(op.name);
    });
    if (count == 0 || step_total <= 0) continue;
    const double pct = 100.0 * input / step_total;
    if (pct < rule.Param("moderate_pct")) continue;
    const bool high = pct >= rule.Param("high_pct");
    Finding f = MakeFinding(rule, "task", t.label);
    f.task = t.label;
    if (!high && f.severity > Severity::kInfo) {
      f.severity = static_cast<Severity>(static_cast<int>(f.severity) - 1);
    }
    f.summary = fmt::format(
        "{} waits for input {:.0f}% of its step time ({}: {} input op(s), {:.2f} ms per step); "
        "TensorBoard calls this {} input-bound",
        t.label, pct, op_name, count, input / 1e6 / t.steps, high ? "highly" : "moderately");
    f.evidence = {{"input wait share of step time", pct, "%"},
                  {"input wait time", input / 1e3, "us"},
                  {"input wait per step", input / 1e3 / t.steps, "us"},
                  {"steps", double(t.steps), "count"},
                  {"longest input wait", longest / 1e3, "us"}};
    f.ops = {op_name};
    f.range_start = t.first_ns;
    f.range_end = t.last_ns;
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace tfdiag
