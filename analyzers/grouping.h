// Grouping findings: one finding per rule and cause, listing the objects it covers.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "analyzers/finding.h"
#include "core/capture.h"
#include "rules/rule_set.h"

namespace tfdiag {

// Natural order of subjects: runs of digits compare as numbers ("doc 3" < "doc 11",
// "worker:2" < "worker:10"); otherwise byte order.
bool NaturalLess(std::string_view a, std::string_view b);

// Groups per-object findings (as analyzers return them) by (rule, severity, subject kind,
// cause), keeping the first occurrence's position. A group of one keeps its finding as it was,
// with itself as its only object. A larger group becomes one finding: subject lists the objects
// ("worker:0-31"), the summary says how many of how many ("input-bound on 32 of 32 worker tasks:
// input wait share of step time 29-30%"), evidence gives each shared figure's lowest and highest
// value, and `objects` keeps every finding's own subject, summary and figures.
std::vector<Finding> GroupFindings(std::vector<Finding> findings, const RuleSet& rules,
                                   const Capture& c);

// The inverse view: one finding per object (each object's subject, task, summary, figures and
// ops; the rule's fields from its group), in order. For consumers that judge objects one by one.
std::vector<Finding> UngroupFindings(const std::vector<Finding>& findings);

// How a grouped finding's objects are counted above their list: "3 containers" (manifest
// findings are per container), "2 manifest objects", "32 tasks" (core/plural.h).
std::string ObjectsHeading(const Finding& f);

// The objects' subjects as a list shows them: when every object is in f.object_file, that file
// is named once (returned in *file) and each subject keeps "(doc N): ..." after it, not the
// whole path on every row (issue 39); else the subjects as they are and *file = "".
std::vector<std::string> ObjectSubjects(const Finding& f, std::string* file);

// The finding's subject for a one-line list: a manifest finding's file by its last path
// component ("tfjob.yaml (doc 1): spec..."); other subjects as they are.
std::string ShortSubject(const Finding& f);

}  // namespace tfdiag
