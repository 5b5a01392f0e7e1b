// The rule pages docs/rules/<id>.md (what a rule checks, why, evidence, fix, thresholds and where
// they come from, public sources), compiled into the binary at build time like the default rule
// set. `tfdiag rules explain ID` prints them. Thread-safety: read-only static data.
#pragma once

#include <string_view>

namespace tfdiag {

// The Markdown page of the built-in rule `id`, or an empty view when the rule has none (a rule
// added by a --rules file). UTF-8; the pages cite articles by title and documentation by URL.
std::string_view RuleDoc(std::string_view id);

// Number of embedded pages (one per built-in rule).
int RuleDocCount();

}  // namespace tfdiag
