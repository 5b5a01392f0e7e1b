// AchievedConcurrency (analyzers/replay_concurrency.h), moved out of analyzers/replay.cc.
#include "analyzers/replay_concurrency.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <queue>
#include <utility>
#include <vector>

#include "analyzers/capture_queries.h"
#include "analyzers/op_names.h"
#include "analyzers/task_stats.h"
#include "core/device_cursor.h"

namespace tfdiag::replay_detail {

int AchievedConcurrency(const Capture& c, const TaskStats& t, Counted which) {
  StringTest is_recv(c, IsRecvOpType);  // a PS's receives are waits, not ops it serves
  const bool drop_recv = which == Counted::kOps              ? ReceivesAreWaits(c, t)
                         : which == Counted::kOpsAndReceives ? false
                                                             : which == Counted::kOpsNoReceives;
  using Next = std::pair<TimeNs, size_t>;  // (start, device slot) of every device's next op
  std::vector<DeviceCursor> cur;
  std::priority_queue<Next, std::vector<Next>, std::greater<Next>> starts;
  auto advance = [&](size_t k) {  // pushes device slot k's next op of positive length
    const OpRow* op;
    while ((op = cur[k].Peek()) != nullptr &&
           (op->dur() <= 0 || (drop_recv && is_recv(c.OpType(*op))) ||
            (which == Counted::kReceives && !is_recv(c.OpType(*op))))) {
      cur[k].Pop();
    }
    if (op != nullptr) starts.push({op->start, k});
  };
  for (uint32_t d : t.device_ids) {
    cur.emplace_back(c.ops, c.device_ops[d]);
    advance(cur.size() - 1);
  }
  std::priority_queue<TimeNs, std::vector<TimeNs>, std::greater<TimeNs>> ends;
  std::vector<double> at_level(2, 0);  // time with exactly k ops running
  TimeNs now = 0;
  auto settle = [&](TimeNs until) {  // ends ops up to `until`, crediting time to each level
    while (!ends.empty() && ends.top() <= until) {
      const TimeNs e = ends.top();
      if (e > now) at_level[ends.size()] += double(e - now), now = e;
      ends.pop();
    }
    if (until > now) at_level[ends.size()] += double(until - now), now = until;
  };
  while (!starts.empty()) {
    const auto [ts, k] = starts.top();
    starts.pop();
    const OpRow op = *cur[k].Peek();
    cur[k].Pop();
    settle(std::max(ts, now));
    ends.push(op.end());
    if (at_level.size() <= ends.size()) at_level.resize(ends.size() + 1, 0);
    advance(k);
  }
  settle(std::numeric_limits<TimeNs>::max() / 2);
  double busy = 0;
  for (size_t k = 1; k < at_level.size(); ++k) busy += at_level[k];
  int level = 1;
  double at_least = 0;  // time with >= k ops running
  for (size_t k = at_level.size() - 1; k >= 1; --k) {
    at_least += at_level[k];
    if (at_least >= 0.05 * busy) {
      level = static_cast<int>(k);
      break;
    }
  }
  return std::max(1, level);
}

bool ReceivesAreWaits(const Capture& c, const TaskStats& t) {
  if (t.recv_busy_ns > 0) return true;
  // Any receive row (IsRecvOpType: RecvTensor, _Recv, _HostRecv), not TaskStats::recv_ns, which
  // counts RecvTensor only (review v65a item 3: a PS whose receives are _Recv rows).
  StringTest is_recv(c, IsRecvOpType);
  bool any = false;
  ForEachOpOfTask(c, t,
                  [&](const OpRow& op) { any = any || (op.dur() > 0 && is_recv(c.OpType(op))); });
  if (!any) return false;
  const int recv = AchievedConcurrency(c, t, Counted::kReceives);
  const int ops = AchievedConcurrency(c, t, Counted::kOpsNoReceives);
  return recv >= ops + kMinReceivesBeyondOps;
}

ReceiveTime ReceiveRows(const Capture& c, const TaskStats& t,
                        const std::function<void(const OpRow&, bool on_link)>& each) {
  ReceiveTime r;
  // Where they are waits, the task has a receive row of positive length (ReceivesAreWaits) or
  // TaskStats' receive busy time: busy_ns > 0.
  const bool waits = t.recv_busy_ns > 0 || ReceivesAreWaits(c, t);
  if (!waits && !each) return r;
  StringTest is_recv(c, IsRecvOpType);
  std::vector<std::pair<TimeNs, TimeNs>> iv;
  ForEachOpOfTask(c, t, [&](const OpRow& op) {
    const bool on_link = waits && is_recv(c.OpType(op));
    if (each) each(op, on_link);
    if (!on_link) return;
    r.sum_ns += double(op.dur());
    ++r.rows;
    if (op.dur() > 0 && t.recv_busy_ns <= 0) iv.emplace_back(op.start, op.end());
  });
  if (waits) r.busy_ns = t.recv_busy_ns > 0 ? t.recv_busy_ns : UnionLength(&iv);
  return r;
}

double ReceiveBusyShare(const Capture& c, const TaskStats& t, TimeNs span_ns) {
  if (span_ns <= 0) return 0;
  if (t.recv_busy_ns > 0) return std::min(1.0, t.recv_busy_pct / 100);
  return std::min(1.0, double(ReceiveRows(c, t).busy_ns) / double(span_ns));
}

}  // namespace tfdiag::replay_detail
