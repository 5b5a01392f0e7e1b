// gather-on-worker: Gather/GatherV2/ResourceGather runs on a worker on a PS variable received whole
// (a _S<N> input), instead of on the PS that holds it (docs/rules/gather-on-worker.md).
// Thresholds: rules/default.rules.json.
#pragma once

#include <vector>

#include "analyzers/analysis.h"

namespace tfdiag {

std::vector<Finding> RunGatherOnWorker(const AnalysisInput& in, const Rule& rule);

}  // namespace tfdiag
