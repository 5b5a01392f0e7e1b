// Report sections on XProf's step-time breakdown (analyzers/step_breakdown.h) and on the
// captures of a run: per task, where its steps' time went (input, host to device, kernel launch,
// host compute, device compute, ...); per capture (a profiling session, a ProfilerHook dump) its
// span, and per task its steps, median step, busy share of the capture's own time and breakdown;
// and tfdiag's breakdown against XProf's own tool files (ImportStats::xprof_checks). Text here; the
// JSON writers are templates over a RapidJSON writer, for report/json_report.cc (docs/json.md:
// tasks[].step_breakdown, captures[]).
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "analyzers/step_breakdown.h"
#include "report/json_writer.h"

namespace tfdiag {

// The text report's lines under the Tasks table: one per task with a breakdown, and one per
// capture when there are several; "" when no task has a breakdown.
std::string BreakdownText(const Capture& c, const TaskStatsTable& stats);

// {"steps", "step_ns", "input_ns", "host_to_device_ns", ..., "other_ns"}: totals over the steps.
template <typename W>
void WriteBreakdownJson(json::Json<W>& j, const BreakdownTotals& b) {
  j.w_->StartObject();
  j.Int("steps", b.steps);
  j.Int("step_ns", b.step_ns);
  for (int k = 0; k < kStepCategories; ++k) {
    j.Int(StepCategoryKey(static_cast<StepCategory>(k)), b.ns[k]);
  }
  j.w_->EndObject();
}

// Key "captures": [{index, start_ns, end_ns, span_ns, tasks: [{task, steps, step_median_ns,
// busy_ns, busy_pct, step_breakdown|null}], step_breakdown|null (over its tasks' steps),
// xprof: [{file, tool_file, steps, xprof_steps, max_diff_pct, pct{}, xprof_pct{},
// xprof_input_classification}]}].
template <typename W>
void WriteCapturesJson(const Capture& c, json::Json<W>& j) {
  j.Key("captures");
  j.w_->StartArray();
  const std::vector<CaptureRange> ranges =
      c.ops.empty() ? std::vector<CaptureRange>{} : c.CaptureRanges();
  for (size_t i = 0; i < ranges.size(); ++i) {
    const CaptureRange& r = ranges[i];
    j.w_->StartObject();
    j.Int("index", static_cast<int64_t>(i + 1));
    j.Int("start_ns", r.start);
    j.Int("end_ns", r.end);
    j.Int("span_ns", r.end - r.start);
    BreakdownTotals all;
    j.Key("tasks");
    j.w_->StartArray();
    for (uint32_t t = 0; t < c.tasks.size(); ++t) {
      const CaptureTaskFigures f = FiguresInCapture(c, r, t);
      if (!f.any) continue;
      j.w_->StartObject();
      j.Str("task", c.TaskLabelOf(t));
      j.Int("steps", f.steps);
      j.Int("step_median_ns", f.step_median_ns);
      j.Int("busy_ns", f.busy_ns);
      j.Num("busy_pct", f.busy_pct);
      const BreakdownTotals b = BreakdownOfTask(c, t, r.start, r.end);
      j.Key("step_breakdown");
      if (b.empty()) {
        j.w_->Null();
      } else {
        WriteBreakdownJson(j, b);
        all.steps += b.steps;
        all.step_ns += b.step_ns;
        for (int k = 0; k < kStepCategories; ++k) all.ns[k] += b.ns[k];
      }
      j.w_->EndObject();
    }
    j.w_->EndArray();
    j.Key("step_breakdown");
    if (all.empty()) {
      j.w_->Null();
    } else {
      WriteBreakdownJson(j, all);
    }
    j.w_->EndObject();
  }
  j.w_->EndArray();
  j.Key("xprof_checks");
  j.w_->StartArray();
  for (const XprofCheck& x : c.stats.xprof_checks) {
    j.w_->StartObject();
    j.Str("file", x.file);
    j.Str("tool_file", x.tool_file);
    j.Int("steps", x.steps);
    j.Int("xprof_steps", x.xprof_steps);
    j.Num("max_diff_pct", x.max_diff_pct);
    j.Str("xprof_input_classification", x.xprof_input_classification);
    for (const char* which : {"pct", "xprof_pct"}) {
      j.Key(which);
      j.w_->StartObject();
      const double* v = std::string_view(which) == "pct" ? x.pct : x.xprof_pct;
      for (int k = 0; k < kStepCategories; ++k) {
        std::string key = StepCategoryKey(static_cast<StepCategory>(k));
        key.replace(key.size() - 3, 3, "_pct");
        j.Num(key, v[k]);
      }
      j.w_->EndObject();
    }
    j.w_->EndObject();
  }
  j.w_->EndArray();
}

}  // namespace tfdiag
