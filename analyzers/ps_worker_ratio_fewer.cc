#include "analyzers/ps_worker_ratio_fewer.h"

#include <algorithm>
#include <vector>

#include "analyzers/ps_worker_ratio_measured.h"
#include "analyzers/replay_dispatch.h"

namespace tfdiag {

FewerPsCheck CheckFewerPs(const ReplayModel& m, int band_count, double max_loss) {
  FewerPsCheck r;
  const int ps = static_cast<int>(m.ps.size());
  if (m.workers.empty() || band_count < 1 || band_count >= ps) {
    r.why_not = "no fewer count to check";
    return r;
  }
  const Baseline base = ReplayBaseline(m);
  r.why_not = FifoRefused(m, base);
  if (!r.why_not.empty()) return r;
  r.judged = true;
  const int steps = ReplaySteps(m);
  // The readings ComputeImpacts weighs for a PS count (replay_impact.cc): the PS's own cost and
  // TF's dispatch cost per part op, and where the capture does not show the order its PS serve
  // in, a random waiting op at both; each against its own replay as is.
  const ReplayModel dear = AtDispatchCost(m);
  std::vector<const ReplayModel*> readings{&m, &dear};
  ReplayModel any, any_dear;
  if (OrderUnseenReadings(m)) {
    AnyOrderReadings(m, &any, &any_dear);
    readings.push_back(&any);
    readings.push_back(&any_dear);
  }
  // Each reading's replay as is; the first's is the baseline's (ReplayBaseline: ReplaySteps).
  std::vector<double> now{base.replay_ns};
  for (size_t i = 1; i < readings.size(); ++i) {
    now.push_back(ReplayMedianStep(*readings[i], Fix{}, steps));
  }
  // The largest loss of the readings: a count is suggested only where none shows it costing time.
  auto loss = [&](int n) {
    Fix fix;
    fix.ps_count = n;
    double most = -1;
    for (size_t i = 0; i < readings.size(); ++i) {
      if (now[i] > 0)
        most = std::max(most, ReplayMedianStep(*readings[i], fix, steps) / now[i] - 1);
    }
    return most;
  };
  r.band_loss = loss(band_count);
  if (r.band_loss <= max_loss) {
    r.count = band_count;
    return r;
  }
  r.least_loss = band_count == ps - 1 ? r.band_loss : loss(ps - 1);
  if (r.least_loss > max_loss) return r;  // every fewer count loses
  int lo = band_count, hi = ps - 1;       // loss(lo) > max_loss >= loss(hi)
  while (hi - lo > 1) {
    const int mid = lo + (hi - lo) / 2;
    (loss(mid) > max_loss ? lo : hi) = mid;
  }
  r.count = hi;
  return r;
}

}  // namespace tfdiag
