// SARIF 2.1.0 (OASIS Static Analysis Results Interchange Format,
// https://docs.oasis-open.org/sarif/sarif/v2.1.0/sarif-v2.1.0.html) for code review and CI: one
// run whose tool.driver.rules[] are the rules that ran (id, title, checks, fix, default level)
// and whose results[] are the findings, one per object (grouped findings are split, so each
// points at its own line): ruleId, ruleIndex, level (critical/high -> error, medium -> warning,
// low/info -> note), message.text (the object's summary and the fix), and one location with a
// physicalLocation, as GitHub code scanning requires of every result
// (https://docs.github.com/en/code-security/code-scanning/integrating-with-code-scanning/sarif-support-for-code-scanning):
//   - a finding on a manifest or pod list: that file and the startLine of the container, replica
//     spec, pod template or pod the finding is about;
//   - a finding from a trace, profile or bundle: the first of those inputs (SarifInputs::traces),
//     startLine 1, beside a logicalLocation naming the task;
//   - a finding with no file behind it (`analyze --prometheus`): the instant query that found
//     the job's pods, "api/v1/query?query=<PromQL, percent-encoded>" relative to the base
//     "PROMETHEUS" (the server's URL without credentials, query or fragment, ending in '/'),
//     startLine 1, also with the task, its artifactLocation.description naming the server and
//     the PromQL; without the query, the placeholder SarifInputs::placeholder
//     ("prometheus/<job>");
//   - an input read from standard input ("-", /dev/stdin, /dev/fd/0, /proc/self/fd/0): the
//     placeholder "stdin", and no fixes[] (there is no file to edit).
// artifactLocation.uri is always relative (percent-encoded) with a uriBaseId that
// run.originalUriBaseIds sets to an absolute URI: "%SRCROOT%" (the working directory) for a path
// under it, however typed (made absolute and normalized first), "INPUT<n>" (its directory) for
// a file elsewhere, "PROMETHEUS" (an http(s) URL) for a Prometheus job's query.
// partialFingerprints["tfdiagSubject/v1"] is the rule and the subject, its file written as that
// base and URI, so it does not change with how the path was typed. No raw bidirectional control is
// left in the log (json::EscapeBidiInJson). tool.driver has name, version and semanticVersion (the
// project's version) and informationUri (CMake's TFDIAG_INFORMATION_URI). A result whose fix the
// caller computed (`fixes`, from tfdiag fix) carries it as fixes[0]: one artifactChange replacing
// whole lines of its file. Thread-safety: pure function (reads the working directory once per
// call).
#pragma once

#include <map>
#include <string>
#include <vector>

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

// Where findings that are not on a manifest point (see above).
struct SarifInputs {
  std::vector<std::string> traces;  // trace, profile and bundle inputs as given, in order
  std::string placeholder;          // a relative path for findings with no input file ("": none)
  // analyze --prometheus: the server's URL and the PromQL that found the job's pods, which
  // describe the placeholder location of the findings that have no file.
  std::string prometheus_url, prometheus_query;
};

// The SARIF log for `r` (analysed with `rules`), with `fixes` where given; `pretty` indents it.
// Without `inputs` (or with neither traces nor a placeholder) a finding that is not on a manifest
// points at the placeholder "tfdiag-analysis".
// Errors: kInternal when the JSON writer refused a value.
StatusOr<std::string> RenderSarif(const AnalysisResult& r, const RuleSet& rules, bool pretty,
                                  const SarifFixes* fixes = nullptr,
                                  const SarifInputs* inputs = nullptr);

}  // namespace tfdiag
