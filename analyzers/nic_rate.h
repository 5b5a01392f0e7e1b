#pragma once
// The NIC bandwidth of a job's tasks, estimated from the capture's answer transfers (issue 44
// item 2: "the network as a resource ... from bytes and transfer times where the capture has
// them"). No profile records a NIC's speed; what it records, per worker's median step, is how
// long the last PS answer took from the PS op that produced it to the worker's compute resuming
// (the step graph's wait that tensor ended), and, where tensors are sized (show_memory,
// RunMetadata), the bytes each PS answers per worker step.
//
// Model: a NIC shared by the transfers crossing it at once (processor sharing), requests
// arriving at rate lambda, each of b bytes, on a link of R bytes/s: the mean time of a transfer
// is (b / R) / (1 - lambda b / R) (the M/G/1 processor-sharing queue's mean response time,
// Kleinrock, "Queueing Systems, Vol. 2", 1976, sec. 4.4; for a single server of rate R shared
// equally by the jobs in service). Solved for R: R = b (1 / T + lambda). It is applied to both
// ends of the last answer: the PS's transmit side (b: that PS's bytes per answer, lambda: the
// answers it sends per second over all workers) and the worker's receive side (b: the bytes all
// PS answer it per step, lambda: its own steps per second); the side that limited the transfer
// gives R, the other less, so each worker's estimate is the larger, and the job's the median
// over the workers, made only when at least half the workers' median steps have a sized answer
// tied to a wait (an op input or DataFlow arrow names it). The measured time includes the link's
// latency, so a transfer of few bytes gives a low R; but R >= b / T + lambda b keeps the bound it
// implies on a PS at least 1 / T answers per second above the rate it already serves.
#include <cstdint>
#include <string>
#include <vector>

#include "analyzers/replay.h"

