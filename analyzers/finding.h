// Finding: what a rule concluded, with the evidence behind it and the fix.
// Thread-safety: plain values.
#pragma once

#include <string>
#include <vector>

#include "core/capture.h"
#include "rules/rule_set.h"

namespace tfdiag {

// One figure of evidence: a labelled number with its unit ("us", "ns", "bytes", "%", "count",
// "ratio", "ops/s").
struct Figure {
  std::string label;
  double value = 0;
  std::string unit;
};

struct Finding {
  std::string rule_id;  // "hot-ps"
  Severity severity = Severity::kMedium;
  std::string subject_kind;  // "task", "variable", "op", "job"
  std::string subject;       // "ps:0", "embedding/embedding_weights", "job"
  std::string task;          // the task concerned, when the subject is not a task ("" if none)
  std::string pod, node;     // the task's pod and node when known (bundles, --prometheus), else ""
  std::string summary;       // one line with numbers
  std::vector<Figure> evidence;
  std::vector<std::string> ops;           // node names behind the evidence (capped, largest first)
  TimeNs range_start = 0, range_end = 0;  // time range the evidence comes from (ns), 0/0 if none
  std::string fix;                        // from the rule
  std::vector<std::string> references;
};

}  // namespace tfdiag
