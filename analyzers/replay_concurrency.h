#pragma once
// How many ops a PS task really ran at once, for the replay's PS threads (analyzers/replay.h).
// Internal to the replay (namespace replay_detail). Thread-safety: pure function.
#include <functional>

#include "analyzers/task_stats.h"
#include "core/capture.h"

namespace tfdiag::replay_detail {

// The concurrency `t`'s ops really reached: the most ops running at once for at least 5% of its
// busy time (over all its devices and lanes; an op ending when another starts does not overlap
// it), so a brief overlap of two small ops does not double a PS's capacity. Each device's ops
// are in start order (Capture): sweeps the devices' starts merged in time order with a min-heap
// of the running ops' ends, so memory is the ops running at once, not every op of the task.
// Which of the task's ops count. kOps: its receives (IsRecvOpType) only where they held its
// threads (not ReceivesAreWaits); kOpsNoReceives: every op but its receives; kOpsAndReceives:
// every op; kReceives: its receives only.
enum class Counted { kOps, kOpsNoReceives, kOpsAndReceives, kReceives };
int AchievedConcurrency(const Capture& c, const TaskStats& t, Counted which = Counted::kOps);

// Whether PS `t`'s receives (the gradients arriving, RecvTensor) are waits on its link rather
// than work on its threads: TaskStats::recv_busy_ns > 0 (its ops overlap them about as often
// as chance), or its receives ran at least kMinReceivesBeyondOps more at once than its other
// ops ever did (AchievedConcurrency of each): a receive that held a thread could not run
// beside more receives than the PS has threads. Under SyncReplicasOptimizer every worker
// pushes at once and the PS's ops follow the receives in phases, so the overlap test of
// TaskStats alone took them for work (gen2 report9 2026: 1 PS thread, receives 9 at once, the
// link's 304 ms replayed as PS op time, the replay as is +24%).
bool ReceivesAreWaits(const Capture& c, const TaskStats& t);

// The share of the captured span `span_ns` in which PS `t` had a receive in flight (the union of
// its receive ops; TaskStats::recv_busy_pct where TaskStats kept them apart), where its receives
// are waits on its link (ReceivesAreWaits), else 0. [0, 1].
double ReceiveBusyShare(const Capture& c, const TaskStats& t, TimeNs span_ns);

// PS `t`'s receive rows (IsRecvOpType: RecvTensor, _Recv, _HostRecv) as its link's, where they
// are waits on its link (ReceivesAreWaits), read in one sweep of its rows.
struct ReceiveTime {
  // The time it had a receive in flight, ns: TaskStats::recv_busy_ns where TaskStats kept them
  // apart, else the union of its receive rows of positive length; 0 where its receives held its
  // threads (then `sum_ns` and `rows` are 0 too: no row is on its link).
  TimeNs busy_ns = 0;
  double sum_ns = 0;  // the receive rows' durations summed, ns (over busy_ns: receives at once)
  size_t rows = 0;    // the receive rows, every length
};

// ReceiveTime of `t`, for the readers of the PS links (the outlook's, the prediction's link
// check), so they count the receives the replay leaves out of the PS's demand as link time, not
// as neither (review v65a item 1), and the receives at once from the same rows. `each`, when
// given, is called on every row of `t` in the same sweep (ForEachOpOfTask order), with whether
// it is a receive on its link (a receive row of a PS whose receives are waits on its link, not
// work holding its threads: TaskStats::recv_busy_ns > 0 or ReceivesAreWaits), so a reader of
// other rows
// sweeps them once; without it, a PS whose receives held its threads is not swept.
ReceiveTime ReceiveRows(const Capture& c, const TaskStats& t,
                        const std::function<void(const OpRow&, bool on_link)>& each = nullptr);

// Receives running this many more at once than the PS's ops: a margin over one thread (a
// simulator that serves receives as ops on T threads keeps both at most T; gen2 report9 2026:
// 9 against 1, 2023: 138 against 1). Set on gen2 report9.
inline constexpr int kMinReceivesBeyondOps = 2;

}  // namespace tfdiag::replay_detail
