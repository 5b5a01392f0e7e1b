// A PS on a slow host (ReplayModel::Ps::host_slowdown) in the replay's PS plans: work a fix moves
// onto it runs that much slower there, work moved off it runs at the others' speed, and a PS a
// PS-count fix adds runs at the others' speed (analyzers/replay_plan.cc PlanPs). Indep report8's
// 16007 (a PS at 0.52x the others' speed) was predicted for 8 -> 24 PS as if its share ran at
// the others' speed: -20% off its twin with confidence high.
#include <gtest/gtest.h>

#include "analyzers/replay.h"
#include "analyzers/replay_plan.h"

namespace tfdiag::test {
namespace {

// Two PS of 30 us reads and 70 us applies a worker step of work at the others' speed; ps:1's
// host runs it `slow` times longer (its captured op times are that much longer).
ReplayModel TwoPs(double slow) {
  ReplayModel m;
  for (uint32_t t = 0; t < 2; ++t) {
    ReplayModel::Ps p;
    p.task = t;
    const double x = t == 1 ? slow : 1.0;
    p.pull_ns = 30e3 * x, p.push_ns = 70e3 * x;
    p.host_slowdown = x;
    m.ps.push_back(p);
  }
  return m;
}

TEST(ReplayHostSpeed, MorePsKeepTheSlowHostsShareSlow) {
  Fix fix;
  fix.ps_count = 4;
  const replay_detail::PsPlan plan = replay_detail::PlanPs(TwoPs(2), fix);
  ASSERT_EQ(plan.pull.size(), 4u);
  // 200 us of work at the others' speed, 50 us a PS; ps:1 (kept on its host) takes 100 us.
  for (size_t p = 0; p < 4; ++p) {
    const double want = p == 1 ? 100e3 : 50e3;
    EXPECT_NEAR(plan.pull[p] + plan.push[p], want, 1) << "ps:" << p;
  }
  EXPECT_NEAR(plan.pull[0], 15e3, 1) << "reads and applies keep their shares";
}

TEST(ReplayHostSpeed, ASlowHostMovedToAFastOneLeavesNoSlowdown) {
  Fix fix;
  fix.ps_count = 4;
  fix.host_speedup = {{1, 2.0}};  // slow-ps-host's fix: the task on a host at the others' speed
  const replay_detail::PsPlan plan = replay_detail::PlanPs(TwoPs(2), fix);
  ASSERT_EQ(plan.pull.size(), 4u);
  for (size_t p = 0; p < 4; ++p) EXPECT_NEAR(plan.pull[p] + plan.push[p], 50e3, 1) << "ps:" << p;
}

TEST(ReplayHostSpeed, APartitionSpreadOntoTheSlowHostRunsSlowerThere) {
  Fix fix;
  fix.partition = {{0, 1.0}};  // all of ps:0's work (one hot variable) over both PS
  fix.rebalance = true;        // parts that exist already: no part op added
  const replay_detail::PsPlan plan = replay_detail::PlanPs(TwoPs(2), fix);
  ASSERT_EQ(plan.pull.size(), 2u);
  // ps:0's 100 us: 50 us stays, 50 us lands on ps:1 and takes 100 us there, beside its own 200.
  EXPECT_NEAR(plan.pull[0] + plan.push[0], 50e3, 1);
  EXPECT_NEAR(plan.pull[1] + plan.push[1], 300e3, 1);
}

TEST(ReplayHostSpeed, DroppingTheSlowPsRunsItsWorkAtTheOthersSpeed) {
  Fix fix;
  fix.drop_ps = {1};
  const replay_detail::PsPlan plan = replay_detail::PlanPs(TwoPs(2), fix);
  ASSERT_EQ(plan.pull.size(), 1u);
  EXPECT_NEAR(plan.pull[0] + plan.push[0], 200e3, 1) << "ps:1's 200 us are 100 us on ps:0's host";
}

}  // namespace
}  // namespace tfdiag::test
