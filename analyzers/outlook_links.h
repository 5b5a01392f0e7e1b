// The scaling outlook's bounds beside its replay (issue 44 item 3): a slow host kept after a fix
// (SlowHostCap), each PS's receive link and each variable's mutex. The receive link, from what
// every profile with RecvTensor rows on the PS shows: the share of the capture in which the PS had
// a gradient arriving (TaskStats::recv_busy_pct, analyzers/task_stats.h). It needs neither the
// transfers' sizes nor the link's bandwidth: at a throughput X the link receives about
// recv_share x X / X0 of the time (X0 the captured throughput), as long as the bytes per worker
// step stay as they are.
//
// How much of the time a PS's link can be receiving before adding workers stops paying depends
// on how the workers' transfers line up on it. Transfers sharing a link equally end together, so
// workers that pull together compute together and push together (a convoy): the link carries
// the answers, then the gradients, one after the other, not both at once.
// - Asynchronous workers drift out of the convoy only partly: the receive share where the
//   throughput stops growing is kRecvLinkAsyncMax (0.6), measured on gen3's report seeds
//   (700-731, spent: 707, 716, 717, 727 saturate at 0.54-0.61; the seeds this was tuned on) and
//   checked on gen3 dev, gen2 dev and the independent suite's spent sets (docs/scaling.md; gen2
//   report2 was used to design the recv_load gate and the asynchronous reading, kRecvLoadMin). A
//   link the capture shows receiving more than that already runs at that share, and keeps it.
// - Under SyncReplicasOptimizer the convoy is complete: every worker pulls after the barrier,
//   computes, pushes. With k times the workers, the pull and push bursts on the link are k times
//   as long (their bytes), the rest of the global step as captured: X / X0 = k / (1 + 2 r (k - 1))
//   with the answers taking as long as the gradients (the variables' shapes both ways) and r the
//   share of the capture the link spent on bytes it shares: the receive share times the part of
//   the median receive beyond the quickest one (the latency and a lone message, which more
//   workers do not lengthen; gen3 report 704: 64 workers' receives all 259 us, none stretched).
//   The same share bounds the job after going asynchronous (gen2 report2 615: a receive share of
//   47%, 8% of it stretched; asynchronous, 3.4x the steps/s at twice the workers).
//
// A variable's applies under use_locking=True (TF1's default for most optimizers' ref variables:
// tensorflow/core/kernels/training_ops.cc takes the variable's mutex) run one at a time, whatever
// the PS's threads, and an apply waiting for the mutex keeps its row open: the union of one
// variable's apply rows is the time its mutex was held. An asynchronous job's steps/s then stops
// where that share reaches ImpactRules::saturated_busy (gen3 report 706: dense Adam on embedding
// parts, the mutex held 71% of the capture, the throughput +16% and +24% at 2x and 4x).
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analyzers/replay.h"

