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
#include "analyzers/replay.h"

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

// A PS-count fix (ps-worker-ratio, idle-ps) partitions every variable over `count` PS, as their
// fix texts say: each variable's ops become one per part, count - 1 more of each (the replay's
// count, analyzers/replay_plan.cc). Returns why no prediction can be made, or "": the part ops it
// adds, at kPartOpDispatchNs each, cost more than kMaxPartOpsOverWork x all the PS's measured op
// time per worker step (2: set on the independent suite's tune seeds, where the PS-count
// predictions over that were 10-49% off and those under it within 17%). The prediction then hinges
// on a per-op cost the capture does not show (the PS's NoOps, a few us, are what the replay
// charges; TF's dispatch is several times that), and on the PS's cores, which a lightly loaded PS
// does not show either (independent suite, tune seeds: 2 -> 13 PS over 0.05 ms of PS work per
// worker step predicted -1%, its twin -99%).
inline constexpr double kMaxPartOpsOverWork = 2.0;
std::string PartOpsOutweighWork(const ReplayModel& m, int count);

// A PS-count fix to `count` PS, fewer than the capture's m.ps: the PS left take the requests and
// the traffic of those removed. The replay serves each PS's requests in arrival order and holds
// each transfer at its measured time (m.link_bytes_per_ns == 0: no NIC model), which the
// independent suite shows to be optimistic once load concentrates: on its tune seeds, 13 of 17
// reductions were predicted faster than their twins, 6 by 10-45% (12 -> 3 PS: -3% predicted,
// -49% real), and the NIC's share did not tell them apart (2-11% estimated NIC utilisation after
// the fix on the worst). Returns the reason no prediction is made; "" for more PS, or where the
// replay models the NICs.
std::string FewerPsNotModelled(const ReplayModel& m, int count);

}  // namespace tfdiag
