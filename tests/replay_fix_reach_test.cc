// The saturated PS a fix leaves as it is bound the step after the fix (replay_fix_reach.h
// SaturatedUntouchedPs). A fix that moves a gather beside its table (gather-on-worker,
// Fix::ps_demand_add) takes the table's whole reads off that PS: its work after the fix, not
// its work now, decides whether it saturates (gen3 report33 7322: the reads were 866 us of
// ps:0's 1.36 ms per worker step; counted, the fix was bounded at 77% and withheld where its
// twin saves 88%).
#include "analyzers/replay_fix_reach.h"

#include <gtest/gtest.h>

#include "analyzers/replay.h"
#include "tests/replay_util.h"

namespace tfdiag::test {
namespace {

// 64 workers on 2 PS of one thread: ps:0 serves 1.3 ms a worker step (1.0 ms of it the
// table's reads), ps:1 0.1 ms.
ReplayModel GatherJob() {
  ReplayModel m;
  m.measured_step_ns = 400e6;
  for (int p = 0; p < 2; ++p) {
    ReplayModel::Ps x;
    x.task = uint32_t(p);
    x.pull_ns = p == 0 ? 1.1e6 : 0.05e6;
    x.push_ns = p == 0 ? 0.2e6 : 0.05e6;
    x.threads = 1;
    m.ps.push_back(x);
  }
  AddWorkers(&m, 64, 1e6, 0);
  return m;
}

TEST(ReplayFixReach, TheWorkAGatherTakesOffAPsDecidesItsSaturation) {
  const ReplayModel m = GatherJob();
  // At a 50 ms step ps:0's 1.3 ms x 64 workers is 166% busy: saturated, and a fix that does not
  // reach it leaves it so.
  double u = 0;
  EXPECT_EQ(SaturatedUntouchedPs(m, Fix{}, 0.9, &u, 50e6), 0);
  EXPECT_NEAR(u, 1.3e6 * 64 / 50e6, 1e-9);
  // The gather moved beside the table: ps:0 loses its 1.0 ms of reads (and gains the gather's
  // 0.05 ms): 0.35 ms x 64 is 45% of the step, under saturation.
  Fix gather;
  gather.ps_demand_add.emplace_back(0, -0.95e6);
  EXPECT_EQ(SaturatedUntouchedPs(m, gather, 0.9, &u, 50e6), -1);
  EXPECT_EQ(u, 0);
  // Added work counts too: 1.3 + 0.2 ms x 64 at a 100 ms step is 96%.
  Fix more;
  more.ps_demand_add.emplace_back(0, 0.2e6);
  EXPECT_EQ(SaturatedUntouchedPs(m, more, 0.9, &u, 100e6), 0);
  EXPECT_NEAR(u, 1.5e6 * 64 / 100e6, 1e-9);
  EXPECT_EQ(SaturatedUntouchedPs(m, Fix{}, 0.9, &u, 100e6), -1) << "83% without it";
  // Another PS's demand leaves ps:0's as it is, and the change reported is none.
  Fix other;
  other.ps_demand_add.emplace_back(1, -0.05e6);
  double changed = -1;
  EXPECT_EQ(SaturatedUntouchedPs(m, other, 0.9, &u, 50e6, &changed), 0);
  EXPECT_EQ(changed, 0);
  EXPECT_EQ(SaturatedUntouchedPs(m, more, 0.9, &u, 100e6, &changed), 0);
  EXPECT_EQ(changed, 0.2e6) << "the change the bound's text names";
  // A PS with no work captured that the gathers load (ps:0 idle here too): 0.8 ms x 64 at a
  // 50 ms step is 102%.
  Fix onto_idle;
  onto_idle.ps_demand_add.emplace_back(1, 0.8e6);
  ReplayModel idle = m;
  for (ReplayModel::Ps& p : idle.ps) p.pull_ns = p.push_ns = 0;
  EXPECT_EQ(SaturatedUntouchedPs(idle, onto_idle, 0.9, &u, 50e6), 1);
  EXPECT_NEAR(u, 0.8e6 * 64 / 50e6, 1e-9);
  // A fix that partitions ps:0's variables reaches it: not bounded by it whatever its load.
  Fix partition;
  partition.partition.emplace_back(0, 0.9);
  EXPECT_EQ(SaturatedUntouchedPs(m, partition, 0.9, &u, 50e6), -1);
}

}  // namespace
}  // namespace tfdiag::test
