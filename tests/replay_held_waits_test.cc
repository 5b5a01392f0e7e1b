// The waits the replay holds fixed per worker (Worker::recv_ns, tail_ns: what the PS model does
// not explain of its measured receive and idle time) on jobs of the second independent generator
// (bench/twins/gen2, written apart from tfdiag), whose captures' receive ops span only each
// answer's transfer: the PS's queue and service of a pull show as idle time before the worker's
// compute, not as receive time.
// gen2 report10 2217 (spent): 1 PS of 8 threads on 1 core, 7 asynchronous workers. The replayed
// pull wait (17 ms) was held again in the step's tail (the idle time less the replayed push wait):
// the replay as is +10.7% (61.2 ms against 55.3 ms), every prediction withheld by the as-is gate
// (kMaxBaselineMiss). Now that part of the replayed pull wait leaves the tail: +5.8%. A few seconds
// (the simulation).
#include <gtest/gtest.h>

#include <cmath>

#include "analyzers/replay.h"
#include "analyzers/replay_waits.h"
#include "tests/replay_util.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

TEST(ReplayHeldWaits, APullWaitNoReceiveSpansIsNotHeldAgainInTheTail) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen2 needs it";
  TempDir dir;
  SimJob j;
  ASSERT_NO_FATAL_FAILURE(LoadSimJob("gen2", 2217, dir, &j));
  ASSERT_FALSE(j.m.sync);
  const Baseline b = ReplayBaseline(j.m);
  EXPECT_LE(std::abs(b.miss), kMaxBaselineMiss)
      << b.replay_ns << " ns replayed against " << b.measured_ns;
}

// gen2 report10 2227 (spent): 14 PS of 6 threads on 1 core, 93 workers under
// SyncReplicasOptimizer: the replay as is +18% (44.6 ms against 37.8 ms), every prediction
// withheld; now +0.1%.
TEST(ReplayHeldWaits, UnderSyncReplicasThePullWaitIsNotHeldAgainEither) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen2 needs it";
  TempDir dir;
  SimJob j;
  ASSERT_NO_FATAL_FAILURE(LoadSimJob("gen2", 2227, dir, &j));
  ASSERT_TRUE(j.m.sync);
  const Baseline b = ReplayBaseline(j.m);
  EXPECT_LE(std::abs(b.miss), kMaxBaselineMiss)
      << b.replay_ns << " ns replayed against " << b.measured_ns;
}

// Where the idle time lies: 2217's workers wait for their pull's answers inside the step (the
// answers' receive ops end the waits) and for their applies at its end (the group_deps NoOp).
TEST(ReplayHeldWaits, IdleBeforeTheComputeIsTheWaitForThePull) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen2 needs it";
  TempDir dir;
  SimJob j;
  ASSERT_NO_FATAL_FAILURE(LoadSimJob("gen2", 2217, dir, &j));
  ASSERT_FALSE(j.m.workers.empty());
  for (const ReplayModel::Worker& w : j.m.workers) {
    const double share = replay_detail::PullSideIdleShare(*j.graph, w.task);
    EXPECT_GT(share, 0.2) << "worker task " << w.task;
    EXPECT_LT(share, 0.9) << "worker task " << w.task;
  }
}

}  // namespace
}  // namespace tfdiag::test
