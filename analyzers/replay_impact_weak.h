// The evidence behind one replayed prediction, weighed for its confidence (moved out of
// analyzers/replay_impact.cc's ComputeImpacts as it was). Internal to the replay (namespace
// replay_detail); the public API is analyzers/replay.h. Thread-safety: a pure function.
#pragma once

#include <string>

#include "analyzers/replay.h"
#include "analyzers/replay_impact_job.h"

namespace tfdiag::replay_detail {

// `weak`: the reasons, "; "-separated, that hold the prediction below high ("" none); `enough`:
// the capture has enough of the job to predict from (at least 3 steps per worker, steps of 1 ms
// or more), else the confidence is low whatever `weak` says.
struct ImpactConfidence {
  std::string weak;
  bool enough = false;
};

// The reasons for the prediction `im` (its step_ns and step_ns_after_fix set, ns) of `fix`
// (`plan` the finding's FixPlan) replayed as `r` on `job`: `sensitivity` the part ops' fixed
// cost's move of the prediction (ratio), `split_rates` the workers' split rates once asynchronous
// and `link_weak` the PS links' check at the predicted step (LinkCheck::weak), "" none.
ImpactConfidence ImpactWeakReasons(const AnalysisInput& in, const ReplayModel& m,
                                   const ImpactJob& job, const ImpactReplay& r, const Fix& fix,
                                   const FixPlan& plan, const Impact& im, double sensitivity,
                                   const std::string& split_rates, const std::string& link_weak);

}  // namespace tfdiag::replay_detail
