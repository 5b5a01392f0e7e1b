#include "analyzers/input_bound.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "analyzers/capture_queries.h"
#include "analyzers/input_pipeline.h"
#include "analyzers/op_names.h"
#include "analyzers/step_breakdown.h"
#include "analyzers/traffic_stats.h"
#include "core/duration.h"

namespace tfdiag {

namespace {

// The tf.data producer ops (MapDataset, ...) task `t` ran beside its steps: a prefetched
// pipeline already overlaps the step (op_names.h IsInputProducerOpType).
int64_t ProducerOps(const Capture& c, const TaskStats& t) {
  int64_t n = 0;
  ForEachOpOfTask(c, t, [&](const OpRow& op) {
    if (IsInputProducerOpType(c.Str(c.OpType(op)))) ++n;
  });
  return n;
}

// The severity of a timeline's or a TF2 profile's input-bound finding at `pct` of the step
// (issue 44: no finding of medium or above on a healthy job): the rule's own from high_pct,
// one level lower from moderate_pct (TensorBoard's grades), LOW under low_below_pct (prefetch
// overlaps at most the input's share of the step, so it buys under that share) and LOW on a
// worker that already prefetches (`producer_ops` > 0: the fix's prefetch is in place; what is
// left is the pipeline's own speed, which no prediction here weighs). Appends the reason to
// the summary and the figure to the evidence when it lowers the grade.
void GradeInputBound(const Rule& rule, double pct, int64_t producer_ops, Finding* f) {
  const auto lower_to_low = [&](const std::string& why) {
    if (f->severity <= Severity::kLow) return;
    f->summary += fmt::format("; severity low, not {}: {}", SeverityName(f->severity), why);
    f->severity = Severity::kLow;
  };
  if (producer_ops > 0) {
    f->evidence.push_back({"tf.data producer ops beside the steps (already prefetched)",
                           double(producer_ops), "count"});
    lower_to_low(fmt::format(
        "its input is already prefetched ({} tf.data producer op(s) ran beside its steps), so "
        "prefetch buys nothing more; the pipeline's own speed paces the step (more parallel "
        "reads and maps), which tfdiag does not predict",
        producer_ops));
  } else if (pct < rule.Param("low_below_pct")) {
    lower_to_low(fmt::format(
        "{:.1f}% of the step in input is under {:g}%: prefetch overlaps at most that share, so "
        "it buys under {:g}% of the step",
        pct, rule.Param("low_below_pct"), rule.Param("low_below_pct")));
  }
}

// The live path (bundles with eBPF traffic): per worker, the bytes/s read from HDFS DataNodes.
// A plateau is a rate that stays flat (coefficient of variation <= hdfs_plateau_max_cv over at
// least hdfs_plateau_min_samples intervals, at >= hdfs_min_mb_per_s) while the worker waits:
// its CPU demand, as a share of the CPUs it may use, is <= hdfs_plateau_max_cpu_share. Demand
// is on-CPU plus run-queue time (eBPF sched rows), so a worker starved of CPU on a busy node is
// not mistaken for one waiting on input; without sched rows, CPU used (/proc) stands in.
// Input throughput, not compute, then paces the steps.
void HdfsPlateaus(const AnalysisInput& in, const Rule& rule, std::vector<Finding>* out) {
  const Capture& c = in.capture;
  const TrafficStats& ts = in.traffic;
  const std::vector<SchedStats>& sched = in.sched;
  for (const HdfsInput& h : ts.hdfs) {
    const JobKind kind = c.tasks[h.task].kind;
    if (!IsTrainingTask(kind)) continue;
    // Drop the first and last intervals (attach start, process exit).
    std::vector<double> r = h.rate_series;
    if (r.size() > 2) r = std::vector<double>(r.begin() + 1, r.end() - 1);
    if (static_cast<double>(r.size()) < rule.Param("hdfs_plateau_min_samples")) continue;
    double mean = 0, var = 0;
    for (double x : r) mean += x;
    mean /= r.size();
    for (double x : r) var += (x - mean) * (x - mean);
    const double cv = mean > 0 ? std::sqrt(var / r.size()) / mean : 1e9;
    double busy = -1, cpus = 0;
    bool from_sched = false;
    for (const ProcessStats& p : in.processes) {
      if (p.process != h.process || p.cpus <= 0) continue;
      cpus = p.cpus;
      busy = p.cpu_cores / p.cpus;
      for (const SchedStats& s : sched) {
        if (s.process != h.process || s.window_s <= 0) continue;
        // Demand (on-CPU + run-queue wait) counts on-CPU time when a thread is switched out; a
        // thread that ran through the window without a switch shows only in /proc's CPU.
        busy = std::max(p.cpu_cores, s.cpu_demand) / p.cpus;
        from_sched = true;
      }
    }
    if (mean < rule.Param("hdfs_min_mb_per_s") * 1e6 || cv > rule.Param("hdfs_plateau_max_cv") ||
        busy < 0 || busy > rule.Param("hdfs_plateau_max_cpu_share")) {
      continue;
    }
    const std::string label(c.TaskLabelOf(h.task));
    Finding f = MakeFinding(rule, "task", label);
    f.task = label;
    if (f.severity > Severity::kInfo) {
      f.severity = static_cast<Severity>(static_cast<int>(f.severity) - 1);
    }
    f.summary = fmt::format(
        "{} reads {:.1f} MB/s from HDFS, flat (+-{:.0f}% over {} intervals) while it asks for "
        "only {:.0f}% of its {:.3g} CPUs ({}): input throughput, not compute, paces its steps",
        label, mean / 1e6, 100 * cv, r.size(), 100 * busy, cpus,
        from_sched ? "on-CPU + run-queue time, eBPF" : "CPU used, /proc");
    f.evidence = {{"HDFS input rate (measured, eBPF)", mean, "bytes/s"},
                  {"HDFS bytes read in the window", double(h.bytes), "bytes"},
                  {"rate variation (stddev / mean)", 100 * cv, "%"},
                  {"intervals", double(r.size()), "count"},
                  {"CPU demand share of its CPUs", 100 * busy, "%"},
                  {"CPUs it may use", cpus, "CPUs"}};
    f.fix =
        "For this job: read input in parallel and ahead of the step (tf.data: "
        "interleave(num_parallel_calls=tf.data.AUTOTUNE), prefetch), or raise the DataNode "
        "bandwidth; more workers on the same HDFS path will not go faster.\n" +
        f.fix;
    f.range_start = c.meta.window_start;
    f.range_end = c.meta.window_end;
    out->push_back(std::move(f));
  }
}

// A TF2 task's input-bound finding from XProf's step-time breakdown (step_breakdown.h): input =
// host wait for input + host to device, as XProf's input-pipeline analyzer counts it.
void BreakdownInputBound(const Capture& c, const Rule& rule, const TaskStats& t,
                         const BreakdownTotals& b, std::vector<Finding>* out) {
  const double pct = InputPct(b), steady = InputPct(b, true);
  if (pct < rule.Param("moderate_pct")) return;
  const bool high = pct >= rule.Param("high_pct");
  const bool warmup = b.steps > 1 && steady < rule.Param("moderate_pct");
  Finding f = MakeFinding(rule, "task", t.label);
  f.task = t.label;
  const int down = (high ? 0 : 1) + (warmup ? 1 : 0);
  for (int i = 0; i < down && f.severity > Severity::kInfo; ++i) {
    f.severity = static_cast<Severity>(static_cast<int>(f.severity) - 1);
  }
  const TimeNs wait = b.at(StepCategory::kInput) + b.at(StepCategory::kHostToDevice);
  f.summary = fmt::format(
      "{} waits for input {:.1f}% of its step time ({} per step over {} step(s): the host waits "
      "on the tf.data iterator or copies input to the device, XProf's step-time breakdown); "
      "TensorBoard calls this {} input-bound",
      t.label, pct, FormatDuration(double(wait) / b.steps), b.steps,
      high ? "highly" : "moderately");
  if (warmup) {
    f.summary +=
        fmt::format("; the first step, a warm-up, carries most of it: {:.1f}% without it", steady);
  }
  f.evidence = {
      {"input wait share of step time", pct, "%"},
      {"input wait per step", double(wait) / b.steps, "ns"},
      {"host wait for input (tf.data iterator)", double(b.at(StepCategory::kInput)), "ns"},
      {"host to device", double(b.at(StepCategory::kHostToDevice)), "ns"},
      {"steps", double(b.steps), "count"}};
  if (b.steps > 1) f.evidence.push_back({"input wait share without the first step", steady, "%"});
  // What the profile's iterator events say of the pipeline: which fix applies (a prefetch to
  // add, or to move last, or the stages before it), not only the guide's whole recipe.
  const InputPipeline p = InputPipelineOfTask(c, t.task);
  if (!p.chain.empty()) {
    f.evidence.push_back(
        {"tf.data stages traced (iterator events)", double(p.chain.size()), "count"});
    f.evidence.push_back(
        {"tf.data GetNext events traced (every stage)", double(p.get_next), "count"});
    f.fix = "For this job: " + InputPipelineAdvice(p) + "\n" + f.fix;
  }
  GradeInputBound(rule, pct, ProducerOps(c, t), &f);
  f.range_start = t.first_ns;
  f.range_end = t.last_ns;
  out->push_back(std::move(f));
}

}  // namespace

InputWait InputWaitOfTask(const Capture& c, const TaskStats& t) {
  const uint32_t task = t.task;
  InputWait w;
  std::vector<std::pair<TimeNs, TimeNs>> iv;
  ForEachOpOfTask(c, t, [&](const OpRow& op) {
    if (!IsInputOp(c.Str(c.OpType(op)), c.Str(c.OpName(op)))) return;
    ++w.count;
    w.sum_ns += op.dur();
    iv.emplace_back(op.start, op.end());
    if (op.dur() > w.longest_ns) w.longest_ns = op.dur(), w.longest_name = c.Str(c.OpName(op));
  });
  if (iv.empty()) return w;
  std::sort(iv.begin(), iv.end());
  // Most input ops open at once: sweep over starts and ends (an end at t closes before a start at
  // t).
  std::vector<std::pair<TimeNs, int>> edges;
  edges.reserve(iv.size() * 2);
  for (const auto& [s, e] : iv) {
    if (e <= s) continue;
    edges.emplace_back(s, 1);
    edges.emplace_back(e, -1);
  }
  std::sort(edges.begin(), edges.end());
  int open = 0;
  for (const auto& [ts, d] : edges) w.max_parallel = std::max(w.max_parallel, open += d);
  // Merge into disjoint intervals.
  std::vector<std::pair<TimeNs, TimeNs>> merged;
  for (const auto& x : iv) {
    if (!merged.empty() && x.first <= merged.back().second) {
      merged.back().second = std::max(merged.back().second, x.second);
    } else {
      merged.push_back(x);
    }
  }
  // Clip to the task's steps (sorted by index, so by start). Where steps overlap, a wait in both
  // counts in each, as their lengths do in step_mean_ns * steps, the time it is compared with.
  std::vector<std::pair<TimeNs, TimeNs>> steps;
  for (const StepRow& st : c.TaskSteps(task)) steps.emplace_back(st.start, st.end);
  if (steps.empty()) {
    for (const auto& [s, e] : merged) w.union_ns += e - s;
    return w;
  }
  std::sort(steps.begin(), steps.end());
  size_t j = 0;
  for (const auto& [s, e] : merged) {
    while (j < steps.size() && steps[j].second <= s) ++j;
    for (size_t k = j; k < steps.size() && steps[k].first < e; ++k) {
      const TimeNs lo = std::max(s, steps[k].first), hi = std::min(e, steps[k].second);
      if (hi > lo) w.union_ns += hi - lo;
    }
  }
  return w;
}

std::vector<Finding> RunInputBound(const AnalysisInput& in, const Rule& rule) {
  std::vector<Finding> out;
  const Capture& c = in.capture;
  if (!c.traffic.empty()) HdfsPlateaus(in, rule, &out);
  for (const TaskStats& t : in.stats.tasks) {
    if (!IsTrainingTask(t.kind) || t.steps == 0) continue;
    // TF2 profiles: XProf's breakdown, which sees the wait on the tf.data iterator's own thread
    // (TF 2.3+), where the step's IteratorGetNext op lasts microseconds.
    const BreakdownTotals b = BreakdownOfTask(c, t.task);
    if (!b.empty() && b.step_ns > 0) {
      BreakdownInputBound(c, rule, t, b, &out);
      continue;
    }
    const TimeNs step_total = t.step_mean_ns * t.steps;
    InputWait w = InputWaitOfTask(c, t);
    if (w.count == 0 || step_total <= 0) continue;
    const double pct = std::min(100.0, 100.0 * w.union_ns / step_total);
    if (pct < rule.Param("moderate_pct")) continue;
    const bool high = pct >= rule.Param("high_pct");
    Finding f = MakeFinding(rule, "task", t.label);
    f.task = t.label;
    if (!high && f.severity > Severity::kInfo) {
      f.severity = static_cast<Severity>(static_cast<int>(f.severity) - 1);
    }
    const bool parallel = w.max_parallel > 1;
    f.summary = fmt::format(
        "{} waits for input {:.0f}% of its step time ({}: {} input op(s), {} per step{}); "
        "TensorBoard calls this {} input-bound",
        t.label, pct, w.longest_name, w.count, FormatDuration(double(w.union_ns) / t.steps),
        parallel ? fmt::format(", up to {} at once: the wait is their union, not their sum",
                               w.max_parallel)
                 : "",
        high ? "highly" : "moderately");
    f.evidence = {{"input wait share of step time", pct, "%"},
                  {"input wait time (union within steps)", double(w.union_ns), "ns"},
                  {"input wait per step", double(w.union_ns) / t.steps, "ns"},
                  {"steps", double(t.steps), "count"},
                  {"longest input wait", double(w.longest_ns), "ns"}};
    if (parallel) {
      f.evidence.push_back({"input ops running at once (most)", double(w.max_parallel), "count"});
      f.evidence.push_back({"input op time summed over parallel ops", double(w.sum_ns), "ns"});
    }
    GradeInputBound(rule, pct, ProducerOps(c, t), &f);
    f.ops = {w.longest_name};
    f.range_start = t.first_ns;
    f.range_end = t.last_ns;
    out.push_back(std::move(f));
  }
  return out;
}

FixPlan InputBoundFix(const AnalysisInput&, const ReplayModel& m, const Finding& f, const Rule&) {
  FixPlan plan;
  // The fix is a change to the input pipeline's code (the rule's fix text), which every worker
  // of the job runs: every worker prefetches, not only those the finding names. A sync job paced
  // by one input-bound worker gains when that one prefetches, whichever finding names it.
  for (const ReplayModel::Worker& w : m.workers) plan.fix.prefetch_workers.push_back(w.task);
  size_t named = f.objects.size();
  if (named == 0) named = 1;
  plan.what = fmt::format(
      "the input pipeline prefetched on all {} worker(s) (the fix changes the pipeline's code, "
      "which every worker runs; the finding names {}), each step at least the input pipeline's "
      "time per step, taken as {}",
      plan.fix.prefetch_workers.size(), named, m.producer_source);
  return plan;
}

}  // namespace tfdiag
