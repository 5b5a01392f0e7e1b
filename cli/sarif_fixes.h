// The SARIF fixes of `tfdiag analyze -f sarif`: for each finding on a manifest, the edit
// `tfdiag fix` makes for that finding alone (actions/k8s_fix.h), as whole lines replaced.
// Thread-safety: pure function.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "analyzers/finding.h"
#include "report/sarif_report.h"

namespace tfdiag {

// At most this many findings get a fix computed (each parses its file again).
inline constexpr size_t kMaxSarifFixes = 500;

// Fixes for the per-object `findings` (UngroupFindings) whose subject lies in one of `files`
// (file name as given -> path to read). A finding whose fix needs a choice (--cpus, --memory) or
// changes nothing gets none; unreadable files are skipped (the report was made from them).
SarifFixes ManifestSarifFixes(const std::vector<Finding>& findings,
                              const std::map<std::string, std::string>& files);

}  // namespace tfdiag
