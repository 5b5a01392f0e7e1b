#include "analyzers/outlook_scaled.h"

#include <algorithm>
#include <vector>

#include "analyzers/outlook_sync.h"

namespace tfdiag {

ReplayModel Scaled(const ReplayModel& m, int workers, bool aggregate_kept) {
  ReplayModel s = m;
  std::vector<size_t> order(m.workers.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::nth_element(order.begin(), order.begin() + order.size() / 2, order.end(),
                   [&](size_t a, size_t b) {
                     return m.workers[a].input_ns + m.workers[a].compute_ns <
                            m.workers[b].input_ns + m.workers[b].compute_ns;
                   });
  const ReplayModel::Worker typical = m.workers[order[order.size() / 2]];
  s.workers.resize(std::min(m.workers.size(), size_t(workers)));
  while (s.workers.size() < size_t(workers)) s.workers.push_back(typical);
  // Under SyncReplicasOptimizer each PS applies the aggregated gradient once per global step:
  // Ps::push_ns is that apply over the captured workers (per worker step), and the replay runs
  // it once per global step as push_ns times the workers (PlanPs), or once per worker step after
  // going asynchronous (at its Ps::async_apply_share), so at another worker count it is rescaled to
  // keep the apply's own time (at 4x the workers it was replayed 4x as long, and the asynchronous
  // job's applies 4x too).
  // While the barrier stays (`aggregate_kept`), an embedding's aggregate holds the rows of every
  // replica it waits for, so that apply grows with the workers by the share AggregateGrowth
  // reads from the capture; a dense variable's keeps its shape.
  if (m.sync && !m.workers.empty()) {
    const double n = double(m.workers.size());
    const double k = n / double(workers);
    for (ReplayModel::Ps& p : s.ps) {
      const double g = aggregate_kept ? AggregateGrowth(p.async_apply_share, n) : 0;
      p.push_ns *= g + (1 - g) * k;
    }
  }
  return s;
}

}  // namespace tfdiag
