#include "analyzers/replay_queued_waits.h"

#include <cmath>

namespace tfdiag {

QueuedWaits WithNoWaitsHeld(const ReplayModel& m) {
  QueuedWaits q;
  q.model = m;
  for (ReplayModel::Worker& w : q.model.workers) w.recv_ns = w.tail_ns = 0;
  q.base = ReplayBaseline(q.model);
  q.ok = q.base.replay_ns > 0 && std::abs(q.base.miss) <= kMaxBaselineMiss;
  return q;
}

}  // namespace tfdiag
