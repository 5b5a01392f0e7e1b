// A PS-count fix where the busiest PS's CPU bounds the job's throughput (issue 44): the capture
// shows it where that PS's op time per worker step x the workers / its threads is about the
// job's mean step (the PS serves the job at the rate the workers get: the throughput identity),
// it is busy nearly all of the capture, the PS share the load evenly (a PS carrying most of it is
// a hot PS, whose fix is a partition, not a count) and the replay with the workers' waits held
// misses the measured step by little. Its queue, not the order it serves it in, then sets the
// step: the workers' waits the FIFO model does not explain one by one are that queue's waits split
// otherwise, and the replay of the PS queues alone (replay_queued_waits.h WithNoWaitsHeld), where
// it reproduces the measured step on its own, is what a fix adding PS replays. Thread-safety: pure
// functions.
#pragma once

#include <string>

#include "analyzers/analysis_input.h"
#include "analyzers/replay.h"

namespace tfdiag {

// A PS's utilisation: its op time per worker step x the workers / its threads / `step_ns`, or
// where larger its locked applies' (ReplayModel::Ps::locked_ns: one at a time) x the workers /
// `step_ns` (ratio; 0 where `step_ns` <= 0).
double PsUtilisation(const ReplayModel& m, const ReplayModel::Ps& p, double step_ns);
// The same with `added_ns` more (or, negative, less) op time per worker step on `p`, its op time
// at least 0 (a fix's Fix::ps_demand_add).
double PsUtilisation(const ReplayModel& m, const ReplayModel::Ps& p, double step_ns,
                     double added_ns);

// The evenness of the PS load: the sum of the PS's utilisations / the busiest's / the PS count
// (ratio, 1 where the PS share it evenly or one PS serves the job; 0 where none works).
double PsLoadEvenness(const ReplayModel& m);

// The limits of the bound (PsCpuBoundLimits, analyzers/replay.h) read from ps-worker-ratio's
// `rule`: cpu_bound_min_util_pct and cpu_bound_max_util_pct (the band of the busiest PS's
// utilisation), cpu_bound_min_busy_pct (its least busy share of the capture),
// cpu_bound_min_evenness_pct (the least PsLoadEvenness, for the bound and for any fix adding PS
// replayed on the PS queues alone, ComputeImpacts) and cpu_bound_max_held_miss_pct (the most the
// replay with the waits held may miss the measured step for the PS queues alone to stand in for
// it); rules/default.rules.json gives each one's source. A param the rule lacks keeps the
// refusing default.
PsCpuBoundLimits PsCpuBoundLimitsOf(const Rule& rule);

struct PsCpuBound {
  bool bound = false;
  double util = 0;       // the busiest PS's utilisation at the job's mean step, ratio
  double busy_pct = 0;   // its busy share of the capture, %
  double evenness = 0;   // sum of the PS's utilisations / the busiest's / the PS count, ratio
  double held_miss = 0;  // the replay with the waits held off the measured step, ratio (signed)
  int threads = 0;       // its threads
  std::string label;     // its task label ("ps:0")
  std::string why_not;   // why no bound is read ("" when one is)
};

// The bound on `m` (BuildReplayModel of `in`); `held_miss` is ReplayBaseline(m).miss. None under
// SyncReplicasOptimizer (kSyncPacesStep).
PsCpuBound ReadPsCpuBound(const AnalysisInput& in, const ReplayModel& m, double held_miss,
                          const PsCpuBoundLimits& lim);

// Why a PS-count replay is refused under SyncReplicasOptimizer.
inline constexpr const char* kSyncPacesStep =
    "SyncReplicasOptimizer: the barrier, not the PS queue alone, paces the step";

}  // namespace tfdiag
