// ps-worker-ratio: workers per PS against the band for the model kind inferred from the trace
// (sparse ~3-5 workers per PS, dense ~1; docs/rules/ps-worker-ratio.md).
#pragma once

#include <string>
#include <vector>

#include "analyzers/analysis_input.h"

namespace tfdiag {

// The model kind as inferred from op types: "sparse" when any embedding gather
// (Gather, GatherV2, ResourceGather, ...) or sparse apply (Sparse*Apply*) ran, else "dense".
// `why` receives the op type that decided it, or "no gather or sparse-apply op".
std::string InferModelKind(const Capture& c, std::string* why);

std::vector<Finding> RunPsWorkerRatio(const AnalysisInput& in, const Rule& rule);

}  // namespace tfdiag
