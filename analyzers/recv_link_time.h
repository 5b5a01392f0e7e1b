#pragma once
// The PS receive links' load in time, for a capture that does not size its transfers (issue 44:
// a PS count the PS links bound, named where the capture has no bytes). A PS's RecvTensor rows
// (the gradients arriving) span each transfer on its receive link; on a link shared by the
// transfers crossing it (processor sharing, analyzers/replay_link.h) the link is busy whenever
// one is in flight, at its full rate, so the union of those rows (each less the latency: the
// shortest receive op of any PS) is the bytes' time on the link, bytes / R, whatever R is.
// Measured in that unit (R = 1 byte/ns), the links replay (SetLinks) needs no sizes: a PS-count
// fix spreads the link time as it spreads bytes (every link of the same rate, as the new PS's NICs
// are taken to be the captured ones'). Thread-safety: pure functions.
#include <string>

#include "analyzers/nic_rate.h"
#include "analyzers/replay.h"

namespace tfdiag {

struct AnalysisInput;  // analyzers/analysis_input.h

// Per PS (m.ps's order): its receive link's busy ns per worker step, as `in` (bytes at 1 byte/ns)
// and the same as `out` (mirrored: a worker pulls a variable, or the gathered rows, of each
// gradient's shape). `known` false, with the reason in `*refused`, where some PS with work shows
// no receive op, or no PS's receives are busy over kMinRecvLinkBusy of their span.
NicDemand RecvLinkTimeDemand(const AnalysisInput& in, const ReplayModel& m,
                             std::string* refused = nullptr);

// The link rate RecvLinkTimeDemand's unit implies (bytes/s): 1 byte/ns.
inline constexpr double kLinkTimeBytesPerS = 1e9;

}  // namespace tfdiag
