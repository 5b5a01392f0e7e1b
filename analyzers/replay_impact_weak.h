// The evidence behind one replayed prediction, weighed for its confidence (moved out of
// analyzers/replay_impact.cc's ComputeImpacts as it was). Internal to the replay (namespace
// replay_detail); the public API is analyzers/replay.h. Thread-safety: a pure function.
#pragma once

#include <cstdint>
#include <string>

#include "analyzers/replay.h"
#include "analyzers/replay_impact_job.h"

namespace tfdiag::replay_detail {

// A capture with enough of the job to predict from: at least kMinStepsPerWorker steps per worker
// (one may be warm-up) of at least kMinStepNs (1 ms; under it per-op costs the replay leaves out
// weigh more). Under either, a prediction's confidence is low.
inline constexpr int64_t kMinStepsPerWorker = 3;
inline constexpr double kMinStepNs = 1e6;

// EnoughToPredict: `m` has workers, kMinStepsPerWorker steps per worker and a measured median step
// of kMinStepNs or more.
bool EnoughToPredict(const ReplayModel& m);

// `weak`: the reasons, "; "-separated, that hold the prediction below high ("" none); `enough`:
// the capture has enough of the job to predict from (at least 3 steps per worker, steps of 1 ms
// or more), else the confidence is low whatever `weak` says.
struct ImpactConfidence {
  std::string weak;
  bool enough = false;
};

// Appends `reason` to the "; "-separated list `*weak` (the form of ImpactConfidence::weak and of
// ImpactWeakReasons' `replay_weak`).
void AddReason(std::string* weak, const std::string& reason);

// The reasons for the prediction `im` (its step_ns and step_ns_after_fix set, ns) of `fix`
// (`plan` the finding's FixPlan) replayed as `r` on `job`: `sensitivity` the part ops' fixed
// cost's move of the prediction, or the PS service order's where the capture does not show it
// (ReplayModel::order_unseen), whichever is larger (ratio), `replay_weak` what the fix's own
// replays found (the workers' split rates once asynchronous; the sync burst's queue scaled, where
// holding it moves the prediction over 2%), and `link_weak` the PS links' check at the predicted
// step (LinkCheck::weak), "" none.
ImpactConfidence ImpactWeakReasons(const AnalysisInput& in, const ReplayModel& m,
                                   const ImpactJob& job, const ImpactReplay& r, const Fix& fix,
                                   const FixPlan& plan, const Impact& im, double sensitivity,
                                   const std::string& replay_weak, const std::string& link_weak);

}  // namespace tfdiag::replay_detail
