// Each PS host's speed against the job's other PS, from the parts of one partitioned variable
// (issue 44 item 2: "a slow host as its own cause"; the replay's PS plans,
// ReplayModel::Ps::host_slowdown). The parts of a variable cut by a partitioner
// ("<base>/part_<k>", one per PS) serve the same kind of request (the same reads or gathers of
// the same table), so their time per op should match across PS once the bytes each answer
// carries are taken into account (an unevenly partitioned table's hot part gathers more rows a
// request, and sends more bytes; op times without the slowdown of ops sharing too few cores
// where analyzers/replay_cores.h's fit shows the cores): per pair of parts of one base on PS p
// and q, the bound
// (time per op on p / time per op on q) / max(1, bytes per answer on p / on q), as slow-ps-host
// bounds like-sized variables (analyzers/slow_ps_host.h: an op's time grows with its bytes and
// no faster); p's figure for the base is the median over the other parts, its slowdown the
// median over its bases. Unlike slow-ps-host's comparison of like-sized but unrelated variables
// (a gathered table against a dense kernel of the same bytes), it needs no variable sizes and
// reads only parts of one request kind; gen3 report3's PS of even hosts measured up to 6x there
// (1128: a gathered table's part against dense kernels) and at most 1.3x here. Pure function;
// thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "analyzers/analysis_input.h"

namespace tfdiag {

// Per PS task (Capture task index): its slowdown (ratio; about 1 for a host at the others'
// speed), for each PS holding a part of a variable partitioned over at least kMinPartsPs PS
// whose answers the capture sizes (cross-task edges with bytes), or over both PS of a job of 2
// PS: there the pair's ratio is each one's figure (the slow one's above 1, the other's under),
// none for a PS whose fitted cores (FitPsCores) are fewer than the ops either PS runs at once
// (op time / busy time): no third PS outvotes what the fit leaves of their sharing, so neither
// slow-ps-host nor the replay (ReplayModel::Ps::host_slowdown) reads a slow host there. Empty
// without such a variable. `work_share`: per PS task, its ops' work over their time
// (FitPsCores' work_ns / op_ns), where the caller has fitted it already (BuildReplayModel); fitted
// here for a PS it lacks. `own_cores`: per PS task, the cores its own ops' fit shows (PsOpLoad::
// cores, 0 none), where the caller has fitted them (BuildReplayModel, beside work_share); fitted
// here for a PS of a pair that lacks them. Each analysis measures this once, in its replay model
// (ReplayModel::Ps::parts_slowdown).
std::vector<std::pair<uint32_t, double>> PartSlowdowns(
    const AnalysisInput& in, const std::map<uint32_t, double>& work_share = {},
    const std::map<uint32_t, int>& own_cores = {});

// The PS a variable's parts must span for PartSlowdowns to read them in a job of more than 2 PS
// (the median over the other parts then outvotes a part that is slow for its own reason).
inline constexpr long kMinPartsPs = 3;

// A PS whose PartSlowdowns figure reaches this is replayed at that speed when a fix moves work
// onto or off it (ReplayModel::Ps::host_slowdown); under it, at the others' speed. Set on indep
// tune2 and report8 and gen3 report3 (session 26): slow hosts measured 1.93-2.38x (true
// 1.93-2.7x), PS of even hosts at most 1.3x, unevenly partitioned tables included.
inline constexpr double kMinModelledSlowdown = 1.5;

}  // namespace tfdiag
