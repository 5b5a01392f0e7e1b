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

#include "analyzers/analysis_input.h"
#include "analyzers/analysis_result.h"
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
  // CPU used, cores (scaling --prometheus); -1 unknown. Without a CPU limit or request busy_pct
  // stays unknown and this is what the text shows.
  double cpu_cores = -1;
};

// How one role's tasks (workers, or PS) of a run used and waited for CPU, as the tfdiag agents
// measured it over the run (scaling --prometheus: tfdiag_task_cpu_seconds_total,
// tfdiag_task_runnable_threads, tfdiag_runqueue_latency_seconds, tfdiag_context_switches_total,
// tfdiag_cgroup_*periods_total; limits from kube-state-metrics). Means per task over the
// role's tasks that have the figure; -1 unknown.
struct ScalingCpu {
  int tasks = 0;                  // tasks with CPU figures
  double cpu_cores = -1;          // CPU used per task, cores
  double cpu_limit = -1;          // CPU limit per task, cores; -1 none known
  double runnable = -1;           // threads in state R per task (mean over the run)
  double runq_wait_pct = -1;      // run-queue wait / (on-CPU + wait) over the role's tasks, %
  double runq_p99_ns = -1;        // p99 wakeup -> on-CPU wait of the role's tasks, ns
  double switches_per_s = -1;     // context switches per s per task (voluntary + involuntary)
  double involuntary_per_s = -1;  // of them involuntary (preempted), per s per task
  double throttled_pct = -1;      // CFS throttled share of periods, highest task, %
};

// The figures in words, "-" for each unknown one: "0.28 CPUs per task (limit -), 1.0 runnable
// threads, run-queue wait 72% (p99 12.00 ms), 150 context switches/s (40 involuntary)".
std::string ScalingCpuText(const ScalingCpu& c);

// Figures of one run, as `analyze` derives them.
struct ScalingRun {
  std::string name;           // the run as the user named it (file or directory)
  int workers = 0;            // worker tasks (chief/master included)
  int ps = 0;                 // PS tasks
  int64_t steps = 0;          // steps summed over workers
  TimeNs step_median_ns = 0;  // median over workers of each worker's median step time
  // Sum over workers of 1 / their median step time; with throughput_proxy, the proxy in
  // throughput_unit instead (the JSON then writes it as worker_bytes_per_s, never as steps/s).
  double throughput_steps_per_s = 0;
  double throughput_examples_per_s = -1;  // throughput x batch size; -1 without a batch size
  double speedup = 1;                     // throughput / throughput of the smallest run
  double ideal_speedup = 1;               // workers / workers of the smallest run (linear scaling)
  double efficiency = 1;                  // speedup / ideal_speedup
  std::vector<ScalingPs> ps_busy;         // per PS, in task order
  double input_wait_pct = -1;  // workers' input wait (union of input ops in steps) / step time, %
  double throttled_pct = -1;   // highest CFS throttled share of periods of any task, %; -1 unknown
  // How throughput was measured, in words: the default below (timelines),
  // "the workers' own step counters (<source>)", or the proxy and what it assumes.
  std::string throughput_source = "steps/s = 1 / the median step time of each worker's timeline";
  // True when throughput_steps_per_s holds a proxy in throughput_unit, not steps/s: bundles
  // without step counters use the workers' bytes sent to the PS per second (eBPF), assuming the
  // bytes per step are the same in every run. Speed-up and efficiency are ratios, so they hold.
  bool throughput_proxy = false;
  std::string throughput_unit = "steps/s";
  // Bundles: the node's CPUs. cpu_used_pct: CPU used by the recorded tasks / the node's CPUs,
  // on the busiest node; runq_wait_pct: share of the recorded tasks' runnable time spent waiting
  // on a run queue (eBPF sched: wait / (on-CPU + wait)), i.e. waiting for a CPU. -1 unknown.
  double cpu_used_pct = -1;
  double runq_wait_pct = -1;
  // Bundles: steal's share of the node's CPU time over the window (CaptureMeta::steal_pct), %;
  // -1 unknown. Throughput falls with it, so runs that saw different steal are not comparable.
  double steal_pct = -1;
  // scaling --prometheus: the agents' per-role CPU figures (tasks 0 when none).
  ScalingCpu worker_cpu, ps_cpu;
  std::vector<std::string> variables;  // variables hosted by the PS tasks, sorted (consistency)
};

// The figures of one analyzed run. `batch_size` > 0 adds examples/s.
// Throughput comes from, in order: timeline steps; the workers' own step counters in a bundle
// (Capture::step_counts; steps over the window, mean step time per worker); the workers' bytes
// to the PS per second (a proxy, flagged in throughput_proxy).
// Errors: kInvalidInput naming the run when it has none of these (a timeline without step
// markers, a bundle without step counters or eBPF traffic).
StatusOr<ScalingRun> MeasureRun(const std::string& name, const Capture& c, const AnalysisResult& r,
                                int64_t batch_size);

struct ScalingResult {
  std::vector<ScalingRun> runs;  // by worker count (stable for equal counts)
  // `scaling-limit` findings, one per pair of consecutive runs whose efficiency from one to the
  // next is below the rule's min_efficiency; each covers one object (itself).
  std::vector<Finding> findings;
  // Why the runs may not be one job (different PS sets or variables), or runs whose efficiency
  // no single job can reach; empty when consistent.
  std::vector<std::string> warnings;
  // What the sweep says beyond its findings (analyzers/scaling_verdicts.h): the resource next to
  // saturate, pairs near the limit although their efficiency passes. In order; may be empty.
  std::vector<std::string> notes;
};

// Orders `runs` by workers, fills speed-up and efficiency against the smallest run and judges
// each consecutive pair with `rule` (params min_efficiency, saturation_pct, queueing_pct,
// input_wait_pct, throttled_pct, cpu_wait_pct). Runs whose throughput units differ (steps/s
// and a proxy) are warned about and not judged against each other. Errors: kUsage when fewer than
// two runs are given.
StatusOr<ScalingResult> CompareRuns(std::vector<ScalingRun> runs, const Rule& rule);

}  // namespace tfdiag
