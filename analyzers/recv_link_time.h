#pragma once
// The PS receive links' load in time, for a capture that does not size its transfers (issue 44:
// a PS count the PS links bound, named where the capture has no bytes). A PS's RecvTensor rows
// (the gradients arriving) span each transfer on its receive link; on a link shared by the
// transfers crossing it (processor sharing, analyzers/replay_link.h) the link is busy whenever
// one is in flight, at its full rate, so the union of those rows (each less the latency: the
// shortest receive op of any PS) is the bytes' time on the link, bytes / R, whatever R is.
// Measured in that unit (R = 1 byte/ns), the links replay (SetLinks) needs no sizes: a PS-count
// fix spreads the link time as it spreads bytes (every link of the same rate, as the new PS's NICs
// are taken to be the captured ones'). Assumed, as for ReceiveLinkRate (replay_nic_bytes.h): a
// PS's RecvTensor row spans the worker's send to the tensor's arrival, as gen2sim and gen3sim draw
// it. In a real TF1 RunMetadata a PS _Recv may start with its partition and include the wait for
// the worker's send; its busy time is then not the link's. Nothing here checks that (with one PS
// there is no other rate to compare); what guards such a capture is downstream: the links replay
// of the capture as is must match the measured step within kMaxBaselineMiss (a PS count read
// from a convoy within kMaxPredictedBaselineMiss: LinkConvoy::loose_fit), and a convoy needs
// the workers x the busiest link's time within ps-worker-ratio's convoy_max_link_pct of the step
// (receives that include waits read about twice it) (review v62 item 3). Where the PS read rates
// that disagree, ChooseLinks reads no links in time. Thread-safety: pure functions.
#include <string>

#include "analyzers/nic_rate.h"
#include "analyzers/replay.h"

namespace tfdiag {

struct AnalysisInput;  // analyzers/analysis_input.h

// Per PS (m.ps's order): its receive link's busy ns per worker step, as `in` (bytes at 1 byte/ns)
// and the same as `out` (mirrored: a worker pulls a variable, or the gathered rows, of each
// gradient's shape). `known` false, with the reason in `*refused`, where some PS with work shows
// no receive op, no PS's receives are busy kMinRecvLinkTimeBusy of their span, or the busiest is
// busy under kMinRecvLinkBusy and its busy time rests on the latency taken off (twice the latency
// taken off moves it more than kMaxRecvLinkLatencyShare).
NicDemand RecvLinkTimeDemand(const AnalysisInput& in, const ReplayModel& m,
                             std::string* refused = nullptr);

// The least busy share (latency taken off) of the busiest PS's receive link for its time to be
// read, where twice the latency taken off moves that time at most kMaxRecvLinkLatencyShare (at
// kMinRecvLinkBusy and above it is read as for a rate). A link whose workers pull together and
// then push together is busy receiving about half the step: set on gen3 report7 (spent: 1919, 16
// PS for 128 workers, 46%, 16 -> 48 PS predicted +22% of its twin; 1931, 1 PS for 2 workers, 46%,
// 1 -> 3 PS -2%; both withheld before).
inline constexpr double kMinRecvLinkTimeBusy = 0.40;

// The most the busiest receive link's time may move when twice the latency (the shortest receive
// op of any PS, at most kMaxReceiveLatencyNs: ReceiveLatency) is taken off, under
// kMinRecvLinkBusy. Set on gen3 report7 (1919 2.5%, 1931 0.4%; 1908, 13%, refused until the
// latency was capped: its shortest receive, 12.6 ms, is bytes, not latency).
inline constexpr double kMaxRecvLinkLatencyShare = 0.10;

// The link rate RecvLinkTimeDemand's unit implies (bytes/s): 1 byte/ns.
inline constexpr double kLinkTimeBytesPerS = 1e9;

}  // namespace tfdiag
