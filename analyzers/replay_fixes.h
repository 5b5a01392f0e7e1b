// Helpers the fix models of the transfer rules share (oversharding, gather-on-worker; issue 29):
// the share of a worker's waits that the arrival of some variables ended, and the subjects a
// finding names. Each rule's fix model lives in its own file (issue 44 item 5) and returns a
// FixPlan (analyzers/replay.h). Thread-safety: pure functions.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "analyzers/analysis_input.h"

namespace tfdiag {

// The variable a cross-task tensor carries: "dense_1/kernel/part_3/read:0" -> its variable.
std::string_view VariableOf(std::string_view tensor);

// Per worker: its waits (receive + idle, summed over steps, ns) and the part of them ended by a
// tensor whose variable `pick` accepts.
struct WaitShare {
  uint32_t task = 0;
  double all_ns = 0, picked_ns = 0;
  double share() const { return all_ns > 0 ? picked_ns / all_ns : 0; }
};
WaitShare WaitsEndedBy(const AnalysisInput& in, uint32_t task,
                       const std::function<bool(std::string_view)>& pick);

// "12.3 MiB" for `bytes`.
std::string MiB(double bytes);

// The finding's objects' subjects, or its own subject when it has no objects.
std::vector<std::string> FindingSubjects(const Finding& f);

}  // namespace tfdiag
