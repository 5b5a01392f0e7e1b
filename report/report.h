// Rendering an analysis: the text report (for people) and the JSON document (for machines).
//
// JSON schema "tfdiag.analysis/1" (documented in docs/json.md): top-level keys schema, tool,
// inputs, cluster, tasks, ps_load, edges, import, horovod, findings, rules. Field names never
// change within a schema version; units are in the key names (_ns, _us, _bytes, _pct).
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "analyzers/analysis.h"
#include "core/capture.h"
#include "core/status.h"

namespace tfdiag {

struct TextReportOptions {
  bool color = false;    // ANSI colours (on a TTY, unless NO_COLOR is set)
  int max_op_types = 4;  // op types listed per task
  // Prose (summaries, impact, fix, waits, notes) wrapped at this column with a hanging indent;
  // 0: one line each (docs/report.md: analyze wraps at kProseColumns on a terminal).
  size_t width = 0;
  // analyze --brief (docs/report.md): Fix first, one line per finding and Not judged only.
  bool brief = false;
};

std::string RenderText(const Capture& c, const AnalysisResult& r, const TextReportOptions& o);

// The versioned JSON document. `pretty` indents it. Non-finite numbers are written as null.
// `prometheus` is the "prometheus" section as JSON (an object; analyze --prometheus), written
// as is; empty: the key is null, so every top-level key is always present (docs/json.md).
// Errors: kInternal when the JSON writer refused a value (never an invalid document).
StatusOr<std::string> RenderJson(const Capture& c, const AnalysisResult& r, bool pretty,
                                 std::string_view prometheus = {});

constexpr const char* kAnalysisSchema = "tfdiag.analysis/1";

}  // namespace tfdiag
