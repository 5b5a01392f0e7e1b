// The scaling outlook under SyncReplicasOptimizer (issue 44 item 3; analyzers/outlook.h): the
// burst on a PS's link after the barrier. Every worker pulls the variables at once after the
// barrier and pushes its gradients at about the same time; on a link shared by the transfers
// crossing it the burst ends together, after all the workers' bytes went over it, so with k
// times the workers it lasts k times as long. The replay holds fixed what its model does not
// explain of a worker's step: its receive wait beyond the replayed PS wait
// (ReplayModel::Worker::recv_ns) and its measured transfers (pull_xfer_ns, push_xfer_ns; less
// what the replay's own PS links run of them, ReplayModel::link_explained_*_ns, which grows with
// their queues). Under the barrier that time is the burst, and it does not stay fixed as workers
// are added: the outlook adds its growth to the replayed step (SyncBurstGrowthNs).
// Tuned on the independent report13 sweep (21005, 21010, 21019) and gen3 report8 (2107, 2131);
// checked on gen3 report7 (1906, 1928), gen2 report8/report9 and the independent report12
// (docs/scaling.md). Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "analyzers/nic_rate.h"
#include "analyzers/replay.h"

namespace tfdiag {

// The least share of the measured step the answers' held time must be for ReadSyncBurst to read
// it as a burst (below, its growth is small and may be latency). Set on the independent report13
// sweep (21005: 26% of the step, 1 PS on a 1 Gb/s link, +37%/+101% at 2x/4x before; 21010, 2
// workers: +17% at 4x before, +3% read; gen3 report8 2131: its last answer's transfer).
constexpr double kSyncBurstMinShare = 0.05;
// The workers' held receive waits end together in a burst: the lower quartile over the workers at
// least this share of the median (21005: 8 of 9 workers within 3% of the median, one at 64%).
constexpr double kSyncBurstMinAlike = 0.5;

// The workers' measured answer transfers (Worker::pull_xfer_ns) count toward the burst only where
// they differ from worker to worker by more than this share of the longest: in a shared burst a
// worker's place in it sets its transfer's time, while a link no other transfer shares takes the
// same time for each (bench/twins/psjob.py's healthy-sync, whose network is not shared: 1.55 ms
// for each of 8 workers, read as a burst +4%/+12% -> -6%/-14% at 2x/4x, saturation 132 -> 42
// where it is 69; gen3 report7 1928, 4.3-4.9 ms, and the independent report13 21010, 41-47 us,
// differ by 12-13%).
constexpr double kSyncBurstFixedSpread = 0.01;

// A synchronous capture's burst on its busiest PS's link (by bytes answered per worker step).
struct SyncBurst {
  bool set = false;
  int ps = -1;  // the PS (index into m.ps) whose link carries the most bytes
  // The answers' burst in the capture (ns): the workers' median held receive wait plus their
  // last answer's transfer beyond what the replay's links run.
  double pull_ns = 0;
  // The gradients' (ns): their measured transfer beyond the links' where the capture ties one,
  // else pull_ns x the PS's bytes in / out (sizes), else pull_ns.
  double push_ns = 0;
  // Of pull_ns + push_ns, what the replay counts as wait it does not explain (the held receive
  // wait; the gradients' when not measured, then in the idle time after compute).
  double unexplained_ns = 0;
  // What the burst implies of the link where the capture sizes the answers: workers x bytes
  // out / pull_ns; 0 without sizes.
  double bytes_per_s = 0;
};

// The burst of `m` with its PS bytes `d` (PsNicBytes; its busiest PS by bytes out, else by op
// time). Not set unless m is synchronous and the workers' answer times (pull_ns's per worker) are
// at least kSyncBurstMinShare of the measured step and alike (kSyncBurstMinAlike).
SyncBurst ReadSyncBurst(const ReplayModel& m, const NicDemand& d);

// The time (ns) the burst adds to a worker's step at `workers` against the `captured` count,
// `bytes_scale` the busiest link's bytes after a fix over before (1 as is): (pull + push) x
// (workers x bytes_scale / captured - 1), at least -(pull + push) (a fix that empties the link).
double SyncBurstGrowthNs(const SyncBurst& b, int workers, int captured, double bytes_scale);

// The saturating resource where the burst's growth sets the throughput, for PS `task` ("ps:0").
std::string SyncBurstResource(const SyncBurst& b, std::string_view task);
// The outlook's assumption line for the burst on PS `task`'s link.
std::string SyncBurstAssumption(const SyncBurst& b, std::string_view task);
// Why the outlook's confidence is low where it reads the burst: one capture cannot tell the
// link's time, which grows with the workers, from a per-transfer latency, which does not
// (review v65b item 1: an indepsim job on 100 Gb/s with 0.25-0.4 ms latency read -10%/-26% at
// 2x/4x and a saturation where none is, 0% before the burst was read).
inline constexpr const char* kSyncBurstWeak =
    "the burst after the sync barrier is read from what the replay holds fixed of the workers' "
    "steps (their receive wait and last answer's transfer), taken to grow with the workers; a "
    "per-transfer latency, which does not grow, would read the same";

}  // namespace tfdiag
