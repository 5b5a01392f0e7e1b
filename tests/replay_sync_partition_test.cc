// A partition under SyncReplicasOptimizer (analyzers/replay_plan.cc PlanPs): the hot variable's
// share is of its PS's op time, accumulators included (VariableLoad::share), while the replayed
// queue leaves the accumulator ops out (ReplayModel::Ps::sync_ns), so the share the plan moves is
// of the queue. gen2 report25 5423 (spent; 255 workers, sync): a read 63% of ps:0's op time and
// all of its queue beside the accumulators' 37% was moved at 63% of the queue, and the partition
// was predicted +92% off its twin (+71% with the whole read moved).
#include <gtest/gtest.h>

#include "analyzers/replay.h"
#include "analyzers/replay_plan.h"

namespace tfdiag::test {
namespace {

// Two PS: ps:0 with 60 us of reads of one variable and 40 us of its accumulators' ops a worker
// step (sync_ns, part of pull_ns), ps:1 with 10 us of reads; no applies, no fixed cost per op.
ReplayModel SyncPs(bool sync) {
  ReplayModel m;
  m.sync = sync;
  for (uint32_t t = 0; t < 2; ++t) {
    ReplayModel::Ps p;
    p.task = t;
    p.pull_ns = t == 0 ? 100e3 : 10e3;
    p.sync_ns = t == 0 && sync ? 40e3 : 0;
    p.var_ns = {t == 0 ? 60e3 : 10e3};
    p.var_ops = {1};
    p.var_parts = {1};
    m.ps.push_back(p);
  }
  return m;
}

// The variable: 60% of ps:0's op time, cut over both PS.
Fix PartitionPs0() {
  Fix fix;
  fix.partition = {{0, 0.6}};
  return fix;
}

TEST(ReplaySyncPartition, TheWholeReadMovesBesideTheAccumulators) {
  const replay_detail::PsPlan plan = replay_detail::PlanPs(SyncPs(true), PartitionPs0());
  ASSERT_EQ(plan.pull.size(), 2u);
  // ps:0's queue is its 60 us read alone (the accumulators are not queued under sync): all of it
  // moves, 30 us to each PS.
  EXPECT_NEAR(plan.pull[0], 30e3, 1) << "nothing of the read stays beside its parts";
  EXPECT_NEAR(plan.pull[1], 40e3, 1);
}

TEST(ReplaySyncPartition, AnAsynchronousPsMovesTheShareOfItsOpTime) {
  // Without accumulators the queue is the op time: 60 of 100 us move, 30 us to each PS.
  const replay_detail::PsPlan plan = replay_detail::PlanPs(SyncPs(false), PartitionPs0());
  ASSERT_EQ(plan.pull.size(), 2u);
  EXPECT_NEAR(plan.pull[0], 70e3, 1);
  EXPECT_NEAR(plan.pull[1], 40e3, 1);
}

}  // namespace
}  // namespace tfdiag::test
