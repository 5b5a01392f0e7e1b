// ps-colocation: several PS pods on one node (pod lists), or a PS replica type with nothing that
// keeps its pods apart (no podAntiAffinity with topologyKey kubernetes.io/hostname); PS tasks on
// one node share its NIC (docs/rules/ps-colocation.md). Thresholds:
// rules/default.rules.json.
#pragma once

#include <vector>

#include "analyzers/analysis_input.h"

namespace tfdiag {

std::vector<Finding> RunPsColocation(const AnalysisInput& in, const Rule& rule);

}  // namespace tfdiag
