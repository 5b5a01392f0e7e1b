// straggler-worker's fix (Fix::median_workers): the slow workers at the median of the workers the
// fix leaves as they are, as the rule judges each straggler against the others' median.
#include <gtest/gtest.h>

#include "analyzers/replay.h"

namespace tfdiag::test {
namespace {

// `n` synchronous workers on one lightly loaded PS, each of 50 ms compute but the last, at
// `slow_ms`.
ReplayModel SyncWorkers(int n, double slow_ms) {
  ReplayModel m;
  m.sync = true;
  for (int w = 0; w < n; ++w) {
    ReplayModel::Worker x;
    x.task = uint32_t(w + 1);
    x.compute_ns = (w == n - 1 ? slow_ms : 50.0) * 1e6;
    m.workers.push_back(x);
  }
  ReplayModel::Ps p;
  p.task = uint32_t(n + 1);
  p.pull_ns = p.push_ns = 100e3;
  m.ps.push_back(p);
  m.measured_step_ns = m.worker_median_step_ns = slow_ms * 1e6;
  m.steps = int64_t(n) * 10;
  return m;
}

// gen2 report12 2625 (spent): 2 synchronous workers, one at half speed. The median of both
// workers is halfway to the straggler, so the fixed job was replayed at about 75 ms where the
// straggler at the other worker's speed steps in about 50 ms (predicted +29% off its twin).
TEST(ReplayStraggler, TwoWorkersFixedStragglerRunsAtTheOtherWorkersSpeed) {
  const ReplayModel m = SyncWorkers(2, 100);
  Fix fix;
  fix.median_workers = {m.workers[1].task};
  const double as_is = ReplayMedianStep(m, Fix{}, 40);
  const double fixed = ReplayMedianStep(m, fix, 40);
  EXPECT_GT(as_is, 95e6);
  EXPECT_LT(fixed, 55e6) << "as is " << as_is << ", fixed " << fixed;
  EXPECT_GT(fixed, 50e6);
}

// Naming every worker leaves the median of all of them (nothing else to compare with).
TEST(ReplayStraggler, EveryWorkerNamedKeepsTheMedianOfAll) {
  const ReplayModel m = SyncWorkers(3, 110);
  Fix fix;
  for (const ReplayModel::Worker& w : m.workers) fix.median_workers.push_back(w.task);
  const double fixed = ReplayMedianStep(m, fix, 40);
  EXPECT_GT(fixed, 50e6);
  EXPECT_LT(fixed, 55e6);
}

}  // namespace
}  // namespace tfdiag::test
