#pragma once
// The bytes each PS's NIC carries per worker step, for the replay's links (issue 44 item 2), where
// the capture sizes every tensor a PS answers except the control edges of its applies. A TF1
// worker's train_op waits on each apply through a control input (a RecvTensor of the apply's
// dead output, gen3 captures: "<var>/ApplyAdam_S12" among train_op's inputs); that transfer
// carries no tensor of the variable's size, and show_memory never sizes it, so TaskStats::
// bytes_out (every edge sized or none) is unknown on such a PS and the links could not be
// replayed (gen3 report4 1320: 48 workers pulling a 0.9 MB dense kernel from one PS's 10 Gb/s
// NIC, 72% of the step wait the FIFO PS model did not explain, prediction withheld).
#include <string>
#include <utility>
#include <vector>

#include "analyzers/nic_rate.h"
#include "analyzers/replay.h"

namespace tfdiag {

struct AnalysisInput;  // analyzers/analysis_input.h

// PsNicBytes(in, m), with a PS whose only unsized out edges are its applies' control edges
// (an apply, Scatter*, Assign* or accumulator op as the producer: IsControlOnlyOpType) sized from
// its other edges (those counted as 0 bytes: TaskStats::bytes_out_beside_control). Returns
// PsNicBytes's answer where it is known already, or where some PS with work has an unsized edge
// of another op. Pure function.
NicDemand PsNicBytesBesideControl(const AnalysisInput& in, const ReplayModel& m);

// The NIC bandwidth (bytes/s, one direction) a PS's receive link shows, from the PS's own receive
// ops (the gradients arriving): on a link shared by the transfers crossing it (processor
// sharing), the bytes it carried are its rate times the time it carried any, so R = bytes / busy,
// with busy the union of the receives less each one's latency (ReceiveLatency: the shortest
// receive op of any PS, a message of few bytes being its latency, at most 1 ms). Measured on the PS
// whose link is busiest, only where it is busy at least kMinRecvLinkBusy of its receives' span (a
// lightly used link's busy time is mostly latency, misread). `d`: each PS's bytes in per worker
// step (PsNicBytesBesideControl), over m.steps. None (bytes_per_s 0, the reason in `*refused` when
// given) without sized bytes or receive ops, or where the median rate of the OTHER PS busy at least
// kMinRecvLinkCheckBusy (one at least) is more than kMaxRecvLinkRateSpread from it. `workers`: 0
// (not a worker estimate); `limited_by_ps`: 1. Assumed: a PS's RecvTensor op spans the worker's
// send to the tensor's arrival, as gen2sim and gen3sim draw it. In a real TF1 RunMetadata a PS
// _Recv may start when its partition starts and include the wait for the worker's send; its busy
// time is then not the link's, and the PS read different rates (a PS waiting longer reads a lower
// one): the check refuses those, and a rate that passes it must still replay the capture as is
// within kMaxBaselineMiss, with the waits held or with none held, for a prediction to be made
// (replay_impact.cc; the answers' estimate is not tried in its place: measured worse, see
// ChooseLinks). `disagree` (when given): set where the PS read rates more than
// kMaxRecvLinkRateSpread apart, the evidence that their receives are not their links' time
// (ChooseLinks then reads no links).
NicRateEstimate ReceiveLinkRate(const AnalysisInput& in, const ReplayModel& m, const NicDemand& d,
                                std::string* refused = nullptr, bool* disagree = nullptr);

// Receive intervals per PS: [start, end) ns of each receive op, one vector per PS.
using PsReceiveIntervals = std::vector<std::vector<std::pair<TimeNs, TimeNs>>>;

// ReceiveLinkRate's reading from each PS's receive ops ([start, end) ns per op, by PS) and bytes
// in over `steps` worker steps (by PS): `bytes_per_s` 0 with the reason in `refused` where none
// is read. Pure function (ReceiveLinkRate's core, apart for tests).
struct RecvLinkRead {
  double bytes_per_s = 0;
  std::string refused;
  bool disagree = false;  // refused because the PS's rates are more than the spread apart
};
RecvLinkRead RecvLinkRateOf(PsReceiveIntervals recv, const std::vector<double>& bytes_in,
                            int steps);

// How much further (share of the step) the replay of the capture as is may miss it with the
// workers' NICs as links (ReplayModel::worker_links) than with the PS ends alone for them to be
// kept. Set on the spent twin sets (session 53): gen3's simulator gives workers no NIC limit, and
// its convoys (6106: 5 PS of 1 Gb/s, 8 workers) replayed as is missed by 20-29% with them, within
// 10% without; the independent suite's and gen2's workers have NICs of the PS's rate, and jobs they
// bind (indep report34 42008: 12 PS, 3 workers) replayed as is alike both ways (-1%, +1%). At
// 0.03, gen3 report4 1320 (48 workers, a hot PS on 10 Gb/s; no worker NIC limit) took them at +10%
// against +8% without, and its partition went from -3% to +27% off its twin.
inline constexpr double kMaxWorkerNicMissGain = 0.01;

// The PS NIC links for the replay (issue 44 item 2): `m` with SetLinks (as captured) at the
// receive links' rate (ReceiveLinkRate on PsNicBytesBesideControl's sizes) where it is read,
// else at the answers' estimate (JobNicRate on PsNicBytes's sizes: with the applies' control
// edges left out it was not checked, gen3 report3 1120, a dense kernel's partition replayed
// +185% off its twin); `base`: its replay as is. Where neither gives a rate, the links in time
// (RecvLinkTimeDemand, analyzers/recv_link_time.h): each PS's receive link's busy time per worker
// step as its load, at 1 byte/ns (`in_time`; `nic.bytes_per_s` is then that unit, not a NIC's
// bandwidth). `linked` is empty (link_bytes_per_ns 0) and `nic.bytes_per_s` 0 where none of the
// three gives links; `recv_refused`: why the receive links gave no rate (and why no time, then).
// Not in time where the PS's receives read rates that disagree (RecvLinkRead::disagree): those
// receives are shown not to be the links' time (review v62 item 2). With a rate (not in time), the
// workers' NICs are links too (ReplayModel::worker_links) where the replay as is with them misses
// the step by at most kMaxWorkerNicMissGain more than with the PS ends alone, and by at most
// kMaxBaselineMiss where the PS ends alone do.
struct ChosenLinks {
  NicRateEstimate nic;
  ReplayModel linked;
  Baseline base;
  std::string recv_refused;
  bool in_time = false;
};
ChosenLinks ChooseLinks(const AnalysisInput& in, const ReplayModel& m);

// The least busy share (latency taken off) of the busiest PS's receive link for its rate to be
// read. Set on gen3 report4 (10 Gb/s simulated: 1320's hot PS busy 82% read 9.9 Gb/s, 1324's
// busiest, 52%, 9.8).
inline constexpr double kMinRecvLinkBusy = 0.5;

// The most the other PS's median receive rate may differ from the busiest PS's (relative) for the
// estimate to stand. Set on gen2 report5 (1227, worker NICs binding: 2.6x apart) and gen3 report4
// (1315, 1320, 1324: the PS links binding, within 6%).
inline constexpr double kMaxRecvLinkRateSpread = 0.25;

// The least busy share (latency taken off) of a PS whose rate the check reads: below it, an error
// of a few us in the latency weighs on the busy time (gen3 report4 1320: PS busy 1.7% read 16 Gb/s
// on 10 Gb/s links, those busy 27-82% 9.9-10.2).
inline constexpr double kMinRecvLinkCheckBusy = 0.10;

// The most of a receive op taken as the link's latency rather than bytes (ns): the shortest
// receive op of any PS stands for it, but a receive longer than this carries bytes (a round trip
// inside a data centre is about 0.5 ms: J. Dean, "Latency numbers every programmer should know",
// https://gist.github.com/jboner/2841832). Where every tensor is large (a dense job on slow
// links: gen3 report14 3326, 13 MB parts on 1 Gb/s, its shortest receive 52 ms), taking the
// shortest receive off every receive took the transfers themselves off the link's busy time.
inline constexpr TimeNs kMaxReceiveLatencyNs = 1'000'000;

// Each PS's receive ops (IsRecvOpType) in m.ps's order, each PS's in its ops' order
// (ForEachOpOfTask); empty for a PS without a task row. What ReceiveLinkRate and
// RecvLinkTimeDemand (analyzers/recv_link_time.h) read the links from.
PsReceiveIntervals PsReceives(const AnalysisInput& in, const ReplayModel& m);

// The latency taken off each receive op of `recv` (ns): the shortest receive op of any PS, at most
// kMaxReceiveLatencyNs; -1 where no PS has a receive op.
TimeNs ReceiveLatency(const PsReceiveIntervals& recv);

}  // namespace tfdiag