namespace tfdiag {

struct AnalysisInput;  // analyzers/analysis_input.h

// The estimate: `bytes_per_s` > 0 when at least half the workers' median steps had a sized PS
// answer that ended a wait; `workers` the workers it is the median of; `limited_by_ps` how many of
// them the PS's transmit side gave (the rest: the worker's receive side).
struct NicRateEstimate {
  double bytes_per_s = 0;  // bytes/s, one direction of one NIC
  int workers = 0;
  int limited_by_ps = 0;
};

// `ps_bytes_per_step[t]`: bytes task t (a PS; indexed by Capture::tasks) answers per worker
// step, < 0 unknown (other tasks' entries are ignored). `steps_per_s`: worker steps per second
// over all workers as captured; `num_workers` the workers behind it. Needs in.graph; returns
// bytes_per_s 0 without it or without any usable worker. Not thread-safe across calls on one
// AnalysisInput only as far as the graph is (it only reads).
NicRateEstimate EstimateNicRate(const AnalysisInput& in,
                                const std::vector<double>& ps_bytes_per_step, double steps_per_s,
                                int num_workers);

// Per PS of a ReplayModel (m.ps's order): bytes per worker step out (answers to pulls) and in
// (gradients), from the capture's sized tensors (TaskStats::bytes_out / bytes_in over the
// worker steps). A direction the capture does not size (a TF1 timeline's show_memory sizes a
// PS's answers, not the gradients it receives) carries what the other does: a worker pushes a
// gradient of each variable it pulled, of the variable's (or the gathered rows') shape.
struct NicDemand {
  std::vector<double> out, in;  // bytes per worker step, >= 0
  bool known = false;           // every PS with work has a size in at least one direction
  bool mirrored = false;        // some PS's one direction was taken as the other's
};
// `beside_control`: each PS's bytes out read past the unsized edges of its control-only ops
// (TaskStats::bytes_out_beside_control: an apply's or accumulator's edge to the train_op counts 0
// bytes), as PsNicBytesBesideControl (analyzers/replay_nic_bytes.h) reads them.
NicDemand PsNicBytes(const AnalysisInput& in, const ReplayModel& m, bool beside_control = false);

// Appends one PS's bytes per worker step to `d` (`out`, `in`; negative where the capture does not
// size that direction): a direction without sizes carries the other's (d->mirrored), and a PS
// with work (`busy`) sized in neither direction makes d->known false. PsNicBytes's rule, shared
// with the other readers of the PS's bytes (analyzers/replay_nic_bytes.h).
void AddPsDemand(double out, double in, bool busy, NicDemand* d);

// EstimateNicRate for the job `m` models, with its PS bytes `d` and its captured rate (workers
// over the workers' median step). None (bytes_per_s 0) when `d` is not known, or under
// SyncReplicasOptimizer: every worker pulls at once after the barrier, a burst the estimate's
// steady arrivals do not describe (on the independent suite's sync jobs it read 2.3 and 11 Gb/s
// on links of 10.5 and 26; a burst estimate, workers x b / T, read 27 and 13 Gb/s on tune jobs
// of 25 and 10, but the replay with those links missed both jobs as captured by 11-12%).
NicRateEstimate EstimateJobNicRate(const AnalysisInput& in, const ReplayModel& m,
                                   const NicDemand& d);

// Turns on `m`'s PS links (ReplayModel::link_bytes_per_ns) at `bytes_per_s` per direction, with
// each PS's bytes from `d` (m->ps's order). `as_captured`: what the link explains of the largest
// answer's and gradient's measured transfer (ReplayModel::link_explained_*_ns) is their mean time
// on the links in the replay of the job as captured with nothing held fixed (ReplayLinkTimes:
// the links' own queueing at the captured load), the rest of each transfer (latency, the
// worker's side) is held fixed; otherwise it is the bytes' time on an idle link, b / R.
void SetLinks(const NicDemand& d, double bytes_per_s, bool as_captured, ReplayModel* m);

// Under SyncReplicasOptimizer (m.sync), where EstimateJobNicRate makes no estimate: the bandwidth
// at which the replay of the job as captured, over PS links with nothing held fixed, gives the
// largest answer the median worker's measured answer transfer (every worker pulls at once after
// the barrier, so the burst is the replay's own, not a steady arrival rate's). Bisection over 8
// Mb/s to 8 Tb/s; none (bytes_per_s 0) when `d` is not known, fewer than half the workers have a
// measured transfer, or no bandwidth in that range gives it. `workers`: the workers measured.
NicRateEstimate FitSyncNicRate(const ReplayModel& m, const NicDemand& d);

// The most bandwidth (bytes/s, one direction) an estimate may read and be a NIC's: 400 Gb/s, the
// fastest Ethernet standardised for servers (IEEE 802.3bs-2017, 400GBASE). Above it the transfers'
// time is not the bytes' time on a link (gen3 report14 3326 and 3327, spent: the last answer's
// estimate read 18 and 1.6 Tb/s on 1 and 10 Gb/s links, and made the links explain nothing).
inline constexpr double kMaxNicBytesPerS = 400e9 / 8;

// The job's NIC bandwidth as the replay uses it (predictions and the scaling outlook):
// FitSyncNicRate under SyncReplicasOptimizer, else EstimateJobNicRate; none (bytes_per_s 0)
// where it reads over kMaxNicBytesPerS.
NicRateEstimate JobNicRate(const AnalysisInput& in, const ReplayModel& m, const NicDemand& d);

// With links set (SetLinks): the median worker's measured transfers less what the links explain
// of them (ReplayModel::link_explained_*_ns), the push's at most the answer's (HeldBeyondLinks,
// analyzers/replay_link.h), as a share of the measured step; what the replay still
// holds fixed. 0 without links or a measured step.
double HeldTransferShare(const ReplayModel& m);

// With links set (SetLinks): the median worker's receive wait and tail less what the links
// explain beyond its measured transfers (ReplayModel::link_explained_*_ns, at the captured load),
// as a share of the measured step: the wait the PS queues and links leave unexplained, which the
// unexplained-wait gate weighs for a replay over the links. 0 without workers or a measured step.
double UnexplainedOverLinks(const ReplayModel& l);

// The NIC rate (bytes/s, one direction) the capture's answer transfers show (EstimateNicRate:
// each PS's bytes per worker step, from its bytes served over the workers' steps), 0 when they
// cannot tell: a transfer not sized, no sized answer tied to a wait, or SyncReplicasOptimizer
// (every worker pulls at once after the barrier, a burst the estimate's steady arrivals do not
// describe; the scaling outlook leaves it out for the same reason, analyzers/outlook.cc), or an
// estimate over kMaxNicBytesPerS.
double EstimatedNicBytesPerS(const AnalysisInput& in);

}  // namespace tfdiag
