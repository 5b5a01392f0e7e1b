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
// fix texts say: each variable ends with `count` parts, a variable already cut into k parts
// count / k of its ops (PartOpsAdded, analyzers/replay.h: the replay's count too). Returns why no
// prediction can be made, or "": under SyncReplicasOptimizer, the part ops it adds, at
// kPartOpDispatchNs each, cost more than kMaxPartOpsOverWork x all the PS's measured op time per
// worker step (2: set on the independent suite's tune seeds, where the PS-count predictions over
// that were 10-49% off and those under it within 17%). The prediction then hinges on a per-op
// cost the capture may not show (the PS's NoOps, a few us, are what the replay charges where its
// dense variables' ops do not show more, analyzers/op_fixed_cost.h; TF's
// dispatch is several times that, and each part adds its accumulator's ops), and on the PS's
// cores, which a lightly loaded PS does not show either. An asynchronous job's is left to
// ComputeImpacts' checks, which replay the fix at kPartOpDispatchNs per part op (and, where the
// capture does not show the PS's service order and no links are replayed, in a random order;
// kMaxPartOpSensitivity); a count read from a links convoy (ps_links_convoy.h) is not replayed
// per op and has neither check: session 52, on the spent sets (indep report25-33 and
// tune-tune3, gen2 report28-29, gen3 report27-28), the 42 asynchronous predictions this gate had
// withheld that those checks let through were 36 within 10% of their twins and 3 more than 15%
// off (at most 20%); of the 6 synchronous ones made without it, 4 were 16-80% off (gen2 report29
// 6225, 8 -> 16 PS: -80%).
inline constexpr double kMaxPartOpsOverWork = 2.0;
std::string PartOpsOutweighWork(const ReplayModel& m, int count);

// A PS-count fix to `count` PS, fewer than the capture's m.ps: the PS left take the requests of
// those removed. Where the PS run more threads than the cores their ops' slowdown shows
// (m.ps_threads > m.ps_cores > 0), each op runs slower still once the load concentrates (switching
// between more ops than cores), beyond what the capture's lighter load shows: on the independent
// suite's tune seeds (tune, tune2, tune3) such reductions were predicted 12-45% fast (tune2 3006,
// 16 -> 9 PS of 4 threads on 1 core: -45%; 3017, 3018: -30%, -32%), while the 10 reductions on
// PS with cores for their threads (or cores not shown), replayed without the PS links, were
// within 14%. Returns the reason no prediction is made; "" for more PS, or fewer PS with cores for
// their threads. (The NICs: a fewer-PS fix is replayed with transfers held at their measured
// times, never over the links estimated from the capture, and withheld where those are over the
// replay's share of the step; ComputeImpacts, FewerPs.)
std::string FewerPsNotModelled(const ReplayModel& m, int count);

// What a prediction of fewer PS (`count` < m.ps) estimates rather than reads (FixPlan::estimated:
// at most `medium`): the PS left serve more requests at once than the capture shows, whose
// order the replay takes as arrival order (independent suite, tune2 3032: 2 -> 1 PS, -14%
// labelled high without it). "" for more PS.
std::string FewerPsCaveat(const ReplayModel& m, int count);

// The fix moves the PS work onto fewer PS (idle-ps's drop_ps, ps-worker-ratio's lower ps_count).
// ComputeImpacts replays such a fix without the PS links estimated from the capture: with them,
// reductions on the independent suite's tune seeds were 18-43% off (tune2 3036, 12 -> 2 PS:
// -43%; tune3 4013: -22% and +20%), the estimate read at the captured load not carrying over to
// the load concentrated on fewer NICs.
bool FewerPs(const ReplayModel& m, const Fix& fix);

}  // namespace tfdiag
