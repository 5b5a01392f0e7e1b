#include "analyzers/cpu_starvation.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace tfdiag {

namespace {

// The node a process ran on: its pod's node (cluster mode), else the recording host.
std::string NodeOf(const Capture& c, const ProcessRow& row) {
  if (!c.Str(row.node).empty()) return std::string(c.Str(row.node));
  return c.meta.host.empty() ? std::string("this node") : c.meta.host;
}

// One task's CPU figures, whichever evidence the capture has.
struct TaskCpu {
  const ProcessStats* p = nullptr;
  const SchedStats* s = nullptr;  // nullptr: no run-queue figures
  std::string node;
  double wait_share = -1;  // 0..1
  double demand = -1;      // CPUs asked for (running + waiting); -1 unknown
  double used = 0;         // CPUs used
};

// Per node, the job's tasks there.
struct NodeCpu {
  double demand = 0, used = 0, runnable = 0;
  bool runnable_known = true;
  int host_cpus = 0;
  int tasks = 0;
};

}  // namespace

std::string RunqEvidenceSource(const Capture& c) {
  if (c.sched.empty()) return "";
  const std::string& p = c.meta.probes;
  if (p.rfind("sched(", 0) == 0) return "eBPF sched probe";
  if (p == "prometheus") return "tfdiag agents' run-queue histogram (Prometheus)";
  // attach without the eBPF sched probe writes its rows from /proc
  // (collectors/attach/recorder_sample.cc).
  return "/proc/PID/task/*/schedstat";
}

