// slow-ps-host: one PS runs the same kind of work slower than the others while its load does
// not explain it: its host is slow (docs/rules/slow-ps-host.md; issue 44 item 2). Per PS, the
// time per op per byte of each variable whose size a show_memory snapshot gives
// (TaskStats::variables: op time / ops / bytes), its op-time weighted median over the PS's
// variables, taken without the slowdown of ops sharing too few cores where FitPsCores
// (analyzers/replay_cores.h) shows the cores. A PS fires when its rate is >= min_slowdown x the
// median of the other PS's rates and, where the cores are not shown, still >= min_slowdown x
// after dividing by the ratio of its mean ops at once (op time / busy time) to the other PS's,
// at least 1: the most that sharing any number of cores can slow its ops more than theirs. Severity
// is the rule's, LOW when the slow PS is busy under min_busy_pct of the capture. The finding's
// evidence carries "slowdown" (ratio), which the replay's fix model reads (the PS's op times
// divided by it: the task on a host at the other PS's speed). Pure function of its input;
// thread-safe.
#pragma once

#include <vector>

#include "analyzers/analysis_input.h"
#include "analyzers/replay.h"

namespace tfdiag {

std::vector<Finding> RunSlowPsHost(const AnalysisInput& in, const Rule& rule);

// The slowdown figure of a slow-ps-host finding (its "slowdown" evidence, >= 1), or 0 when `f`
// has none.
double SlowPsHostSlowdown(const Finding& f);

// slow-ps-host's fix model (the task on another node): each slow PS's op times divided by the
// slowdown in its evidence (Fix::host_speedup: the task on a host at the other PS's speed).
FixPlan SlowPsHostFix(const AnalysisInput& in, const ReplayModel& m, const Finding& f,
                      const Rule& rule);

}  // namespace tfdiag
