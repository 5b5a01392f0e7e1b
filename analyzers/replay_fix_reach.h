#pragma once
// Which PS a fix reaches, and the saturated PS it leaves as they are (moved out of
// analyzers/replay_impact.cc, which uses them to bound a prediction: issue 44).
#include <cstdint>

#include "analyzers/replay.h"

namespace tfdiag {

// Whether `fix` changes the work of PS `task` (Capture::tasks index): every variable placed anew
// (a PS count), the applies run per push (sync -> async), a partition, a demand cut, the PS
// dropped or its host made faster.
bool TouchesPs(const Fix& fix, uint32_t task);

// Whether `fix` moves the bytes PS `task` receives (its variables placed anew or elsewhere):
// going asynchronous, a faster host or less work per op leave them as they are.
bool MovesPsBytes(const Fix& fix, uint32_t task);

// The share, [0, 1], of PS task `task`'s NIC bytes (answers and gradients) that `fix`'s partition
// moves off it: Fix::partition_bytes where it names the task, else its op time share
// (Fix::partition), else 0.
double PartitionByteShare(const Fix& fix, uint32_t task);

// A PS saturated in the capture: its op time per worker step times the workers, over the
// threads it ran on, is at least ImpactRules::saturated_busy of the measured median step (the
// hot-ps rule's saturated_busy_pct, 90% by default, docs/rules/hot-ps.md). Such a PS already serves
// the job at the rate the capture shows, and the idle time it keeps (a few percent) comes from the
// workers leaving it together and coming back together, not from a lack of requests; a fix that
// leaves its work as it is does not make it serve faster. The replay's FIFO fills those gaps (it
// reaches 100% of the PS's capacity), so without this bound it predicts a saving the job cannot
// have: hot PS plus slow input, prefetch replayed 158.1 -> 137.1 ms where the prefetched twin runs
// 160.2 ms. SaturatedUntouchedPs: the most saturated such PS (its index in m.ps, its utilisation in
// *u), or -1 when every saturated PS is one `fix` changes the work of (TouchesPs; a PS whose work
// only Fix::ps_demand_add changes is judged on its work after that change, and `*changed` (when
// given) is that change, ns per worker step, 0 for a PS whose work the fix leaves as it is);
// `saturated` is the threshold (ImpactRules::saturated_busy), `step_ns` the step its utilisation
// is taken at (the measured one, or the one predicted after the fix).
int SaturatedUntouchedPs(const ReplayModel& m, const Fix& fix, double saturated,
                         double* utilisation, double step_ns, double* changed = nullptr);

}  // namespace tfdiag
