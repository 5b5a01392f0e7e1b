#include "analyzers/hot_ps_floor.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "analyzers/hot_ps.h"
#include "analyzers/nic_rate.h"
#include "analyzers/seen_seconds.h"

namespace tfdiag {

namespace {

// Bytes/s in and out of `task`'s processes, all peers (last row per socket), each process's
// bytes over the time it was seen (SeenSeconds: a task found late or gone early is not diluted
// by the whole window, issue 46).
std::pair<double, double> TaskBytesPerS(const Capture& c, const std::string& task) {
  std::map<std::tuple<uint32_t, StrId, StrId>, const TrafficRow*> last;
  std::map<uint32_t, TimeNs> until;  // process -> its last counters' time (any socket)
  for (const TrafficRow& t : c.traffic) {
    if (c.TaskLabelOf(c.processes[t.process].task) != task) continue;
    last[{t.process, t.peer, t.local}] = &t;
    until[t.process] = std::max(until[t.process], t.ts);
  }
  const double window = (c.meta.window_end - c.meta.window_start) / 1e9;
  double in = 0, out = 0;
  bool any = false;
  for (const auto& [k, t] : last) {
    const double seen = SeenSeconds(c, std::get<0>(k), window, until[std::get<0>(k)]);
    if (seen <= 0) continue;
    in += t->bytes_received / seen, out += t->bytes_sent / seen;
    any = true;
  }
  if (!any) return {-1, -1};
  return {in, out};
}

// The severity of a hot PS `close` percent of the way to its nearest limit: LOW under the
// rule's far_limit_pct, MEDIUM under near_limit_pct, else the rule's own.
Severity SeverityByCloseness(const Rule& rule, double close) {
  if (close < rule.Param("far_limit_pct")) return Severity::kLow;
  if (close < rule.Param("near_limit_pct")) return Severity::kMedium;
  return rule.severity;
}

// The floor from a profile alone (issue 44: healthy jobs flagged HIGH by a PS holding half the
// work of a job whose PS are nearly idle). Its closeness to a limit: the larger of its busy
// share of the capture (the union of its op intervals: at least its CPU use per thread, so
// never below its closeness to its CPUs) and its bytes served per second over its NIC's rate:
// the rate the capture's transfers show (`nic_bytes_per_s`, EstimatedNicBytesPerS) where they
// tell it, else a profile_nic_gbps NIC (1 Gbit/s: the slowest NIC in use is assumed; at 10
// Gbit/s an independent job whose 1 Gbit/s PS NIC bounded it, partitioning buying 54%, was
// lowered to LOW), where every transfer's size is known. Without the sizes the NIC cannot be
// weighed and the severity stays the rule's.
void ApplyProfileFloor(const AnalysisInput& in, const Rule& rule, const std::string& task,
                       double nic_bytes_per_s, Finding* f) {
  const TaskStats* t = nullptr;
  for (const TaskStats& s : in.stats.tasks) {
    if (s.label == task) t = &s;
  }
  if (t == nullptr || t->busy_ns <= 0 || t->busy_pct <= 0) return;
  if (t->bytes_out < 0) return;
  const double span_s = double(t->busy_ns) / (t->busy_pct / 100) / 1e9;
  const bool estimated = nic_bytes_per_s > 0;
  const double nic = estimated ? nic_bytes_per_s : rule.Param("profile_nic_gbps") * 1e9 / 8;
  const std::string nic_words =
      estimated ? fmt::format("its NIC's {:.2g} Gbit/s (estimated from the capture's transfers)",
                              nic * 8 / 1e9)
                : fmt::format(
                      "a {:g} Gbit/s NIC (a profile does not show the NIC's rate: the "
                      "slowest in use assumed)",
                      rule.Param("profile_nic_gbps"));
  if (span_s <= 0 || nic <= 0) return;
  const double nic_pct = 100 * double(t->bytes_out) / span_s / nic;
  const double close = std::max(t->busy_pct, nic_pct);
  const Severity s = SeverityByCloseness(rule, close);
  // Under profile_far_limit_pct, where the capture shows the NIC's rate, the profile's figures
  // alone do not hold the finding above LOW: LowerSeverityByImpact keeps it MEDIUM only where
  // its fix is predicted (the union of a PS's op intervals counts it busy while any one of its
  // threads is, and at under half a limit a queue waits under one service; but with few workers
  // the PS's service is on every step's path: gen2 report32 6811, 2 workers, a hot PS busy 31%,
  // partitioning predicted 9%, bought 10%). Against an assumed NIC rate the bytes may be nearer
  // the limit than they read (gen2 report28 6031, sync, 41% of an assumed 1 Gbit/s, partitioning
  // bought 50%): not there.
  if (s == Severity::kMedium && estimated && close < rule.Param("profile_far_limit_pct")) {
    f->evidence.push_back({std::string(kLowUnlessPredictedLabel), close, "%"});
  }
  if (s >= f->severity) return;
  f->evidence.push_back({fmt::format("bytes {} served against {}", task, nic_words), nic_pct, "%"});
  f->severity = s;
  f->summary += fmt::format(
      "; severity {}, not {}: {} is busy {:.0f}% of the capture and serves {:.1f} MB/s ({:.0f}% "
      "of {}): {} its nearest limit, so its share of the work slows no one much",
      SeverityName(s), SeverityName(rule.severity), task, t->busy_pct,
      double(t->bytes_out) / span_s / 1e6, nic_pct, nic_words,
      close < rule.Param("far_limit_pct") ? "far from" : "short of");
}

}  // namespace

void ApplyHotPsFloor(const AnalysisInput& in, const Rule& rule, Finding* f,
                     double nic_bytes_per_s) {
  const Capture& c = in.capture;
  const std::string task = f->task.empty() ? f->subject : f->task;
  const ProcessStats* ps = nullptr;
  for (const ProcessStats& p : in.processes) {
    if (p.task == task && p.samples >= 2 && (ps == nullptr || p.cpu_cores > ps->cpu_cores)) {
      ps = &p;
    }
  }
  if (ps == nullptr) {
    ApplyProfileFloor(in, rule, task, nic_bytes_per_s, f);  // a profile: busy time and bytes
    return;
  }
  // The CPUs it may use, named by where the count came from, so every path (bundle, agents
  // through a PromQL store, the viewer) says which evidence the floor weighed.
  const bool cpuset = ps->process < c.processes.size() && c.processes[ps->process].cpuset_cpus > 0;
  const std::string limit = ps->cpu_limit > 0 ? "CPU limit" : (cpuset ? "cpuset" : "node");
  if (ps->cpus <= 0) {
    // Live figures without a CPU count (a PromQL store with neither kube-state-metrics limits
    // nor the agents' tfdiag_node_cpus): the floor cannot be weighed; say so, never skip it
    // silently.
    f->summary += fmt::format(
        "; severity not checked against {}'s limits: no CPU limit, cpuset or node CPU count "
        "for it (kube-state-metrics limits or the tfdiag agents' tfdiag_node_cpus)",
        task);
    return;
  }
  double cpu = ps->cpu_cores;
  bool demand = false;  // the eBPF demand (running + runnable), not the CPU time used
  for (const SchedStats& s : in.sched) {
    if (s.process == ps->process && s.cpu_demand > cpu) cpu = s.cpu_demand, demand = true;
  }
  const double cpu_pct = 100 * cpu / ps->cpus;
  const auto [bin, bout] = TaskBytesPerS(c, task);
  const double nic = rule.Param("nic_gbps") * 1e9 / 8;  // bytes/s
  const double bytes = std::max(bin, bout);
  const double nic_pct = bytes >= 0 && nic > 0 ? 100 * bytes / nic : -1;
  const double close = std::max(cpu_pct, nic_pct);
  // Named for what it is: ps-cpu-imbalance's figure beside it is CPU used (issue 39).
  f->evidence.push_back({(demand ? "CPU demand (running + runnable threads) of " : "CPU used by ") +
                             task + " against the CPUs it may use",
                         cpu_pct, "%"});
  if (nic_pct >= 0) {
    f->evidence.push_back(
        {fmt::format("bytes of {} against a {:g} Gbit/s NIC", task, rule.Param("nic_gbps")),
         nic_pct, "%"});
  }
  f->evidence.push_back(
      {fmt::format("CPUs {} may use (its {})", task,
                   limit == "node" ? "node's CPUs, no CFS limit or cpuset" : limit),
       ps->cpus, "CPUs"});
  const Severity s = SeverityByCloseness(rule, close);
  if (s >= f->severity) return;
  f->severity = s;
  f->summary += fmt::format(
      "; severity {}, not {}: {} {} {:.2f} of the {:g} CPUs of its {} ({:.0f}%){}: {} "
      "its nearest limit, so its share of the work slows no one yet",
      SeverityName(s), SeverityName(rule.severity), task,
      demand ? "asks for (running + runnable threads)" : "uses", cpu, ps->cpus, limit, cpu_pct,
      nic_pct >= 0 ? fmt::format(" and moves {:.1f} MB/s ({:.1f}% of a {:g} Gbit/s NIC)",
                                 bytes / 1e6, nic_pct, rule.Param("nic_gbps"))
                   : "",
      close < rule.Param("far_limit_pct") ? "far from" : "short of");
}

std::vector<Finding> RunHotPsWithFloor(const AnalysisInput& in, const Rule& rule) {
  std::vector<Finding> out = RunHotPs(in, rule);
  if (out.empty()) return out;
  const double nic = EstimatedNicBytesPerS(in);
  for (Finding& f : out) ApplyHotPsFloor(in, rule, &f, nic);
  return out;
}

}  // namespace tfdiag
