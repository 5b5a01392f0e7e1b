// worker-wait: workers whose ops fill only a small share of their steps (the union of their op
// intervals against the summed step time). The rest of each step is spent waiting: for
// variables and gradients from the task that hosts them (a PS, or in a job without PS a worker
// acting as one), for a synchronous barrier, or for the slowest replica. The finding names where
// the variables live, so the wait points at its cause. Thresholds: rules/default.rules.json.
#pragma once

#include <vector>

#include "analyzers/analysis.h"

namespace tfdiag {

std::vector<Finding> RunWorkerWait(const AnalysisInput& in, const Rule& rule);

}  // namespace tfdiag
