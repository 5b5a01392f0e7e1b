#include "analyzers/input_bound.h"

#include <cmath>

#include "analyzers/capture_queries.h"
#include "analyzers/op_names.h"
#include "analyzers/traffic_stats.h"

namespace tfdiag {

namespace {

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

}  // namespace

std::vector<Finding> RunInputBound(const AnalysisInput& in, const Rule& rule) {
  std::vector<Finding> out;
  const Capture& c = in.capture;
  if (!c.traffic.empty()) HdfsPlateaus(in, rule, &out);
  for (const TaskStats& t : in.stats.tasks) {
    if (!IsTrainingTask(t.kind) || t.steps == 0) continue;
    const TimeNs step_total = t.step_mean_ns * t.steps;
    TimeNs input = 0, longest = 0;
    int64_t count = 0;
    std::string op_name;
    ForEachOpOfTask(c, t, [&](const OpRow& op) {
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
