#include "analyzers/thread_oversubscription.h"

#include "analyzers/traffic_stats.h"

namespace tfdiag {

std::vector<Finding> RunThreadOversubscription(const AnalysisInput& in, const Rule& rule) {
  std::vector<Finding> out;
  const Capture& c = in.capture;
  const std::vector<SchedStats>& sched = in.sched;
  for (const ProcessStats& p : in.processes) {
    if (p.samples < 2 || p.cpus <= 0) continue;
    const SchedStats* ss = nullptr;  // eBPF scheduling figures, when the bundle has them
    for (const SchedStats& x : sched) ss = x.process == p.process ? &x : ss;
    // Runnable threads are unknown without /proc (cAdvisor does not export them): then only
    // throttling with many threads can fire the rule.
    const bool runnable_known = p.runnable_mean >= 0;
    const double runnable_per_cpu = runnable_known ? p.runnable_mean / p.cpus : -1;
    // eBPF run-queue latency and preemption share are evidence, not a trigger: on a shared
    // node they also rise with other pods' load, which this rule must not blame on the task.
    const bool crowded = runnable_known && runnable_per_cpu >= rule.Param("max_runnable_per_cpu");
    const bool throttled = p.throttled_pct >= rule.Param("min_throttled_pct") &&
                           p.threads_mean >= rule.Param("min_threads_per_cpu") * p.cpus;
    if (!crowded && !throttled) continue;
    const ProcessRow& row = c.processes[p.process];
    const int limit = std::max(1, static_cast<int>(p.cpus + 0.5));
    Finding f = MakeFinding(rule, "task", p.task);
    f.task = p.task;
    const std::string who = ProcessWho(c, row);
    f.summary = fmt::format(
        "{}{} runs {} threads on {:.2g} CPU{}{}{}", p.task, who.empty() ? "" : " (" + who + ")",
        runnable_known ? fmt::format("{:.1f} runnable of {:.0f}", p.runnable_mean, p.threads_mean)
                       : fmt::format("{:.0f}", p.threads_mean),
        p.cpus, p.cpu_limit > 0 ? " of CFS quota" : "",
        runnable_known ? fmt::format(" ({:.1f} runnable per CPU)", runnable_per_cpu) : "",
        p.throttled_pct >= 0 ? fmt::format(", throttled in {:.0f}% of CFS periods", p.throttled_pct)
                             : "",
        p.involuntary_per_s_per_cpu >= 0
            ? fmt::format(", {:.0f} involuntary switches/s per CPU", p.involuntary_per_s_per_cpu)
            : "");
    f.evidence = {{"threads (mean)", p.threads_mean, "count"},
                  {"CPU limit", p.cpus, "CPUs"},
                  {"CPU used", p.cpu_cores, "CPUs"}};
    if (runnable_known) {
      f.evidence.insert(f.evidence.begin(), {"runnable threads (mean)", p.runnable_mean, "count"});
      f.evidence.insert(f.evidence.begin() + 3,
                        {"runnable threads per CPU", runnable_per_cpu, "ratio"});
    }
    if (p.involuntary_per_s >= 0) {
      f.evidence.push_back({"involuntary context switches", p.involuntary_per_s, "/s"});
      f.evidence.push_back({"involuntary switches per CPU", p.involuntary_per_s_per_cpu, "/s"});
    }
    if (ss != nullptr) {
      f.summary += fmt::format(
          "; threads wait {:.0f} us on the run queue (mean, p99 < {:.0f} us), "
          "{:.0f}% of switches are preemptions",
          ss->runq_mean_us, ss->runq_p99_us, 100 * ss->involuntary_share);
      f.evidence.push_back({"run-queue latency, mean (eBPF)", ss->runq_mean_us, "us"});
      f.evidence.push_back({"run-queue latency, p99 bucket bound", ss->runq_p99_us, "us"});
      f.evidence.push_back({"involuntary share of switches", 100 * ss->involuntary_share, "%"});
      f.evidence.push_back({"run-queue waits", double(ss->runq_waits), "count"});
    }
    if (p.throttled_pct >= 0) {
      f.evidence.push_back({"throttled CFS periods", p.throttled_pct, "%"});
      // Unknown (-1: no throttled-time counter) is left out, not scaled into "-1000000 us".
      if (p.throttled_s >= 0) f.evidence.push_back({"time throttled", p.throttled_s * 1e6, "us"});
    }
    f.fix =
        fmt::format(
            "For this task: set both thread pools to its CPU limit ({0} CPU{1}):\n"
            "  TF1: tf.compat.v1.ConfigProto(intra_op_parallelism_threads={0}, "
            "inter_op_parallelism_threads={0})\n"
            "  TF2: tf.config.threading.set_intra_op_parallelism_threads({0}); "
            "tf.config.threading.set_inter_op_parallelism_threads({0})\n"
            "  env: TF_NUM_INTRAOP_THREADS={0} TF_NUM_INTEROP_THREADS={0} OMP_NUM_THREADS={0}\n",
            limit, limit == 1 ? "" : "s") +
        f.fix;
    f.ops = {std::string(c.Str(row.pod))};
    f.range_start = row.first_ns;
    f.range_end = row.last_ns;
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace tfdiag
