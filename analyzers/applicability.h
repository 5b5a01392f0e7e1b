// Why a rule could not judge a capture: the data it reads is absent (no PS tasks, too few steps,
// no live samples, no manifest). A rule that could run but found nothing is quiet; one that
// could not run is listed with its reason, so "no finding" is never mistaken for "all is well".
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "analyzers/analysis.h"

namespace tfdiag {

// The reason `rule` (run by analyzer `a`) cannot judge `in`, or "" when it can. Reasons are one
// clause each ("needs 2 PS tasks; the capture has 0"), so rules with the same reason group.
std::string WhyRuleCannotRun(const AnalyzerInfo& a, const AnalysisInput& in, const Rule& rule);

}  // namespace tfdiag
