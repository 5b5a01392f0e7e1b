// The scaling outlook from one profile (issue 44 item 3): the job's predicted throughput at 2x,
// 4x and more times the captured workers, as it is and after `Fix first`, and the worker count
// at which a shared resource saturates: answered before the machines are bought.
//
// The model: the replay of analyzers/replay.h with workers added. Each added worker is a copy of
// the captured median worker (its input, compute, transfers and unexplained wait), and pulls from
// and pushes to every PS the same variables at the same op time per worker step, so each PS's
// service demand per second grows with the workers; a PS serves on its threads (its process's CPUs
// where live samples give them, else the concurrency its ops reached, at least that of the
// busiest-threaded PS of the job: PS tasks are deployed alike); a PS's receives (RecvTensor)
// are left out of its CPU work and threads where the capture shows they hold no thread
// (analyzers/task_stats.h: TaskStats::recv_busy_ns). An asynchronous job's workers step
// independently; under SyncReplicasOptimizer each step waits for the slowest worker, and each PS's
// apply runs once per global step, a dense variable's at its captured time, an embedding's growing
// with the replicas whose rows it aggregates (analyzers/outlook_sync.h), and the burst after the
// barrier that the replay holds fixed grows with the workers (analyzers/outlook_sync_burst.h).
// After `Fix first`, a PS host another finding shows slow (slow-ps-host, ps-cpu-quota) stays slow
// when the fix moves work onto it. Throughput (worker steps per second over all workers) is the
// measured throughput times the ratio of the replays at N and at the captured workers, so what
// the model leaves out cancels as in ComputeImpacts. A PS's NIC: its bandwidth is estimated from
// the capture's answer transfers (analyzers/nic_rate.h JobNicRate: tied to the waits they end, or
// under sync fitted to the replay's burst after the barrier) where they are sized, and the replay
// then runs each PS's answers and gradients over links of that bandwidth shared by the transfers
// crossing them (ReplayModel::link_bytes_per_ns); where it cannot be estimated, 10 Gb/s is assumed
// (kAssumedNicBytesPerS). Either way, per direction, a PS's bytes per worker step (from the
// capture's transfer sizes; a direction without sizes carries the other's) times steps/s may not
// exceed the bandwidth. Each PS's receive link bounds it too, from the share of the capture the
// PS was receiving (analyzers/outlook_links.h RecvLinkCap: sizes and bandwidth not needed;
// workers in a convoy where the replay does not run the links), and
// in an asynchronous job each variable's mutex (use_locking applies, LockCap). Not modelled:
// several PS sharing a node's cores or NIC (each PS is taken to run on a node of its own),
// worker-side limits (added workers bring their own machines). Documented for users in
// docs/scaling.md ("The outlook from one profile"). Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "analyzers/finding.h"
#include "analyzers/link_queue.h"  // kAssumedNicBytesPerS

namespace tfdiag {

struct AnalysisInput;  // analyzers/analysis_input.h
struct ReplayModel;    // analyzers/replay.h
struct ImpactRules;    // analyzers/replay.h

// One worker count of the outlook.
struct OutlookPoint {
  int workers = 0;
  double steps_per_s = 0;  // predicted worker steps per second over all workers, as the job is
  // The same after `Fix first` (Outlook::fix_rule); < 0 when there is no Fix first.
  double steps_per_s_after_fix = -1;
  // Scaling efficiency against the captured count: (steps_per_s / captured steps_per_s) /
  // (workers / captured workers), in [0, ~1].
  double efficiency = 0;
};

// Where scaling stops: the smallest worker count (to within ~3% between the replayed counts) at
// which efficiency falls under kOutlookMinEfficiency, and the resource that limits it.
struct OutlookSaturation {
  int workers = 0;       // 0: efficiency stays at or above the threshold up to checked_up_to
  std::string resource;  // "ps:0 CPU (1 thread)", "ps:1 NIC (estimated 9.8 Gb/s)", "sync barrier"
  // "ps-cpu", "ps-nic" (its bandwidth or its receive link), "ps-lock" (a variable's mutex),
  // "sync-barrier", "other"; "" when workers is 0
  std::string kind;
  std::string task;        // the PS concerned ("ps:0"), "" for a barrier
  double utilisation = 0;  // the resource's busy share at `workers`, [0, 1]
};

// The outlook of one capture.
struct Outlook {
  bool set = false;  // false: not computed (no worker steps or no PS); see `withheld`
  int captured_workers = 0;
  // measured: CapturedThroughput (analyzers/step_graph_throughput.h: each worker's steps/s,
  // summed), else the workers over their median step
  double captured_steps_per_s = 0;
  std::vector<OutlookPoint> points;  // by workers: 1x (captured), 2x, 4x and more
  OutlookSaturation saturates_at;
  OutlookSaturation saturates_at_after_fix;  // workers 0 also when there is no Fix first
  int checked_up_to = 0;                     // the largest worker count replayed
  // The fix applied for steps_per_s_after_fix: the rule and subject of `Fix first` (the trusted
  // prediction that saves the most, as the report's Fix first line), "" when none.
  std::string fix_rule, fix_subject;
  std::string confidence;  // "high", "medium", "low"; "" when withheld
  // Why the confidence is not high, or why nothing was predicted ("" otherwise).
  std::string confidence_why;
  std::string withheld;  // non-empty: no points are given, and why
  // Bounds the capture could not measure and that were assumed, one sentence each.
  std::vector<std::string> assumptions;
  std::string verdict;  // one line: "scales to ~40 workers (ps:0 CPU saturates at 44)"
};

// Efficiency under which scaling has stopped (issue 44: "where scaling falls under 60%
// efficiency"); the scaling-limit rule uses 70% between runs of a measured sweep.
constexpr double kOutlookMinEfficiency = 0.60;

// The outlook of the capture in `in` with `findings` (after ComputeImpacts: `Fix first` is taken
// from their impacts). Replays up to 32x the captured workers (at most 4096, and at most about
// 2e7 PS request services per replay, as ReplaySteps bounds it), then narrows the saturation
// point between two replayed counts. Withheld (Outlook::withheld) when the outlook's replay of the
// capture as is (receives left out as above) misses its measured step by more than 10%. `m` is
// BuildReplayModel(in), the model ComputeImpacts replayed; `rules` gives `Fix first`'s fix model
// (ImpactRules, replay.h).
Outlook ComputeOutlook(const AnalysisInput& in, const ReplayModel& m,
                       const std::vector<Finding>& findings, const ImpactRules& rules);

}  // namespace tfdiag
