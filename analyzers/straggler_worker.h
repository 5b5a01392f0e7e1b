// straggler-worker: workers whose median step time is an outlier against the other workers'.
// In asynchronous training the findings are LOW where the stragglers together cost the job
// under async_min_loss_pct of its steps/s (a straggler slows only itself; the figure is in the
// evidence); workers under min_ratio but at async_mild_min_ratio or over are reported LOW where
// together they cost the job async_min_loss_pct (their figure under its own label).
// Thresholds: rules/default.rules.json.
#pragma once

#include <vector>

#include "analyzers/analysis_input.h"
#include "analyzers/replay.h"

namespace tfdiag {

std::vector<Finding> RunStragglerWorker(const AnalysisInput& in, const Rule& rule);

// straggler-worker's fix model: the slow workers at the median input and compute of the workers
// it does not name (Fix::median_workers); judged on the job's throughput in an asynchronous job
// (FixPlan::throughput), where a straggler slows only itself.
FixPlan StragglerWorkerFix(const AnalysisInput& in, const ReplayModel& m, const Finding& f,
                           const Rule& rule);

}  // namespace tfdiag
