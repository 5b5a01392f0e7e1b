// slow-ps-link: one PS runs its ops slower than the others while it sleeps in them, waiting on
// its sockets: its network link, not its CPU, is the limit (docs/rules/slow-ps-link.md; issue
// 44: a bandwidth-limited link between network namespaces). Two figures per PS, each measured:
//  - its slowdown: slow-ps-host's lower bound on how much slower it runs its ops than the other
//    PS on variables of like size (analyzers/slow_ps_host.h, with this rule's thresholds), from
//    the PS timelines (op times, show_memory variable sizes);
//  - how often it blocks per op: the voluntary context switches of its process per second (a
//    thread that sleeps: on a socket with no data to read or no room to send, on a lock), from
//    tfdiag attach's /proc samples (or the eBPF sched probe), over its ops per second (the
//    timeline), against the median of the other PS. A PS on a slow link sleeps inside its ops
//    while its answers drain and its gradients trickle in, many times per op; a PS on a slow
//    CPU host, a throttled one or one whose node is busy runs its ops longer on (or waiting for)
//    a CPU and sleeps no more per op than the other PS (its extra time is preemption, counted
//    as involuntary switches, or throttled time).
// Fires on a PS whose slowdown is >= min_slowdown and whose voluntary switches per op are >=
// min_blocking_ratio x the other PS's median (at least min_ps - 1 others with figures). Without
// live figures of the PS processes it cannot tell a link from a host and does not fire (slow-ps-
// host stays). Severity: the rule's; LOW when the PS is busy under min_busy_pct of the capture.
// Assumed, not measured, and said in the finding: that the time its ops take beyond the other
// PS's per byte is the link's (its CPU time per op is in the evidence, not a threshold: the
// kernel's TCP and tc work for a shaped link is charged to the PS too); the link's bandwidth is
// given only where the capture sizes its answers (an estimate: their bytes over that extra time).
// Thresholds: rules/default.rules.json (their origins in docs/rules/slow-ps-link.md).
//
// Its fix model (SlowPsLinkFix, the PS on a link with the other PS's bandwidth): the PS's op
// times divided by its slowdown against the other PS its link slows least (the upper median of
// its bounds, evidence "slowdown its fix takes out": the link's transfers slow the other PS's
// ops too, so their lower median, the "at least" the rule fires on, under-reads what the fix
// gives back) (Fix::host_speedup: what its ops wait for the link goes), and,
// for each worker whose median step shows that PS's answer in its last pull wait (the answer
// that ended it, or one that PS finished during it), the worker's exposed wait and last
// answer's transfer (ReplayModel::Worker::recv_ns, pull_xfer_ns, held fixed by the replay)
// shortened by the same share, 1 - 1 / slowdown (Fix::recv_cut): the link is assumed to stretch
// the worker's end of each transfer as much as the PS's, which the capture cannot show, so the
// prediction is at most medium (FixPlan::estimated).
// Pure functions of their input; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "analyzers/analysis_input.h"
#include "analyzers/replay.h"

namespace tfdiag {

// One PS as the judge compares it: its slowdown (slow-ps-host's figure, 0 when it has none),
// voluntary context switches and ops per second (< 0 unknown), busy share (%).
struct PsLinkFigures {
  std::string task;
  double slowdown = 0;
  double voluntary_per_s = -1, ops_per_s = -1;
  double busy_pct = 0;
};

// The judge on per-PS figures (rows in any order): the indexes of the PS that fire, with each
// one's blocking ratio (its voluntary switches per op over the other PS's median) in *ratio
// (parallel to the result). Thresholds as in the rule (min_ps, min_slowdown, min_blocking_ratio).
std::vector<size_t> JudgeSlowPsLink(const std::vector<PsLinkFigures>& ps, double min_ps,
                                    double min_slowdown, double min_blocking_ratio,
                                    std::vector<double>* ratio);

// The rule over a capture: one finding per PS JudgeSlowPsLink fires on, from the PS timelines and
// the live samples of their processes; none without live samples (said in Not judged).
std::vector<Finding> RunSlowPsLink(const AnalysisInput& in, const Rule& rule);

// The PS's link at the other PS's bandwidth (see above). `plan.what` empty (`plan.why` says so)
// when the finding names no task of the capture with a slowdown over 1.
FixPlan SlowPsLinkFix(const AnalysisInput& in, const ReplayModel& m, const Finding& f,
                      const Rule& rule);

// slow-ps-host on a PS that slow-ps-link names has the same evidence (the slowdown) and the
// link is its cause: its figures join the link finding's (or, in a group, that PS's object's:
// "also: slow-ps-host: <label>") and the PS leaves the slow-ps-host finding, which goes when no
// PS is left and becomes the last PS's finding when one is; one finding per cause. Runs after
// grouping (analyzers/grouping.h).
void FoldSlowHostIntoLink(std::vector<Finding>* findings);

}  // namespace tfdiag
