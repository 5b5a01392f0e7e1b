// The outlook's bound from a slow PS host kept after Fix first (SlowHostCap,
// analyzers/outlook_links.h) under a new PS count: every variable cut into one part per PS, each
// part op at its PS's fixed cost per op, as the replay's plan adds them (PlanPs,
// analyzers/replay_plan.cc). Left out, the cap after the fix read the part ops as free (indep
// report31 39002, spent: 3254 steps/s at 40 workers against a simulated 1434).
#include <gtest/gtest.h>

#include <cmath>
#include <utility>
#include <vector>

#include "analyzers/outlook_links.h"

namespace tfdiag {
namespace {

// Two PS of 2 threads, 1 ms of work each per worker step in 4 whole variables (one op each per
// step), ps:1 on a host 2x slower (its 1 ms is 0.5 ms at the others' speed), each op's fixed
// cost 50 us.
ReplayModel SlowHostModel() {
  ReplayModel m;
  m.workers.resize(4);
  for (uint32_t t = 0; t < 2; ++t) {
    ReplayModel::Ps p;
    p.task = t;
    p.threads = 2;
    p.pull_ns = 0.5e6;
    p.push_ns = 0.5e6;
    p.var_ops = {1, 1, 1, 1};
    p.var_parts = {1, 1, 1, 1};
    p.op_floor_ns = 50e3;
    p.host_slowdown = t == 1 ? 2.0 : 1.0;
    m.ps.push_back(p);
  }
  return m;
}

// 2 -> 4 PS: 1.5 ms of work at normal speed, plus 8 variables x 3 more parts x 50 us = 1.2 ms of
// part ops, 2.7 ms over 4 PS; ps:1 keeps its host: 0.675 ms x 2 on 2 threads, a cap of 2 / 1.35
// ms of worker steps. Without the part ops: 2 / 0.75 ms.
TEST(OutlookSlowHostCap, ANewPsCountPaysItsPartOpsOnTheSlowHost) {
  const ReplayModel m = SlowHostModel();
  Fix fix;
  fix.ps_count = 4;
  int ps = -2;
  const double cap = SlowHostCap(m, fix, {}, &ps);
  EXPECT_EQ(ps, 1);
  EXPECT_NEAR(cap, 2 / 1.35e6, 1e-12);
}

// With no PS on a slow host the part ops bound nothing here (the replay's plan still pays them).
TEST(OutlookSlowHostCap, NoSlowHostLeftNoBound) {
  ReplayModel m = SlowHostModel();
  m.ps[1].host_slowdown = 1.0;
  Fix fix;
  fix.ps_count = 4;
  int ps = -2;
  EXPECT_TRUE(std::isinf(SlowHostCap(m, fix, {}, &ps)));
  EXPECT_EQ(ps, -1);
}

}  // namespace
}  // namespace tfdiag
