// k8s-live-mismatch: what a live bundle measured about a task (its CFS CPU limit,
// Capture::processes[].cpu_limit) against what the manifest says for the task's role (the
// container CPU limit): they agree, or the report says they differ (the manifest deployed is not
// the one given, or a LimitRange/admission webhook changed it). Thresholds:
// rules/default.rules.json.
#pragma once

#include <vector>

#include "analyzers/analysis_input.h"

namespace tfdiag {

std::vector<Finding> RunK8sLiveMismatch(const AnalysisInput& in, const Rule& rule);

}  // namespace tfdiag
