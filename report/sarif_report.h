// SARIF 2.1.0 (OASIS Static Analysis Results Interchange Format,
// https://docs.oasis-open.org/sarif/sarif/v2.1.0/sarif-v2.1.0.html) for code review and CI: one
// run whose tool.driver.rules[] are the rules that ran (id, title, checks, fix, default level)
// and whose results[] are the findings, one per object (grouped findings are split, so each
// points at its own line): ruleId, ruleIndex, level (critical/high -> error, medium -> warning,
// low/info -> note), message.text (the object's summary and the fix), and for findings on a
// manifest a location: artifactLocation.uri (the file as given, percent-encoded) and
// region.startLine (the container, replica spec or pod template the finding is about). GitHub
// code scanning and GitLab read this shape. Thread-safety: pure function.
#pragma once

#include <string>

#include "analyzers/analysis.h"
#include "core/status.h"
#include "rules/rule_set.h"

namespace tfdiag {

// The SARIF log for `r` (analysed with `rules`); `pretty` indents it. Errors: kInternal when the
// JSON writer refused a value.
StatusOr<std::string> RenderSarif(const AnalysisResult& r, const RuleSet& rules, bool pretty);

}  // namespace tfdiag
