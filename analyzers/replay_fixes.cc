#include "analyzers/replay_fixes.h"

#include <fmt/format.h>

#include "analyzers/op_names.h"
#include "analyzers/step_graph.h"

namespace tfdiag {

std::string_view VariableOf(std::string_view tensor) { return StripRead(InputNode(tensor)); }

WaitShare WaitsEndedBy(const AnalysisInput& in, uint32_t task,
                       const std::function<bool(std::string_view)>& pick) {
  WaitShare s;
  s.task = task;
  for (const WaitCause& w : in.graph->WaitCausesOf(task)) {
    s.all_ns += double(w.wait_ns);
    if (w.tensor != 0 && pick(VariableOf(in.capture.Str(w.tensor)))) {
      s.picked_ns += double(w.wait_ns);
    }
  }
  return s;
}

std::string MiB(double bytes) { return fmt::format("{:.1f} MiB", bytes / 1048576.0); }

std::vector<std::string> FindingSubjects(const Finding& f) {
  std::vector<std::string> out;
  for (const FindingObject& o : f.objects) out.push_back(o.subject);
  if (out.empty()) out.push_back(f.subject);
  return out;
}

}  // namespace tfdiag
