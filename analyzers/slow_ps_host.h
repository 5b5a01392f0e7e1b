// slow-ps-host: one PS runs the same kind of work slower than the others while its load does
// not explain it: its host is slow (docs/rules/slow-ps-host.md; issue 44 item 2). Variables are
// compared only with variables of like size on the other PS (within like_size_ratio of each
// other's bytes, sizes from show_memory snapshots: TaskStats::variables): per pair of PS, a
// lower bound on the speed ratio, (time per op of v / time per op of u) / max(1, x_v / x_u)
// (x: bytes; exact when an op's time is proportional to its bytes, never above the ratio when it
// is a fixed cost per op plus a cost per byte), the most over u, the op-time weighted median
// over v; a PS's slowdown is the lower median of its bounds against the other PS (at least
// min_ps - 1 of them; their upper median is in the evidence too: kUpperSlowdownLabel). Op times are
// taken without the slowdown of ops sharing too few cores where FitPsCores
// (analyzers/replay_cores.h) shows the cores. A PS fires when its slowdown is
// >= min_slowdown and, where the cores are not shown, still >= min_slowdown after dividing by
// the ratio of its mean ops at once (op time / busy time) to the other PS's, at least 1: the
// most that sharing any number of cores can slow its ops more than theirs. Severity
// is the rule's, LOW when the slow PS is busy under min_busy_pct of the capture, or where PS end
// at least one of the training tasks' waits per two of their steps (StepGraph's WaitCause rows:
// the answer waited for last, or at a step's tail the apply of the last push) and the slow PS
// ends under 1 / num_ps of those waits' time (each task's waits over its steps' time, the mean
// over the tasks; both shares in the evidence, in %): moving it buys at most the waits it ends
// (session 35, indep report16 24007). The finding's
// evidence carries "slowdown" (ratio), which the replay's fix model reads (the PS's op times
// divided by it: the task on a host at the other PS's speed). Pure function of its input;
// thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "analyzers/analysis_input.h"
#include "analyzers/replay.h"

namespace tfdiag {

std::vector<Finding> RunSlowPsHost(const AnalysisInput& in, const Rule& rule);

// The slowdown figure of a slow-ps-host finding (its "slowdown" evidence, >= 1), or 0 when `f`
// has none.
double SlowPsHostSlowdown(const Finding& f);

// The evidence label of the upper median of the PS's bounds against the other PS (against two,
// the larger: against the other PS that runs fastest), beside "slowdown", their lower median
// (the same figure where one other PS compares).
inline constexpr std::string_view kUpperSlowdownLabel = "slowdown, upper median of its bounds";

// That figure of a slow-ps-host finding (>= its "slowdown"), or 0 when `f` has none.
double SlowPsHostUpperSlowdown(const Finding& f);

// The tasks `f` names (its subject and each object) at the speed of the other PS: each task's
// op times divided by the figure labelled `label` ("slowdown" unless told) of its evidence (or,
// where the PS's parts of a
// partitioned variable measure it lower, that figure: analyzers/ps_host_speed.h PartSlowdowns)
// (Fix::host_speedup, once a task; none at a slowdown of at most 1 or for a subject that is no task
// of `in`). Returns one "ps:1 (2.1x slower)" a task added. Shared by slow-ps-host's and
// slow-ps-link's fix models.
std::vector<std::string> AddHostSpeedups(const AnalysisInput& in, const Finding& f, Fix* fix,
                                         std::string_view label = "slowdown");

// slow-ps-host's fix model (the task on another node): each slow PS's op times divided by the
// slowdown in its evidence (Fix::host_speedup: the task on a host at the other PS's speed).
FixPlan SlowPsHostFix(const AnalysisInput& in, const ReplayModel& m, const Finding& f,
                      const Rule& rule);

}  // namespace tfdiag
