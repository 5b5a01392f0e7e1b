// What the fuzz targets do after a reader accepts an input, as `tfdiag analyze` does: every rule
// of the built-in set (those disabled by default too) over the Capture, then both reports. The
// text report must render and the JSON report must be one valid JSON document (RapidJSON reads
// it back, iteratively so that depth cannot overflow the stack) with the schema key; anything
// else aborts, which libFuzzer reports as a crash with the input.
#pragma once

#include <rapidjson/document.h>

#include <cstdlib>
#include <string>

#include "analyzers/analysis.h"
#include "core/capture.h"
#include "core/k8s_deployment.h"
#include "report/report.h"
#include "rules/rule_set.h"

namespace tfdiag::fuzz {

// The built-in rule set with every rule enabled; built once (the fuzz targets run on one thread).
inline const RuleSet& AllRules() {
  static const RuleSet rules = [] {
    StatusOr<RuleSet> r = DefaultRuleSet();
    if (!r.ok() || !ValidateRuleSet(*r).ok()) std::abort();
    for (Rule& rule : r->rules) rule.enabled = true;
    return std::move(*r);
  }();
  return rules;
}

// Runs every rule over `c` (with `k8s`, may be nullptr) on one thread and renders the text and
// the JSON (pretty and compact) reports; aborts unless each JSON document parses back whole.
inline void AnalyzeAndReport(const Capture& c, const K8sDeployment* k8s = nullptr) {
  const AnalysisResult r = Analyze(c, AllRules(), k8s, 1);
  for (const Finding& f : r.findings) {
    if (f.rule_id.empty()) std::abort();
  }
  TextReportOptions to;
  const std::string text = RenderText(c, r, to);
  if (text.empty()) std::abort();
  to.color = true;
  (void)RenderText(c, r, to);
  for (bool pretty : {true, false}) {
    const StatusOr<std::string> rendered = RenderJson(c, r, pretty);
    if (!rendered.ok()) std::abort();  // an analysis the report cannot write
    const std::string& json = *rendered;
    rapidjson::Document d;
    d.Parse<rapidjson::kParseIterativeFlag>(json.data(), json.size());
    if (d.HasParseError() || !d.IsObject() || !d.HasMember("schema")) std::abort();
  }
}

}  // namespace tfdiag::fuzz
