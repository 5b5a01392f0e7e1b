// ps-cpu-quota: a PS task's CPU cgroup throttles it, its CFS quota smaller than what serving the
// workers takes (docs/rules/ps-cpu-quota.md; issue 44: a CPU quota on a PS). Per PS process of a
// live bundle (tfdiag attach, or a cluster capture with cAdvisor's throttling series): the share
// of CFS periods throttled (cpu.stat nr_throttled / nr_periods) and the share of wall time its
// cgroup was throttled (cpu.stat throttled_time, v1 ns, or throttled_usec, v2; over the samples'
// window), with its CPU limit (cpu.cfs_quota_us / cpu.cfs_period_us, or cpu.max) and the CPU it
// used. Fires when both shares reach the rule's thresholds (rules/default.rules.json); HIGH from
// high_throttled_time_pct of the wall time, else MEDIUM. A throttled PS answers nobody while its
// quota is spent: every worker's request waits for the next period, inside the PS's ops (an op
// that runs out of quota stops until the period ends) and before them (a request that arrives
// while the cgroup is throttled waits in the socket, a wait no op covers).
//
// With the PS's timeline the evidence adds its ops' busy share, the share of time the PS was
// stopped while it could run (the larger of the throttled share and the run-queue wait of its
// threads from schedstat or the eBPF sched probe: a throttled thread is runnable and off the CPU,
// and the kernel's throttled time, counted from when the throttle takes the run queue, misses
// part of it: a spinning process under a 0.15-CPU quota on this project's 6.18 kernel shows 15%
// of 2.04 s on a CPU and 73% throttled) and the slowdown of its ops that stopped time explains.
//
// Its fix model (PsCpuQuotaFix, the quota raised or removed): the PS is no longer stopped by its
// quota, and waits for a CPU only as the job's unthrottled PS in the same capture do (the median
// of their run-queue wait share of runnable time: a node whose CPUs other work holds slows them
// too; 0 without such a PS). Of its stopped time, the part inside its ops (at most their busy
// time less its CPU time over 1 - that wait) leaves them (Fix::host_speedup: op time / (busy /
// (busy - stopped in ops))); the rest held requests that arrived while the PS was throttled,
// before their ops started (at least its time outside its ops, up to its stopped time, when it
// was stopped for at least that long), and leaves each worker's wait the PS queue does not
// explain, pulls and pushes alike (ReplayModel::Worker::recv_ns and tail_ns, Fix::recv_cut and
// tail_cut). That second part is an estimate (the capture does not show when each request
// reached the PS), so a prediction with it is at most medium (FixPlan::estimated). Pure
// functions of their input; thread-safe.
#pragma once

#include <vector>

#include "analyzers/analysis_input.h"
#include "analyzers/replay.h"

namespace tfdiag {

std::vector<Finding> RunPsCpuQuota(const AnalysisInput& in, const Rule& rule);

// The share of wall time, [0, 1], in which a throttled PS held requests that reached it before
// their ops started: its stopped time outside its ops (stopped - in_ops) while it was stopped no
// longer than it is outside its ops (1 - busy); beyond that, rising linearly to all of its time
// outside its ops at stopped = outside + in_ops (continuous: a point of noise in the stopped
// share moves it by a point). `stopped`, `in_ops` and `busy` are shares of wall time: stopped by
// the quota, stopped inside its ops, its ops busy; 0 when one is not finite.
double QuotaHoldShare(double stopped, double in_ops, double busy);

// What a raised quota takes from the workers' wait the PS queue does not explain: per worker with
// such a wait (Worker::recv_ns + tail_ns, ns), the share min(1, (hold_ns + mode_excess_ns) / it)
// of both parts, appended to fix->recv_cut and fix->tail_cut. hold_ns: the PS's stopped time
// outside its ops per step (QuotaHoldShare x the step); mode_excess_ns: the median step's excess
// over the mean step, where the steps fall in the quota's modes and the replay as is meets the
// median (0 elsewhere); both ns, >= 0.
struct QuotaCut {
  double cut_ns = 0;     // the most taken from one worker's wait per step, ns
  double excess_ns = 0;  // of it, the most beyond hold_ns (the modes' excess), ns
};
QuotaCut CutQuotaHolds(const ReplayModel& m, double hold_ns, double mode_excess_ns, Fix* fix);

// The quota raised or removed: the throttled PS's op times without their throttled part and each
// worker's receive time without the rest of it (see above). `plan.what` empty, with the reason in
// `plan.why`, when the capture has no timeline of that PS or no throttled time.
FixPlan PsCpuQuotaFix(const AnalysisInput& in, const ReplayModel& m, const Finding& f,
                      const Rule& rule);

// What FoldIntoQuota reads beside the findings: the task table and two rules' thresholds.
struct QuotaFolds {
  const TaskStatsTable& stats;
  double min_slowdown = 1.5;   // slow-ps-host's min_slowdown
  double hot_ratio = 2.0;      // hot-ps's min_ratio_to_next
  double oversub_ratio = 1.5;  // thread-oversubscription's max_runnable_per_cpu
};

// Findings on a PS that ps-cpu-quota names whose cause is its quota, folded into it (their
// figures join its evidence as "also: <rule>: <label>", their finding goes):
//  - hot-ps, when at the speed the stopped time explains its op time would be under hot-ps's
//    min_ratio_to_next x the busiest other PS's (as FoldHotPsIntoSlowHost does for a slow host):
//    a part that stands out only while throttled is the quota's;
//  - slow-ps-host, when the stopped time explains its slowdown (the slowdown over the one
//    ps-cpu-quota's evidence says the stopped time explains is under slow-ps-host's
//    min_slowdown): moving the task to a host at the other PS's speed would keep its quota
//    there; a throttled PS on a slow host keeps both findings;
//  - thread-oversubscription, when its runnable threads are under its max_runnable_per_cpu
//    times the threads its fix leaves (the pools sized to the CPU limit, at least 1): it fires
//    only because the limit is under one CPU (a single-threaded PS under a 0.15-CPU quota is
//    "6.7 runnable per CPU"), and only a larger limit helps.
void FoldIntoQuota(const QuotaFolds& folds, std::vector<Finding>* findings);

}  // namespace tfdiag
