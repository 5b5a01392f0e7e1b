// A PS-count fix where the busiest PS's CPU bounds the job's throughput (issue 44): the capture
// shows it where that PS's op time per worker step x the workers / its threads is about the
// measured step (the PS serves the job at the rate the workers get: the throughput identity) and
// it is busy nearly all of the capture. Its queue, not the order it serves it in, sets the step:
// the workers' waits the FIFO model does not explain one by one (a PS serving out of arrival
// order: replay.h UnexplainedWaitShare) are that queue's waits split otherwise, and the replay of
// the PS queues alone (replay_queued_waits.h WithNoWaitsHeld), where it reproduces the measured
// step on its own, is what a fix adding PS replays. Thread-safety: pure functions.
#pragma once

#include <string>

#include "analyzers/analysis_input.h"
#include "analyzers/replay.h"

namespace tfdiag {

// The band of the busiest PS's utilisation (op time per worker step x workers / threads / the
// measured step) read as its CPU bounding the throughput, and the least busy share of the
// capture (TaskStats::busy_pct, %) it must show. Set on gen2 report10 (spent): 2229 (1.03, busy
// 94%: 2 PS named, predicted -13% of the twin, medium; withheld before), 2217 (1.02, 98%: 3 PS
// named, the twin's -60% the best simulated count, predicted +1%, medium: the replay with the
// waits held misses the step by 11%, the queues alone by 2%; withheld before), 2203 (1.10, 98%:
// still withheld, its part ops' cost moving it 68%). On gen2 report4 1014 (8 threads on 1 core,
// the case that kept a fix adding PS off the queues alone on threads of unshown cores: 4 -> 12 PS
// predicted 57% fast) it names 8 PS, predicted -22% of the twin (-60%; 12 PS -71%). Checked on gen2 report9 (2009, 1.13: 15 PS named instead of the band's 12,
// -53% off the twin against -56% before, a PS of one thread the queues alone already replayed),
// gen3 report8-9 and indep report13-14 (no other job changes). Under it, gen3 report9 2318 (0.86,
// busy 82%: 1 -> 3 PS replayed on the queues alone -89% off a twin 4.75x slower) stays refused;
// over it the threads read from the ops' concurrency no longer explain the step.
inline constexpr double kMinCpuBoundUtil = 0.90;
inline constexpr double kMaxCpuBoundUtil = 1.15;
inline constexpr double kMinCpuBoundBusyPct = 90;

struct PsCpuBound {
  bool bound = false;
  double util = 0;      // the busiest PS's utilisation (as above), ratio
  double busy_pct = 0;  // its busy share of the capture, %
  std::string label;    // its task label ("ps:0")
  std::string why_not;  // why no bound is read ("" when one is)
};

// The bound on `m` (BuildReplayModel of `in`): none under SyncReplicasOptimizer (the barrier, not
// the PS queue alone, paces the step).
PsCpuBound ReadPsCpuBound(const AnalysisInput& in, const ReplayModel& m);

}  // namespace tfdiag
