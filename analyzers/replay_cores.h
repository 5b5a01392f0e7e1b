// Whether a PS's threads outnumber its cores, from the capture alone (issue 44): the same op
// (the same node, step after step) takes longer when more of the PS's ops run at once. With c
// cores and n ops running, each op progresses at min(1, c/n) of its speed alone, so each op's
// duration d relates to the mean number of the PS's ops running during it, n, as
// d = work * max(1, n / c). FitPsCores picks the c (1 .. the most ops seen at once) that
// explains the durations best, in log space, each node's work its own; it is evidence the
// replay's model is not fitted to, and it turns each op's duration back into its work.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "analyzers/analysis_input.h"
#include "analyzers/replay.h"

namespace tfdiag {

// One PS's ops as the fit sees them.
// Receives (IsRecvOpType) that are waits on its link (replay_concurrency.h ReceivesAreWaits, left
// out of the replay's demand) are left out of everything: the ops running at once, the fit,
// work_ns and op_ns, so work_ns / op_ns scales that demand over the same ops; receives that held
// its threads count as ops.
struct PsOpLoad {
  double work_ns = 0;    // the ops' time with the fitted cores: sum of d / max(1, n / cores)
  double op_ns = 0;      // the ops' measured time (sum of d)
  double max_level = 1;  // the most ops running at once, averaged over an op's life
  int cores = 0;         // the fitted cores; 0 when the ops never ran at once for long enough
                         // to tell (no node seen at two levels of load), or explain too little
  double fit_gain = 0;   // share of the log-duration variance the slowdown explains, [0, 1]
  // Where no cores are fitted (cores 0) but nodes were seen at two levels of load: the fewest
  // cores the durations allow, the least c whose slowdown leaves at most kMaxUnslowedError times
  // the residual of no slowdown at all (ops that ran k at once as fast as alone show at least k
  // cores); 0 where not seen. What a fix adding PS leaves each PS of the job (ReplayModel::
  // ps_min_cores).
  int min_cores = 0;
  // With FitPsCores' cut_lock_waits, applies that waited on their variable's lock
  // (analyzers/apply_locks.h): the waits (ns, summed) are cut from those ops before the fit, so
  // op_ns and work_ns leave them out (a waiting apply holds a thread but no core); locked_ns is
  // the locked nodes' applies' time less their waits. 0 without.
  double lock_wait_ns = 0, locked_ns = 0;
};

// FitPsCores' bar for PsOpLoad::min_cores: a slowdown at c cores that leaves more than this
// times the residual variance of no slowdown is one the durations rule out.
inline constexpr double kMaxUnslowedError = 1.25;

// The fit for the ops of PS `t` (each op's node name its group; ops of 0 duration skipped;
// nodes whose ops all last at most the timeline's resolution, 2 us, do not vote; an apply that
// waited on its variable's lock counts from the end of the apply before it). Where `t`'s own
// ops do not tell its cores (PsOpLoad::cores 0) and `job_cores` > 0 (the cores the job's other
// PS showed: one PS spec for all PS), work_ns is its ops' time at job_cores. Receives that are
// waits on the PS's link (replay_concurrency.h ReceivesAreWaits) are left out entirely.
// Memory: the task's ops (two time points each).
// With `cut_lock_waits`, the applies' waits on their variable's lock (apply_locks.h) are cut from
// their ops first (PsOpLoad::lock_wait_ns, locked_ns); without, the ops are taken as timed.
PsOpLoad FitPsCores(const Capture& c, const TaskStats& t, int job_cores = 0,
                    bool cut_lock_waits = false);

// The job's PS threads and cores (one PS spec for all PS), applied to every PS of `m`
// (BuildReplayModel): ReplayModel::ps_threads is the most of `seen_threads` (each PS's
// AchievedConcurrency), ps_cores the median of `seen_cores` (each PS's own FitPsCores cores; 0
// when none told), ps_min_cores the median of `seen_min_cores` (each PS's PsOpLoad::min_cores
// where its fit told no cores; 0 when none is given or where ps_cores is known), each PS's threads
// at most those cores; a PS whose own ops did not tell its cores gets its demand (pull_ns, push_ns,
// sync_ns, var_ns, locked_ns; its ops' lock waits cut where m->apply_locks) turned into work at the
// job's cores, and its scale (work over op time) in
// `work_share` (per PS task).
void ApplyJobCores(const AnalysisInput& in, const std::vector<int>& seen_threads,
                   const std::vector<int>& seen_cores, ReplayModel* m,
                   std::map<uint32_t, double>* work_share,
                   const std::vector<int>& seen_min_cores = {});

// Whether the job's PS threads outnumber the cores fitted from their ops' slowdown
// (ReplayModel::ps_cores > 0, FitPsCores): the PS ops' work is then inferred from that slowdown,
// and under added load each op runs slower still. Pure.
inline bool ThreadsOverFittedCores(const ReplayModel& m) {
  return m.ps_cores > 0 && m.ps_threads > m.ps_cores;
}

}  // namespace tfdiag