namespace tfdiag {

struct AnalysisInput;  // analyzers/analysis_input.h

// The receive share at which an asynchronous job's PS link stops carrying more steps (above).
// Set on gen3 report 700-731 (707, 716, 717, 727 saturate at 0.54-0.61); gen3 dev and gen2 dev
// only checked it. A fixed figure from simulated jobs, said in the outlook's assumptions.
constexpr double kRecvLinkAsyncMax = 0.60;

// Asynchronous workers in a convoy (ConvoyStretch): transfers sharing a link equally end together,
// so workers that pull together compute together and push together, and with k times the workers
// the bursts are k times as long, as under SyncReplicasOptimizer. The capture shows it where the
// job's PS receives stretch alike: the least recv_stretch of the receiving PS at least
// kConvoyMinStretch (set on gen3 report4: 1306, 1312, 1314, 1330 at 0.84-0.97, +54%/+31%,
// +31%/+17%, +42%/+32%, +10%/+6% at 2x/4x before; checked on gen3 report3: 1100, 1106, 1108 at
// 0.94-0.99, whose captured share already bounds them), and the link's stretched share (receive
// share x stretch) at least kConvoyMinShare (below, the convoy costs little and the stretch may be
// a worker's many tensors sharing its own sends; set on gen3 report4 too, no set checks it).
// Only for an asynchronous capture where the replay does not run the links (a synchronous
// capture's stretch is its barrier's burst).
constexpr double kConvoyMinStretch = 0.80;
constexpr double kConvoyMinShare = 0.15;

// A convoy on one dominant link: where one PS carries most of the workers' sends (its summed
// receive time at least kDominantLinkLoad of all PS's, recv_load / captured workers), the
// workers' steps wait mainly on that link, and sharing it equally lines them up there whatever
// the other PS show (ConvoyStretch reads the least stretch of every PS, so one busy PS among idle
// ones never passed it). Its receives stretched by sharing (recv_stretch at least
// kDominantLinkMinStretch) and busy (recv_share at least kDominantLinkMinShare), the convoy bound
// applies to its whole receive share: the bursts are the bytes' time on the link, k times as long
// at k times the workers, lone transfer included; only the latency, a small part of a receive
// there, does not grow. Only for an asynchronous capture whose links the replay does not run.
// Set on gen3 report6 (1700-1731, spent): 1700 (1 PS), 1708 (16 PS, ps:0 63% of the receive
// time), 1717 (2 PS, 72%) at stretch 0.65-0.78 and share 0.37-0.46 were +49%/+19%, +35%/+24%,
// +37%/+14% at 2x/4x under the 60% share, +14%/-5%, +7%/+1%, -3%/-13% as a convoy; the jobs
// whose busiest PS carries 48-52% of it (1712, 1714) scale past the convoy bound. Checked on
// gen3 report5 (docs/scaling.md; the share gate was raised from kConvoyMinShare's 0.15 after
// report5's 1513 and 1520, share 0.15-0.18, read -25% to -46%: that set checks the other two).
constexpr double kDominantLinkLoad = 0.60;
constexpr double kDominantLinkMinStretch = 0.50;
constexpr double kDominantLinkMinShare = 0.30;

// A convoy of many workers at once: where a PS's link had the receives of at least
// kManyWorkersAtOnce of the captured workers' steps in flight at once while receiving
// (RecvWorkersAtOnce: its receives at once over its receives per worker step, since each variable
// or partition is a RecvTensor of its own and one worker's push is as many rows), stretched by
// sharing (at least kDominantLinkMinStretch) and busy (its receive share at least
// kDominantLinkMinShare), the workers' gradients arrive there together and its receive time is
// mostly their bytes' time shared: the convoy bound applies with its whole receive share, as on a
// dominant link. Up to a share of kManyAtOnceMaxShare, kRecvLinkAsyncMax: from there the 60%
// share holds the link as captured, as the convoy does from a share of 0.5 (its bound,
// k / (1 + 2 r (k - 1)), is the captured throughput there), so the bound falls with the share and
// does not jump back up at 0.5 (it stopped there before: 0.49 -> ~1.0x, 0.50 -> 1.2x at 2x; gen3
// report9 2331, 0.51 of the capture with 7.9 of 24 workers at once, +18%/+27% -> +12%/+17%;
// gen3 report8 2100, 0.56, -6%/-6% either way, -18%/-20% -> -33%/-31% after its fix; gen2
// report9/10 unchanged). Only for an asynchronous capture whose links the replay does not run;
// after a fix that moves work between PS, only where every receiving PS showed it as captured (the
// workers' convoy, so on every link after the move). Set on gen3 report9 (2300-2331, spent): 2300
// (16 PS, 6.6 of 48 workers at once, 0.14), 2328 (12 PS, 4.6 of 16, 0.29), 2305 (3.7 of 8 on ps:0,
// 0.46) read +78%/+81%, +19%/+29%, +18%/+11% at 2x/4x under the 60% share, +26%/+39%, -7%/+4%,
// -3%/-8% as a convoy; 2321 (1.4 of 16, 0.089) scales past it. 2320 (1.2 of 16, 0.076: its 10
// receives at once are mostly one push's 8 tensors) was bounded by the receive count before
// (-1%/+6%) and is not by the workers (+50%/+44%, the price of counting workers). Checked on
// gen3 report8: 2101 (1.7 of 16, 0.106) +6%/+4% -> -13%/-14% (its saturation into the simulated
// bracket), 2108, 2125, 2127 as before (0.2-0.67), 2104 and 2122 (0.06, 0.05) scale past it;
// gen2 report9 and 10 unchanged.
// And at least kManyWorkersAtOnceMin workers at once: a convoy is more than one worker's push on
// the link (gen3 report 707, 2 workers, 1.05 at once: a tenth of its workers is any receive;
// -13%/-18% at 2x/4x as a convoy, +10%/+1% under the 60% share; gen3 report8 2101 1.7, 2108 1.6).
constexpr double kManyWorkersAtOnce = 0.10;
constexpr double kManyWorkersAtOnceMin = 2.0;
constexpr double kManyAtOnceMaxShare = kRecvLinkAsyncMax;

// A PS link's flows throttled at the workers' end. A flow shared by max-min fairness (TCP's fair
// share) runs at the lesser of its two ends' shares: where a PS had few receives at once
// (recv_concurrency) against the sends each worker makes at once (its fan-out: every PS's summed
// receive time over the busiest's, each worker pushing to every PS together), its receives were
// stretched at the workers' links, not its own, which carried recv_concurrency / fan-out of its
// bandwidth while receiving: the receive share, scaled so, is its link's. Read where the PS's
// receives are stretched (recv_stretch at least kWorkerEndMinStretch: shared somewhere) and it
// had under kWorkerEndMaxConcurrency of the fan-out at once. Set on gen2 report7 (1600-1631,
// spent): 1622 (16 PS of 21 workers, each receiving 59% of the capture with 2.4 at once against
// a fan-out of 14.5, stretched 0.75-0.99) was -47% and -62% at 2x and 4x under the 60% share, +2%
// and -14% so; gen3 report6 1722 (16 PS of 16, 10.4 at once against 16; gen3's workers have no
// link of their own) keeps the share at 0.65 of the fan-out, 1524 (gen3 report5) at 0.19 has
// its receives unstretched (0.13). Checked on gen2 report6 (docs/scaling.md). Lowered from 0.5
// to 0.3 on gen3 report7 (1900-1931, spent): 1908 (16 PS packed on one node's 10 Gb/s NIC, 12
// workers, 7.3 receives at once against a fan-out of 16: 0.46; gen3's workers have no link of
// their own, so no worker end throttles) was read as throttled at the workers' end, +93% and
// +84% at 2x and 4x; at 0.3, between 1622's 0.15-0.17 and 1908's 0.46, -1% and -16%. Checked on
// gen2 report7 (1622 unchanged), gen3 report6, gen2 report8 and the independent sets.
constexpr double kWorkerEndMinStretch = 0.50;
constexpr double kWorkerEndMaxConcurrency = 0.30;

// The least recv_load (PsLinkEvidence) at which a PS's receive link bounds: its link carries at
// least one worker's sends. Designed on gen2 report2 600-631 (621, where the workers' own links
// fill first) together with the asynchronous reading of a sync job's share (615): gen2 report2
// is a set these were designed on, not a check. RecvLinkCap reads it at the worker count asked
// for (recv_load times the workers' growth: gen3 report3 1119, set there; gen2 report4 checked,
// unchanged).
constexpr double kRecvLoadMin = 1.0;

// What one PS of the capture shows of its link and its variables' mutexes.
struct PsLinkEvidence {
  // Its receive share of the capture, [0, 1] (0: no receives, or they count as its work:
  // TaskStats::recv_busy_pct).
  double recv_share = 0;
  // Its receives over one worker's sends: its share of the summed receive time of every PS
  // times the workers (>= 1: its link carries at least what a worker's does; below, the workers'
  // own links, which added workers bring with them, bound the transfers first: gen2 report2 621,
  // 13 PS and 7 workers on 1 Gb/s links, every PS receiving 52% of the capture).
  double recv_load = 0;
  // The part of its receive time spent sharing the link, [0, 1] (RecvStretch: per received
  // tensor, 1 - its quickest receive / its median one, weighted by time).
  double recv_stretch = 0;
  // Its receives in flight at once while it receives: their summed time over their union (>= 1;
  // 0 without receives).
  double recv_concurrency = 0;
  // Its receive rows per second of its span (every IsRecvOpType row: each variable or partition
  // is a receive of its own, so a worker's push is as many rows as the tensors it sends there).
  double recv_rows_per_s = 0;
  // The largest share of the capture one of its variables' applies (IsDenseApplyOpType,
  // IsSparseApplyOpType) cover, [0, 1]: that variable's mutex held; and the variable. Only
  // variables whose overlapping apply rows end one a lone apply's time after another (a mutex,
  // not applies run side by side; 0 without that evidence).
  double lock_share = 0;
  std::string lock_variable;
};

// Per PS of `m.ps` (same order). O(ops of the PS).
std::vector<PsLinkEvidence> PsLinks(const AnalysisInput& in, const ReplayModel& m);

// The workers' steps whose receives `e`'s PS had in flight at once while receiving: its receives
// at once (recv_concurrency) over its receives per worker step (recv_rows_per_s over the job's
// `captured_steps_per_s`, steps/s of all workers). 0 where either is unknown.
double RecvWorkersAtOnce(const PsLinkEvidence& e, double captured_steps_per_s);

// The most steps/s the PS receive links allow at `workers` workers (the job captured at
// `captured` workers and `captured_steps_per_s`; `fixed_steps_per_s` the throughput at that count
// after `fix`, which a synchronous convoy grows from), after `fix` (a fix moving variables between
// PS spreads the moved receive share as LoadAfter spreads op time: a partition's share over every
// PS, a dropped PS's over the rest, a new count's over it), `sync` whether the job still runs
// SyncReplicasOptimizer after it. Only PS whose link carries at least a worker's at `workers`
// (recv_load x workers / captured >= kRecvLoadMin: the added workers' sends cross the PS's link,
// their own links are new) bound. INFINITY when no PS receives. `*ps` gets the binding PS's index
// into m.ps (-1: none, or a new PS), `*share` its receive share at the bound (before scaling).
// Where `m` runs the PS links itself (sizes and a bandwidth: ReplayModel::link_bytes_per_ns > 0,
// as the outlook sets it where the NIC is estimated), the asynchronous convoy stays off (the 60%
// share bounds it there: not bounding an asynchronous capture at all where the links are replayed
// took gen2 report4/report5 within 15% but put held-out gen2 report6 1410, 1411 at +23%/+60% and
// +55%/+197%, reverted, docs/scaling-history.md). `*convoy` (optional) gets whether an asynchronous
// convoy set the bound.
double RecvLinkCap(const ReplayModel& m, const std::vector<PsLinkEvidence>& ev, const Fix& fix,
                   int workers, int captured, double captured_steps_per_s, double fixed_steps_per_s,
                   bool sync, int* ps, double* share, bool* convoy = nullptr);

// The job's convoy stretch: the least recv_stretch of the PS that receive (recv_share > 0);
// 0 when none does. At least kConvoyMinStretch: asynchronous workers move in a convoy.
double ConvoyStretch(const std::vector<PsLinkEvidence>& ev);

// The most steps/s the variables' mutexes allow an asynchronous job at `workers` (above): each
// PS's busiest variable's mutex held at most max(`saturated`, its captured share). INFINITY when
// the job is synchronous (the chief applies once per global step), when `fix` moves or changes
// that PS's variables (a partition, a new PS count, a dropped PS, less work per op), or when no
// apply was seen. `*ps` gets the binding PS's index into m.ps (-1 none).
double LockCap(const ReplayModel& m, const std::vector<PsLinkEvidence>& ev, const Fix& fix,
               double captured_steps_per_s, bool sync, double saturated, int* ps);

// Per PS of m.ps: op time per worker step (ns) and threads after `fix`, approximately as the
// replay places it (PlanPs: moved work at the others' speed, each PS's Ps::host_slowdown where
// it lands; for naming the saturated PS, the replay itself computes the throughput).
struct PsLoad {
  std::vector<double> demand;
  std::vector<int> threads;
};
PsLoad LoadAfter(const ReplayModel& m, const Fix& fix);

// Whether `fix` moves work between PS (partitions, a dropped PS, a new PS count).
bool MovesWork(const Fix& fix);

// The most worker steps per ns the PS CPUs allow after `fix` when some PS's host stays slow
// (`slow`: per PS task, its slowdown >= 1, from a finding whose fix is not `fix`), in the
// outlook's model units; INFINITY when no slow host stays or `fix` moves no work. `*ps` gets
// the binding PS's index into m.ps (-1: a new PS, or no bound). Details beside its definition.
double SlowHostCap(const ReplayModel& m, const Fix& fix,
                   const std::vector<std::pair<uint32_t, double>>& slow, int* ps);

// The rule whose findings name a table the workers read whole (docs/rules/gather-on-worker.md).
inline constexpr const char* kGatherOnWorkerRule = "gather-on-worker";

// A table a worker reads whole from a PS every step to gather from it on the worker, as the
// gather-on-worker rule found it (its detection and its rule-set thresholds: min_gathers; a PS
// variable received over the network): the table (the finding's first op), "" when no such
// finding is among `findings` (the rule disabled or ignored: nothing withheld). The PS's
// transmit link then carries the whole table per worker step, which no PS row shows (the
// workers' receives do not name the PS they came from).
std::string WholeTableRead(const std::vector<Finding>& findings);

// Why the outlook is withheld for `table`, read whole by the workers (WholeTableRead): where the
// capture sizes the PS's answers (a TF1 timeline's show_memory sizes the table's read and leaves
// only the applies' control edges unsized: PsNicBytesBesideControl) the bytes are known and the
// link's bandwidth is not; else no transfer is sized. gen3 report5 (spent) 1507, 1510 and 1516,
// scaled with those sizes, read +77% to +300% at 2x and 4x (1516's 10 Gb/s link estimated from
// the last, small PS answer at 1.8 Tb/s), so neither case is scaled.
std::string WholeTableReadWithheld(const AnalysisInput& in, const ReplayModel& m,
                                   const std::string& table);

// The fewest receives of one tensor RecvStretch compares (a median needs a few; set with the
// stretch on gen3 report 700-731).
constexpr size_t kRecvStretchMinRows = 4;

// The part of a PS's receive time spent sharing its link: per received tensor (rows grouped by
// `first`, the row's name: one tensor's receives are alike in size), 1 - its quickest receive /
// its median one, weighted by that tensor's summed receive time (`second`, ns); tensors with
// fewer than kRecvStretchMinRows receives are left out; [0, 1], 0 without any. Comparing across
// tensors would read a small tensor's quick receive as an unshared one and a large tensor's as
// stretched. A capture whose receive rows name no tensor (every row "RecvTensor", as gen2's and
// gen3's simulators write them) gives one group, taken as like-sized. O(n log n).
double RecvStretch(std::vector<std::pair<std::string_view, TimeNs>> rows);

}  // namespace tfdiag
