// The waits the replay holds fixed per worker (Worker::recv_ns, tail_ns: what the PS model does
// not explain of its measured receive and idle time) on captures whose receive ops span only each
// answer's transfer (bench/twins/gen2, written apart from tfdiag; the samples' hot-ps demo): the
// PS's queue and service of a pull show as idle time before the worker's compute, not as receive
// time, and the replayed pull wait was held again in the step's tail. And on captures whose
// receive ops span the wait (the independent suite; gen2 with its PS links saturated), where the
// correction must not apply (replay_waits.h UnspannedPullIdle).
// gen2 report10 2217 (spent): 1 PS of 8 threads on 1 core, 7 asynchronous workers. The replayed
// pull wait (17 ms) was held again in the step's tail (the idle time less the replayed push wait):
// the replay as is +10.7% (61.2 ms against 55.3 ms), every prediction withheld by the as-is gate
// (kMaxBaselineMiss). Now that part of the replayed pull wait leaves the tail: +5.8%. Each test a
// few seconds to half a minute (the simulation).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "analyzers/capture_queries.h"
#include "analyzers/replay.h"
#include "analyzers/replay_waits.h"
#include "core/median.h"
#include "tests/replay_util.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

// UnspannedPullIdle of worker `task` of `j` on its measured medians per step (idle and receive
// time, as BuildReplayModel reads them from the step graph).
double Unspanned(const SimJob& j, uint32_t task) {
  const auto [b, e] = j.graph->TaskSteps(task);
  std::vector<double> idle, recv;
  for (uint32_t s = b; s < e; ++s) {
    idle.push_back(double(j.graph->steps()[s].idle_ns));
    recv.push_back(double(j.graph->steps()[s].recv_ns));
  }
  return replay_detail::UnspannedPullIdle(*j.graph, task, MedianInPlace(&idle),
                                          MedianInPlace(&recv));
}

// gen2 seed `seed` simulated and its model built: whether the model is under SyncReplicas
// (`sync`) and its replay as is within kMaxBaselineMiss of the measured step.
void ExpectGen2ReplayFits(int seed, bool sync) {
  TempDir dir;
  SimJob j;
  ASSERT_NO_FATAL_FAILURE(LoadSimJob("gen2", seed, dir, &j));
  ASSERT_EQ(j.m.sync, sync);
  const Baseline b = ReplayBaseline(j.m);
  EXPECT_LE(std::abs(b.miss), kMaxBaselineMiss)
      << b.replay_ns << " ns replayed against " << b.measured_ns;
}

// `path`'s capture loaded into `*j`, its replay model built.
void LoadCapture(const std::string& path, SimJob* j) {
  j->c = LoadOrDie({path});
  j->stats = ComputeTaskStats(j->c);
  j->graph = std::make_unique<StepGraph>(StepGraph::Build(j->c));
  j->m = BuildReplayModel(j->In());
}

TEST(ReplayHeldWaits, APullWaitNoReceiveSpansIsNotHeldAgainInTheTail) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen2 needs it";
  ExpectGen2ReplayFits(2217, false);
}

// gen2 report10 2227 (spent): 14 PS of 6 threads on 1 core, 93 workers under
// SyncReplicasOptimizer: the replay as is +18% (44.6 ms against 37.8 ms), every prediction
// withheld; now +0.1%.
TEST(ReplayHeldWaits, UnderSyncReplicasThePullWaitIsNotHeldAgainEither) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen2 needs it";
  ExpectGen2ReplayFits(2227, true);
}

// Where the idle time lies: 2217's workers wait for their pull's answers inside the step (the
// answers' receive ops end the waits) and for their applies at its end (the group_deps NoOp).
// The pull-side idle time (14-27 ms) is longer than the receive time (3.2 ms): each worker's is
// the pull wait no receive op spans.
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
  for (const TaskStats& t : j.stats.tasks) {
    if (!IsTrainingTask(t.kind)) continue;
    EXPECT_GT(Unspanned(j, t.task), 0) << "worker task " << t.task;
  }
}

// The samples' simulator writes its receive ops the same way (each spans the answer's transfer,
// 1.7 ms; the PS's queue and service of the pull, 2.7-13.8 ms, is idle time): the README's demo
// capture. The replay as is was +8% (169.8 ms against the workers' median 158.0 ms), which lowers
// the prediction's and the outlook's confidence (a miss over 5%: replay_impact.cc, outlook.cc);
// now +1%, and the demo's prediction (145.4 ms) is 2.8% off its twin (149.6 ms, README) where it
// was 3.9% (143.7 ms).
TEST(ReplayHeldWaits, TheDemoSamplesPullWaitIsNotHeldAgain) {
  SimJob j;
  LoadCapture(std::string(SourceDir()) + "/samples/hot-ps.tf1.json.gz", &j);
  ASSERT_FALSE(j.m.workers.empty());
  for (const ReplayModel::Worker& w : j.m.workers) {
    EXPECT_GT(Unspanned(j, w.task), 0) << "worker task " << w.task;
  }
  const Baseline b = ReplayBaseline(j.m);
  EXPECT_LE(std::abs(b.miss), 0.05) << b.replay_ns << " ns replayed against " << b.measured_ns;
}

// Captures whose receive ops span the wait keep their held waits as they were: the idle time
// inside the step is a few microseconds between ops, or a part of a wait a receive op spans
// nearly whole. Independent suite report12 20020 (spent; 4 PS of one thread, 10 asynchronous
// workers): with the correction applied regardless, 2 us per worker left the tail, the FIFO
// replay was chosen over the out-of-order one and the replay as is went from -3.2% to -8.4%,
// its unexplained wait from 7% to 29% (tests/outlook_confidence_test.cc pins the outcome).
TEST(ReplayHeldWaits, WhereReceiveOpsSpanTheWaitNothingMoves) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: the independent suite needs it";
  TempDir dir;
  const std::string path = dir.File("indep_20020.json");
  const RunResult r = RunShell("cd " + std::string(SourceDir()) +
                               "/bench/twins/indep && python3 -c 'import jobs, indepsim; "
                               "indepsim.simulate(jobs.draw(20020), \"" +
                               path + "\")'");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  SimJob j;
  LoadCapture(path, &j);
  ASSERT_FALSE(j.m.workers.empty());
  for (const TaskStats& t : j.stats.tasks) {
    if (!IsTrainingTask(t.kind)) continue;
    EXPECT_EQ(Unspanned(j, t.task), 0) << "worker task " << t.task;
  }
  EXPECT_TRUE(j.m.any_order);
  EXPECT_LE(std::abs(ReplayBaseline(j.m).miss), 0.05);
}

// gen2 report8 1813 (spent): 8 PS, 46 workers, the PS links saturated. Its receive ops span the
// transfer, which is nearly the whole wait (about 1 s); the idle time inside the step, at most
// 116 ms, is not the PS's queue: nothing leaves the tail (tests/ps_link_saturated_test.cc pins
// the outcome).
TEST(ReplayHeldWaits, ASaturatedLinksReceiveSpansTheWaitToo) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen2 needs it";
  TempDir dir;
  SimJob j;
  ASSERT_NO_FATAL_FAILURE(LoadSimJob("gen2", 1813, dir, &j));
  for (const TaskStats& t : j.stats.tasks) {
    if (!IsTrainingTask(t.kind)) continue;
    EXPECT_EQ(Unspanned(j, t.task), 0) << "worker task " << t.task;
  }
}

}  // namespace
}  // namespace tfdiag::test
