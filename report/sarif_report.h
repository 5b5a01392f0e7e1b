// SARIF 2.1.0 (OASIS Static Analysis Results Interchange Format,
// https://docs.oasis-open.org/sarif/sarif/v2.1.0/sarif-v2.1.0.html) for code review and CI: one
// run whose tool.driver.rules[] are the rules that ran (id, title, checks, fix, default level)
// and whose results[] are the findings, one per object (grouped findings are split, so each
// points at its own line): ruleId, ruleIndex, level (critical/high -> error, medium -> warning,
// low/info -> note), message.text (the object's summary and the fix), and for findings on a
// manifest a location: artifactLocation.uri (the file as given, percent-encoded) and
// region.startLine (the container, replica spec or pod template the finding is about). GitHub
// code scanning and GitLab read this shape. A result whose fix the caller computed (`fixes`,
// from tfdiag fix) carries it as fixes[0]: one artifactChange replacing whole lines of its file.
// Thread-safety: pure function.
#pragma once

#include <map>
#include <string>

#include "analyzers/analysis.h"
#include "core/status.h"
#include "rules/rule_set.h"

namespace tfdiag {

// A fix as SARIF's replacement: lines [start_line, start_line + deleted_lines) of the finding's
// file replaced by `inserted` (whole lines with their line breaks; deleted_lines 0: inserted
// before start_line).
struct SarifFix {
  int start_line = 1;  // 1-based
  int deleted_lines = 0;
  std::string inserted;
};
// Fixes by "<rule id> <subject>" of a per-object finding (UngroupFindings).
using SarifFixes = std::map<std::string, SarifFix>;

// The SARIF log for `r` (analysed with `rules`), with `fixes` where given; `pretty` indents it.
// Errors: kInternal when the JSON writer refused a value.
StatusOr<std::string> RenderSarif(const AnalysisResult& r, const RuleSet& rules, bool pretty,
                                  const SarifFixes* fixes = nullptr);

}  // namespace tfdiag
