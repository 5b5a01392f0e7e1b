// The trust gates that withhold a prediction of ComputeImpacts (analyzers/replay_impact.cc), and
// the saturated PS's bounds on it, moved out of replay_impact.cc as they were. Each gate returns
// the reason the prediction is withheld, "" where it passes. Internal to the replay (namespace
// replay_detail); the public API is analyzers/replay.h. Thread-safety: pure functions, but for
// WithheldByReceiveLink's cache (one per ComputeImpacts call).
#pragma once

#include <string>
#include <vector>

#include "analyzers/replay.h"
#include "analyzers/replay_impact_job.h"

namespace tfdiag::replay_detail {

// The gates before the fix is replayed on `r`: the replay of the capture as is off the step by
// more than kMaxPredictedBaselineMiss (1), the wait the PS model does not explain over
// kMaxUnexplainedShare (2), the transfers held fixed over kMaxFixedTransferShare (3), and the
// queues-alone replay's guards for a fix adding PS (kReplacedWaitShare).
std::string WithheldBeforeReplay(const ReplayModel& m, const ImpactJob& job, const ImpactReplay& r,
                                 const Fix& fix);

// True where gate (3)'s share would withhold `fix` on `r` (its transfers held fixed over
// kMaxFixedTransferShare; gate (3) also spares a fix that cuts receive time) but the fix removes
// SyncReplicasOptimizer from
// the synchronous job `m` (Fix::to_async): the transfers held fixed are then the barrier's burst,
// each worker pulling with every other, which asynchronous workers spread out, so held as measured
// they lengthen the predicted step, not shorten it. The prediction is made, at most medium
// (ImpactWeakReasons says why). Session 52, spent sets (indep report25-33 and
// tune2, gen2 report27-29, gen3 report26-28): 7 such predictions newly made, +9%, -2%, +15%,
// +11%, +3%, +4%, -1% off their twins (gen2 6220, gen3 6113, 6128, 6303, 6319, indep 41004,
// tune2 3004); nothing else moved.
bool HeldTransfersOnceAsync(const ReplayModel& m, const ImpactReplay& r, const Fix& fix);

// True where `fix` only prefetches workers (Fix::prefetch_only) that each pull beside their
// input (ReplayModel::Worker::pull_beside_input): their pulls leave at the step's start before
// and after it, so the transfers the replay holds fixed keep their timing and gate (3) of
// WithheldBeforeReplay does not withhold (gen2 report29 6221: the input hid a 4.7 ms transfer,
// 25% of the step; prefetch predicted -3%, its twin +1%).
bool KeepsPullTiming(const ReplayModel& m, const Fix& fix);

// True where WithheldBeforeReplay withholds by gate (2): the replay of the capture as is within
// kMaxPredictedBaselineMiss, and more than kMaxUnexplainedShare of the step is wait the PS model
// does not explain, for a fix that does not act on that wait itself. A prediction that does not
// replay the queues (the PS load's spread, ps_count_spread.h) may stand in where it holds; gate
// (3) and the queues-alone guards, which weigh the replay's held transfers, are not its checks.
bool UnexplainedGate(const ImpactReplay& r);

// Gate (4): a PS's receive link, which the fix leaves as it is, busier than `saturated_busy`
// (ImpactRules::saturated_busy, ratio) at the replayed step `after` (ns, on r.model's scale).
// `recv_shares`: each PS's receive busy share (m.ps's order), -1 not read yet; read here as
// needed and kept for the next finding.
std::string WithheldByReceiveLink(const AnalysisInput& in, const ReplayModel& m,
                                  const ImpactReplay& r, const Fix& fix, double after,
                                  double saturated_busy, std::vector<double>* recv_shares);

// Gate (5): a partition, or a new PS count (Fix::ps_count: every variable re-partitioned)
// replayed over the PS links (which hold the wait as it is), where the wait the PS model does not
// explain is more than kMaxUnexplainedShare of the predicted step (`after`, ns on r.model's
// scale).
std::string WithheldByPartitionWait(const ReplayModel& m, const ImpactJob& job,
                                    const ImpactReplay& r, const Fix& fix, double after);

// A PS saturated (`saturated_busy`, ratio) in the capture that the fix leaves as it is bounds
// im->step_ns_after_fix (ns; set from `after` before the call, raised here): returns the bound in
// words, "; "-led for the `why`, "" where none. A PS the fix leaves as it is that would pass
// `saturated_busy` only at the predicted step makes that step a floor: then *floor_ns (ns) is
// set (0 otherwise), the step where that PS is `saturated_busy` busy. Where PredictsAtSaturation,
// *at_saturation is set and the floor is the prediction, the words its reason for confidence at
// most medium ("" led); otherwise the words are the reason to withhold.
std::string BoundBySaturatedPs(const AnalysisInput& in, const ReplayModel& m, const Fix& fix,
                               double saturated_busy, const ImpactReplay& r, double after,
                               Impact* im, double* floor_ns, bool* at_saturation);

// Whether a fix after which a PS it leaves as it is saturates is predicted at that PS's saturation
// point (BoundBySaturatedPs's floor): where the unexplained share the replay's gate weighs
// (`unexplained`: ImpactReplay::unexplained_here, 0 for a fix replayed with no waits held) is at
// most kMaxUnexplainedShare, and the capture is one the replay can predict from
// (EnoughToPredict). On the spent pools (session 60: indep report17 and 25-38, gen2 report28-30,
// gen3 report12 and 27-29), 17 of 18 such fixes' twins landed within 25% of that point (12 within
// 10%), from 15% under it to 21% over, one 46% over (gen3 report12 2925: 16 PS served out of
// arrival order, each step waiting on all of them); gen3 2918 (81% of its step unexplained, its
// twin 2.06x the floor) is refused. Not for a slow host's fix
// (Fix::host_speedup): the speed it restores is read from the PS's parts (ps_host_speed.h), and a
// hot PS's parts read slow are not a slow host (gen2 report30 6030, spent: a hot ps:0 read 15.5x
// slow, predicted at the saturation point of another PS 69% under its twin); withheld as before.
bool PredictsAtSaturation(const ReplayModel& m, const Fix& fix, double unexplained);

// The same floor for a PS whose work the fix adds to (FixPlan::busy_floor_ns: sync -> async, its
// applies once per push): where the predicted step (im->step_ns_after_fix, ns) is under the
// plan's floor, sets *floor_ns to it and returns the words as BoundBySaturatedPs does; "" (and
// *floor_ns, *at_saturation and *im untouched) where the floor does not bind. *at_saturation as
// PredictsAtSaturation says, but not where the floor is over the step as is (im->step_ns) or the
// PS's threads exceed the cores fitted from the ops' slowdown (ThreadsOverFittedCores): withheld
// there, the floor the most the fix buys, im->floor_from saying so.
std::string BoundByBusierPs(const ReplayModel& m, const Fix& fix, const FixPlan& plan,
                            const ImpactReplay& r, Impact* im, double* floor_ns,
                            bool* at_saturation);

// The printed range about a step predicted at a PS's saturation point: the twins' spread above
// (PredictsAtSaturation), ratios of the predicted step.
inline constexpr double kSaturationLow = 0.85, kSaturationHigh = 1.25;

}  // namespace tfdiag::replay_detail
