// oversharding: dense variables split into more part_<k> partitions than there are PS tasks, each
// small, so each worker waits on many transfers before a layer can run
// (docs/rules/oversharding.md). Thresholds: rules/default.rules.json.
#pragma once

#include <vector>

#include "analyzers/analysis_input.h"

namespace tfdiag {

std::vector<Finding> RunOversharding(const AnalysisInput& in, const Rule& rule);

}  // namespace tfdiag