std::vector<Finding> RunCpuStarvation(const AnalysisInput& in, const Rule& rule) {
  std::vector<Finding> out;
  const Capture& c = in.capture;
  const double min_share = rule.Param("min_runq_wait_share");
  const double high_share = rule.Param("high_runq_wait_share");
  const double min_demand = rule.Param("min_cpu_demand");
  const double min_throttled = rule.Param("min_throttled_pct");
  const std::string source = RunqEvidenceSource(c);
  std::vector<TaskCpu> tasks;
  std::map<std::string, NodeCpu> nodes;
  for (const ProcessStats& p : in.processes) {
    if (p.samples < 2 && in.sched.empty()) continue;
    const ProcessRow& row = c.processes[p.process];
    TaskCpu t;
    t.p = &p;
    for (const SchedStats& x : in.sched) t.s = x.process == p.process ? &x : t.s;
    t.node = NodeOf(c, row);
    t.used = p.cpu_cores;
    if (t.s != nullptr && t.s->runq_wait_share >= 0 && t.s->window_s > 0) {
      t.wait_share = t.s->runq_wait_share;
      t.demand = t.s->cpu_demand;
      if (t.s->oncpu_cores > 0) t.used = t.s->oncpu_cores;
    }
    NodeCpu& n = nodes[t.node];
    n.tasks++;
    n.used += t.used;
    if (t.demand >= 0) n.demand += t.demand;
    n.runnable_known &= p.runnable_mean >= 0;
    if (p.runnable_mean >= 0) n.runnable += p.runnable_mean;
    n.host_cpus = std::max<int>(n.host_cpus, row.host_cpus);
    tasks.push_back(t);
  }
  for (const TaskCpu& t : tasks) {
    const ProcessStats& p = *t.p;
    const ProcessRow& row = c.processes[p.process];
    const NodeCpu& n = nodes[t.node];
    const bool runq = t.wait_share >= 0;
    const bool starved = runq && t.demand >= min_demand && t.wait_share >= min_share;
    // Weaker: CFS throttling alone (cAdvisor without the agents' run-queue figures).
    const bool throttled_only = !runq && p.throttled_pct >= min_throttled;
    if (!starved && !throttled_only) continue;
    Finding f = MakeFinding(rule, "task", p.task);
    f.task = p.task;
    f.node = t.node;
    const std::string who = ProcessWho(c, row);
    const std::string name = p.task + (who.empty() ? "" : " (" + who + ")");
    const double cpus = p.cpus > 0 ? p.cpus : n.host_cpus;
    if (starved) {
      // The whole node's severity (one group per node): the worst task there decides.
      double worst = 0;
      for (const TaskCpu& u : tasks) {
        if (u.node == t.node && u.demand >= min_demand) worst = std::max(worst, u.wait_share);
      }
      f.severity = worst >= high_share ? rule.severity : Severity::kMedium;
      f.summary = fmt::format(
          "{} on {} waits for a CPU {:.0f}% of its runnable time{}: it asks for {:.2f} CPUs and "
          "gets {:.2f}",
          name, t.node, 100 * t.wait_share,
          t.s->runq_p99_us > 0
              ? fmt::format(" (run-queue wait p99 < {:.1f} ms)", t.s->runq_p99_us / 1e3)
              : "",
          t.demand, t.used);
      f.evidence = {{"run-queue wait share of runnable time", 100 * t.wait_share, "%"},
                    {"CPU demand (running + waiting)", t.demand, "CPUs"},
                    {"CPU used", t.used, "CPUs"}};
      if (t.s->runq_p99_us > 0) {
        f.evidence.push_back({"run-queue wait, p99 bucket bound", t.s->runq_p99_us, "us"});
        f.evidence.push_back({"run-queue wait, mean", t.s->runq_mean_us, "us"});
      }
    } else {
      f.severity = std::min(rule.severity, Severity::kMedium);
      f.summary = fmt::format(
          "{} on {} is throttled in {:.0f}% of CFS periods: it waits for its CPU quota (CFS "
          "throttling only; run-queue wait unknown without the tfdiag agents or attach)",
          name, t.node, p.throttled_pct);
      f.evidence = {{"throttled CFS periods", p.throttled_pct, "%"},
                    {"CPU used", t.used, "CPUs"},
                    {"CPU limit", p.cpu_limit, "CPUs"}};
    }
    f.evidence.push_back({"CPUs the task may use", cpus, "CPUs"});
    if (p.runnable_mean >= 0) {
      f.evidence.push_back({"runnable threads (mean)", p.runnable_mean, "count"});
      f.summary += fmt::format("; {:.1f} runnable threads on {:.2g} CPU{}", p.runnable_mean, cpus,
                               cpus == 1 ? "" : "s");
    }
    f.evidence.push_back({"threads (mean)", p.threads_mean, "count"});
    if (p.involuntary_per_s >= 0) {
      f.evidence.push_back({"involuntary context switches", p.involuntary_per_s, "/s"});
      f.summary += fmt::format(", {:.0f} involuntary context switches/s", p.involuntary_per_s);
    }
    if (p.throttled_pct >= 0 && starved) {
      f.evidence.push_back({"throttled CFS periods", p.throttled_pct, "%"});
      f.summary += fmt::format(", throttled in {:.0f}% of CFS periods", p.throttled_pct);
    }
    f.summary += "; evidence: " + (starved ? source : std::string("CFS throttling (cgroup)"));
    // The node's cause: who holds the CPUs. The job's own demand against the node's CPUs tells
    // whether other work (not this job's tasks) takes them.
    std::string cause;
    if (starved && n.host_cpus > 0) {
      const bool others = n.demand < 0.9 * n.host_cpus;
      cause = fmt::format(
          "on {}: the job's {} task{} there ask for {:.2f} of its {} CPUs and get {:.2f}{}", t.node,
          n.tasks, n.tasks == 1 ? "" : "s", n.demand, n.host_cpus, n.used,
          others ? "; other work on the node (not this job's tasks) holds the rest"
                 : "; the job's own tasks ask for more CPUs than the node has");
      if (n.runnable_known) cause += fmt::format(" ({:.1f} runnable threads)", n.runnable);
    } else {
      cause = "on " + t.node;
    }
    f.cause = cause;
    // Left out when unknown (no node CPU count in the evidence): never shown as 0 CPUs.
    if (n.host_cpus > 0) f.evidence.push_back({"node CPUs", double(n.host_cpus), "CPUs"});
    const int fit = std::max(1, static_cast<int>(cpus + 0.5));
    f.fix = fmt::format(
                "For the tasks on {0}: fewer runnable threads than CPUs (TF_NUM_INTRAOP_THREADS="
                "{1} TF_NUM_INTEROP_THREADS={1}), a CPU request and limit that match what the "
                "task needs (Guaranteed QoS, whole CPUs) or a cpuset of its own, or fewer tasks "
                "on this node.\n",
                t.node, fit) +
            f.fix;
    f.ops = {std::string(c.Str(row.pod))};
    f.range_start = row.first_ns;
    f.range_end = row.last_ns;
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace tfdiag
