// What-if replay over the step graph (design.md, "Shapes for what comes next"): a small
// event-driven simulation of the captured job, run once as captured and once with a fix applied;
// the predicted step is the measured median step times the ratio of the two replays, so what the
// model leaves out cancels.
//
// The model, per worker step (medians over the worker's captured steps, analyzers/step_graph.h):
// the exposed input time I (input ops inside compute gaps), then one request to every PS that
// worked in the capture, served by that PS in arrival order (FIFO) on as many threads as the
// trace shows its ops running at once, with a demand of the PS's captured busy time per worker
// step; the worker resumes when every PS answered, receives for R, then computes for C (the
// step's compute). R is the step's exposed receive time (gaps covered by RecvTensor/_Recv) beyond
// the worker's wait for the PS in the replay of the capture as is: a receive op on the worker
// often spans the PS's service of it (TF's _Recv ends when the tensor arrived), so only what the
// PS answer does not explain (the transfer) is added.
// Queueing at a PS therefore comes out of the replay, not from a formula: a fix that lets
// workers reach a saturated PS sooner buys less than the time it removes.
// Not modelled: CPUs shared between tasks. Each PS serves on threads of its own, so on a host
// whose cores are all taken (several tasks on one machine, or other load) a fix that spreads PS
// work predicts more than it buys (bench/README.md, the live path).
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "analyzers/analysis.h"

namespace tfdiag {

// A change to replay.
struct Fix {
  // hot-ps: the busy time of `variable_ns` per worker step on PS `ps` (a task index) spread
  // evenly over all PS, as fixed_size_partitioner(num_ps) would.
  uint32_t partition_ps = kNoIndex;
  double partition_share = 0;  // share of that PS's busy time the variable accounts for, [0, 1]
  // input-bound: these workers' exposed input time overlapped by prefetch (to 0).
  std::vector<uint32_t> prefetch_workers;
  // dense-apply on embedding: busy time per worker step each PS (task index) no longer spends.
  std::vector<std::pair<uint32_t, double>> ps_demand_cut;
  // straggler: these workers' input and compute at the median worker's.
  std::vector<uint32_t> median_workers;
  // oversharding, gather-on-worker: per worker (task index), the share of its exposed receive
  // time the fix removes, [0, 1].
  std::vector<std::pair<uint32_t, double>> recv_cut;
  // gather-on-worker: per worker, compute per step (ns) that leaves it (the gathers), and per PS
  // the busy time per worker step (ns) the fix adds there (the same gathers, beside the table).
  std::vector<std::pair<uint32_t, double>> compute_cut;
  std::vector<std::pair<uint32_t, double>> ps_demand_add;
  // idle-ps: these PS (task indexes) removed; their busy time spread evenly over the others.
  std::vector<uint32_t> drop_ps;
  // ps-worker-ratio: the PS count after the fix (0: unchanged), every PS's busy time spread
  // evenly over that many PS (variables partitioned over the new count), threads as the median PS.
  int ps_count = 0;
};

// The job as the replay sees it.
struct ReplayModel {
  struct Worker {
    uint32_t task = 0;
    double input_ns = 0, compute_ns = 0;  // medians per step
    double recv_ns = 0;  // median exposed receive time per step beyond the replayed PS wait
  };
  struct Ps {
    uint32_t task = 0;
    double demand_ns = 0;  // busy time per worker step
    int threads = 1;       // most ops seen running at once
  };
  std::vector<Worker> workers;
  std::vector<Ps> ps;
  double measured_step_ns = 0;  // median worker step of the capture
  // PS demands are served this many times slower than their op time (fitted by ComputeImpacts
  // when the replay as is misses the measured step: gaps on a saturated PS between its ops).
  double ps_slowdown = 1;
  int64_t steps = 0;  // worker steps behind the medians
  // SyncReplicasOptimizer (the step graph saw sync-barrier waits, StepNode::sync_ns): every
  // worker's step ends when the slowest replica's does (a barrier per step), so the job's step
  // follows the slowest replica (issue 35).
  bool sync = false;
};

// Builds the model from the capture and its step graph; empty `workers` when the capture has no
// worker steps or no PS.
ReplayModel BuildReplayModel(const AnalysisInput& in);

// Median worker step (ns) of `steps` replayed steps per worker with `fix` applied.
double ReplayMedianStep(const ReplayModel& m, const Fix& fix, int steps = 40);

// The job's step at its throughput (ns): workers / (sum over workers of steps per ns), from
// `steps` replayed steps per worker with `fix` applied. An asynchronous job's workers step
// independently, so a fix to one worker shows in the job's throughput, not in the median step.
double ReplayThroughputStep(const ReplayModel& m, const Fix& fix, int steps = 40);

// Fills Finding::impact of every finding: replayed for hot-ps, input-bound, straggler-worker,
// dense-optimizer-on-embedding, oversharding, gather-on-worker, idle-ps and ps-worker-ratio
// (analyzers/replay_fixes.h); otherwise, or where the evidence cannot model the fix, method
// "none" with the reason. Confidence and severity follow issue 29's rules: HIGH needs a
// predicted saving of >= 20% of the step on >= 3 steps; one step, steps under 1 ms or under 3
// samples lower the confidence and say why.
void ComputeImpacts(const AnalysisInput& in, std::vector<Finding>* findings);

}  // namespace tfdiag
