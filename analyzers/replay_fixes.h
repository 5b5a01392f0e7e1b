// The replayed fixes that change transfers or the PS count (issue 29): oversharding and
// gather-on-worker (the RecvTensor count and bytes the fix removes), idle-ps and ps-worker-ratio
// (the PS count the finding suggests). Each turns a finding and its evidence (the step graph's
// wait causes, the capture's variables and tensor sizes) into a Fix for ReplayMedianStep
// (analyzers/replay.h). Thread-safety: pure functions.
#pragma once

#include <string>

#include "analyzers/replay.h"

namespace tfdiag {

// What a transfer or PS-count fix changes, for one finding.
struct FixPlan {
  Fix fix;
  std::string what;  // the change, for Impact::why ("" when none could be modelled)
  std::string why;   // when `what` is "": why the evidence cannot model the fix ("" generic)
};

// The plan for finding `f` of rule oversharding, gather-on-worker, idle-ps or ps-worker-ratio;
// std::nullopt-like empty plan (what and why "") for other rules or a capture without worker
// steps. `m` is the job's replay model (BuildReplayModel).
//  - oversharding: each over-partitioned variable cut to one part per PS
//    (fixed_size_partitioner(num_ps)); each worker's receive time scales by the share of its
//    waits that the parts' arrival ended times (1 - parts after / parts before): small parts
//    cost per transfer, and the bytes stay.
//  - gather-on-worker: the gathers move beside their tables (embedding_lookup): each worker's
//    receive time loses the share of its waits the tables' arrival ended, times
//    (1 - rows' bytes / tables' bytes), from show_memory sizes (none: not modelled, said why);
//    the gather time leaves the worker's compute and lands on the PS holding each table.
//  - idle-ps: the idle PS removed, their work spread over the others.
//  - ps-worker-ratio: the PS count the finding suggests ("suggested PS count"), all PS work
//    spread evenly; not modelled when a hot PS explains the load (hot-ps's fix, said why).
FixPlan PlanTransferOrPsFix(const AnalysisInput& in, const ReplayModel& m, const Finding& f);

}  // namespace tfdiag
