#include "analyzers/analysis_input.h"

#include <utility>

namespace tfdiag {

Finding MakeFinding(const Rule& rule, std::string subject_kind, std::string subject) {
  Finding f;
  f.rule_id = rule.id;
  f.severity = rule.severity;
  f.subject_kind = std::move(subject_kind);
  f.subject = std::move(subject);
  f.fix = rule.fix;
  f.references = rule.references;
  return f;
}

}  // namespace tfdiag
