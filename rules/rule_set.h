// The rule set: what each rule checks, with which thresholds, and how to fix what it finds.
//
// Rules are data (rules/default.rules.json, compiled into the binary; schema "tfdiag.rules/1").
// Thresholds live there and nowhere else. Every loader error names the source, the rule id and
// the field, e.g. "my.rules.json: rule 'hot-ps': params.min_ratio_to_median.value: expected a
// number". Thread-safety: plain values.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace tfdiag {

enum class Severity { kInfo = 0, kLow, kMedium, kHigh, kCritical };

std::string_view SeverityName(Severity s);  // "info", "low", "medium", "high", "critical"
// Parses a severity name. Errors: kUsage listing the accepted names.
StatusOr<Severity> ParseSeverity(std::string_view name);

// One numeric threshold of a rule, with its unit ("ratio", "percent", "count", "bytes", ...).
struct RuleParam {
  std::string name;
  double value = 0;
  std::string unit;
  std::string doc;
};

struct Rule {
  std::string id;        // "hot-ps"
  std::string analyzer;  // registry name of the analyzer that evaluates it
  Severity severity = Severity::kMedium;
  bool enabled = true;
  std::string title;      // one line
  std::string checks;     // what the rule looks at, in a sentence or two
  std::string evidence;   // which records it needs (timeline ops, edges, bundle samples, ...)
  std::string rationale;  // why this matters, with numbers from the sources
  std::string fix;        // the fix, with TF1/TF2 snippets
  std::vector<std::string> references;
  std::vector<RuleParam> params;

  // The value of parameter `name`; the loader guarantees every parameter an analyzer reads
  // exists (RuleSet::Validate), so a missing one is a bug and returns `fallback`.
  double Param(std::string_view name, double fallback = 0) const;
  const RuleParam* FindParam(std::string_view name) const;
};

struct RuleSet {
  std::string version;
  std::vector<Rule> rules;

  const Rule* Find(std::string_view id) const;
  Rule* Find(std::string_view id);
};

// Parses a complete rule set document. Errors: kInvalidInput naming source, rule and field.
StatusOr<RuleSet> ParseRuleSet(std::string_view json, std::string_view source);

// The built-in rule set (rules/default.rules.json at build time).
StatusOr<RuleSet> DefaultRuleSet();

// Applies a user rules file: with "replace": true it replaces the set; otherwise each entry
// overrides the rule with the same id field by field (params merge by name, and a param the rule
// does not have is an error) or, with all fields given, adds a new rule.
Status ApplyRulesFile(RuleSet* set, std::string_view json, std::string_view source);

// Disables the rule `id`. Errors: kUsage if there is no such rule.
Status DisableRule(RuleSet* set, std::string_view id);

}  // namespace tfdiag
