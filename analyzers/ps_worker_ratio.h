// ps-worker-ratio: workers per PS against the band for the model kind inferred from the trace
// (sparse ~3-5 workers per PS, dense ~1; docs/rules/ps-worker-ratio.md).
#pragma once

#include <string>
#include <vector>

#include "analyzers/analysis_input.h"
#include "analyzers/replay.h"

namespace tfdiag {

// The model kind as inferred from op types: "sparse" when any embedding gather
// (Gather, GatherV2, ResourceGather, ...) or sparse apply (Sparse*Apply*) ran, else "dense".
// `why` receives the op type that decided it, or "no gather or sparse-apply op".
std::string InferModelKind(const Capture& c, std::string* why);

std::vector<Finding> RunPsWorkerRatio(const AnalysisInput& in, const Rule& rule);

// ps-worker-ratio's fix model, as its fix text says: the PS count the finding suggests
// ("suggested PS count"), every variable partitioned over it (Fix::ps_count).
FixPlan PsWorkerRatioFix(const AnalysisInput& in, const ReplayModel& m, const Finding& f,
                         const Rule& rule);

}  // namespace tfdiag
