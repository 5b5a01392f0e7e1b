// scaling-limit: does adding workers help? Compares runs of one job at different worker counts
// (tfdiag scaling): per run the throughput and each PS's busy share; where throughput stops
// following the worker count, the resource that saturated. Thresholds: rule `scaling-limit` in
// rules/default.rules.json. The question (and its 10 -> 50 -> 100 -> 200 worker sweep) comes from
// vivo's "TensorFlow on Kubernetes" bottleneck study; linear speed-up as the ideal follows
// TensorFlow's distributed training guide (https://www.tensorflow.org/guide/distributed_training).
// Pure functions; no I/O. Thread-safety: reentrant.
#pragma once

#include <string>
#include <vector>

#include "analyzers/analysis.h"
#include "core/capture.h"
#include "core/status.h"

namespace tfdiag {

// One PS task of a run and how busy it was.
struct ScalingPs {
  std::string task;      // "ps:0"
  double busy_pct = -1;  // percent; -1 unknown
  // How busy_pct was measured: "busy time / span" (timeline: union of op intervals over the
  // capture span) or "CPU used / CPUs it may use" (bundle: live samples).
  std::string basis;
  std::string top_variable;     // variable with most op time on it ("" if none known)
  double top_variable_pct = 0;  // its share of the PS's op time, percent
};

// Figures of one run, as `analyze` derives them.
struct ScalingRun {
  std::string name;                       // the run as the user named it (file or directory)
  int workers = 0;                        // worker tasks (chief/master included)
  int ps = 0;                             // PS tasks
  int64_t steps = 0;                      // steps summed over workers
  TimeNs step_median_ns = 0;              // median over workers of each worker's median step time
  double throughput_steps_per_s = 0;      // sum over workers of 1 / their median step time
  double throughput_examples_per_s = -1;  // throughput x batch size; -1 without a batch size
  double speedup = 1;                     // throughput / throughput of the smallest run
  double ideal_speedup = 1;               // workers / workers of the smallest run (linear scaling)
  double efficiency = 1;                  // speedup / ideal_speedup
  std::vector<ScalingPs> ps_busy;         // per PS, in task order
  double input_wait_pct = -1;  // workers' input wait (union of input ops in steps) / step time, %
  double throttled_pct = -1;   // highest CFS throttled share of periods of any task, %; -1 unknown
  std::vector<std::string> variables;  // variables hosted by the PS tasks, sorted (consistency)
};

// The figures of one analyzed run. `batch_size` > 0 adds examples/s.
// Errors: kInvalidInput naming the run when it has no worker steps (a bundle from attach has no
// step times; a timeline without step markers has none either).
StatusOr<ScalingRun> MeasureRun(const std::string& name, const Capture& c, const AnalysisResult& r,
                                int64_t batch_size);

struct ScalingResult {
  std::vector<ScalingRun> runs;  // by worker count (stable for equal counts)
  // `scaling-limit` findings, one per pair of consecutive runs whose efficiency from one to the
  // next is below the rule's min_efficiency; each covers one object (itself).
  std::vector<Finding> findings;
  // Why the runs may not be one job (different PS sets or variables); empty when consistent.
  std::vector<std::string> warnings;
};

// Orders `runs` by workers, fills speed-up and efficiency against the smallest run and judges
// each consecutive pair with `rule` (params min_efficiency, saturation_pct, queueing_pct,
// input_wait_pct, throttled_pct). Errors: kUsage when fewer than two runs are given.
StatusOr<ScalingResult> CompareRuns(std::vector<ScalingRun> runs, const Rule& rule);

}  // namespace tfdiag
