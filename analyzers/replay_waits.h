// Where a worker's measured waits lie in its step, for the replay's held waits (issue 44):
// before its compute (a pull wait that no receive op spans: the PS's queue and service of the
// request, when the capture's receive ops span only the transfer) or after it (the step's tail:
// the push and its applies). Internal to the replay (namespace replay_detail); the public API is
// analyzers/replay.h. Thread-safety: pure functions.
#pragma once

#include <cstdint>

#include "analyzers/analysis_input.h"
#include "analyzers/replay.h"
#include "analyzers/step_graph.h"

namespace tfdiag::replay_detail {

// A wait that ends within this share of the step before the step's end is the step's tail (the
// closing op after it: TF's group_deps NoOp, a control receive). Not tuned (a closing op is
// microseconds long).
inline constexpr double kTailEndShare = 0.05;

// The share of worker `task`'s idle time (StepWait::idle_ns) in its median step (the one whose
// waits the step graph keeps) that lies in waits ended by an op (StepWait::step_tail false: a
// wait inside the step, for a pull's answers), [0, 1]; 0 without a kept median step or idle time.
double PullSideIdleShare(const StepGraph& g, uint32_t task);

// Worker `task`'s pull wait that no receive op spans (ns): its measured idle time `idle_ns`
// (median per step) times PullSideIdleShare, where that exceeds its measured receive time
// `recv_ns` (median per step); else 0. A capture whose receive ops span only each answer's
// transfer shows the PS's queue and service of a pull as idle time before the compute, longer
// than the transfer (gen2 report10 2217: 14-27 ms against 3.2 ms of receive; the samples' hot-ps
// demo: 2.7-13.8 ms against 1.7 ms); where the receive ops span the wait (TF's _Recv from the
// request on, the independent suite) the idle time between a step's ops is what remains, a
// fraction of the receive time (indep report12 20020: 2 us against 2.4 ms; gen2 report8 1813,
// its links saturated: at most 116 ms against 1.06 s). The comparison is a structural one, not
// a tuned threshold: the two kinds of capture lie orders of magnitude apart.
double UnspannedPullIdle(const StepGraph& g, uint32_t task, double idle_ns, double recv_ns);

// The median over `m`'s workers of UnspannedPullIdle (each worker's median idle and receive time
// per step in `in.graph`, before any sync wait is taken out), as a share of m.measured_step_ns:
// the pull wait the replay with the waits held makes from the PS queues rather than holding it
// (FitHeldWaits takes at most that out of the held tail); 0 where the receive ops span the wait
// or the capture has no worker steps.
double UnspannedPullShare(const AnalysisInput& in, const ReplayModel& m);

// ReplayModel::Worker::pull_xfer_ns of worker `task` (ns): in its median step, the longest time
// from the last op of a PS's answer (StepWait::last_sent of a wait a PS's tensor ended) to the
// wait's end, at most the wait; 0 without a median step. `in.graph` must be set.
double PullTransfer(const AnalysisInput& in, uint32_t task);

// Marks each unprefetched worker of `m` whose median step in `g` pulled beside its input
// (ReplayModel::Worker::pull_beside_input; analyzers/pull_beside_input.h) and sets its pull
// transfer (Worker::pull_xfer_ns) to at least the median over those workers of the transfer their
// inputs hid. The median over the workers, not each worker's own: a worker's median step may be the
// capture's first, where every worker pulled at once (gen2 report32 6818: 6 of 18 workers' median
// steps were their first, with 21-23 ms on ps:2's NIC against 1.5 ms in the others'). No-op where
// none pulled beside its input, and under SyncReplicasOptimizer (ReplayModel::sync): there the
// barrier releases every worker's pull at once, and the NIC rate fitted to that convoy (nic_rate.h
// FitSyncNicRate) read 1.5 Gb/s off a 1 Gbit/s NIC with the pulls beside the input (gen2 report28
// 6031: its hot-ps partition +31% -> +45% off its twin; 6207's ps-worker-ratio +2% -> +6%), so sync
// jobs keep the pull after the input.
void ApplyPullBesideInput(const StepGraph& g, ReplayModel* m);

}  // namespace tfdiag::replay_detail
