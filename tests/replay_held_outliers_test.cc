// What the replay holds fixed must not become the predicted step where it is an artefact of the
// capture rather than the job (analyzers/replay_plan.cc PlanWorkers, replay_links.cc):
// - under SyncReplicasOptimizer, a held receive wait that only a few workers carry (the steps
//   where the capture's PS served them last) is held at most at the workers' 90th percentile:
//   the barrier made it the whole step once a fix shortened everyone else's (gen2 report13 2811,
//   199 workers: 2 -> 40 PS predicted 3.9 s against its twin's 0.33 s); a fix's cut applies to
//   the held wait after the cap;
// - on the PS links, a push's transfer is replayed on its receive link and holds at most what
//   the answer's holds (Worker::push_xfer_ns is the pull's estimate, not measured);
// - a partition moves its PS's NIC bytes by the variable's share of the bytes, not of the op time
//   (2811: 59% of the op time, 89% of the bytes; predicted +32% off its twin).
#include <gtest/gtest.h>

#include <vector>

#include "analyzers/replay.h"
#include "analyzers/replay_link.h"
#include "analyzers/replay_plan.h"
#include "tests/replay_util.h"

namespace tfdiag::test {
namespace {

// 20 synchronous workers of 10 ms compute on one PS of 4 threads and 0.1 ms a pull; each holds
// 1 ms of receive wait, `outliers` of them `outlier_ns`.
ReplayModel SyncJob(int outliers, double outlier_ns) {
  ReplayModel m;
  m.sync = true;
  m.measured_step_ns = 12e6;
  ReplayModel::Ps p;
  p.pull_ns = 0.1e6, p.push_ns = 0.1e6;
  p.threads = 4;
  m.ps.push_back(p);
  AddWorkers(&m, 20, 10e6, 1e6);
  for (int w = 0; w < outliers; ++w) m.workers[size_t(w)].recv_ns = outlier_ns;
  return m;
}

TEST(ReplayHeldOutliers, AFewWorkersHeldWaitIsNotTheSyncStep) {
  const double plain = ReplayMedianStep(SyncJob(0, 0), Fix{}, 20);
  ASSERT_GT(plain, 10e6);
  // Two of 20 workers holding 30 ms: without the cap the barrier waits for them every step
  // (about 41 ms); held at the 90th percentile, the step is the others'.
  EXPECT_LT(ReplayMedianStep(SyncJob(2, 30e6), Fix{}, 20), 1.1 * plain);
  // Four of 20 (past a tenth) carry it: the wait is the job's, and stays.
  EXPECT_GT(ReplayMedianStep(SyncJob(4, 30e6), Fix{}, 20), 35e6);
  // Asynchronous, each worker keeps its own: the median worker's step is as without them.
  ReplayModel async = SyncJob(2, 30e6);
  async.sync = false;
  const std::vector<double> mean = ReplayWorkerMeanSteps(async, Fix{}, 20);
  ASSERT_EQ(mean.size(), 20u);
  EXPECT_GT(mean[0], 35e6) << "an asynchronous worker's own held wait stays its own";
}

TEST(ReplayHeldOutliers, AFixThatCutsACappedWaitKeepsItsShare) {
  // The two outliers' 30 ms are held at the 90th percentile (1 ms) as is; a fix that halves
  // their receive time halves what is held, not the 30 ms (15 ms, capped back to 1 ms: no saving).
  const ReplayModel m = SyncJob(2, 30e6);
  const replay_detail::WorkerPlan as_is = replay_detail::PlanWorkers(m, Fix{});
  ASSERT_EQ(as_is.recv.size(), 20u);
  EXPECT_NEAR(as_is.recv[0], 1e6, 1);
  Fix fix;
  fix.recv_cut = {{10, 0.5}, {11, 0.5}};
  const replay_detail::WorkerPlan fixed = replay_detail::PlanWorkers(m, fix);
  EXPECT_NEAR(fixed.recv[0], 0.5e6, 1);
  EXPECT_NEAR(fixed.recv[1], 0.5e6, 1);
  EXPECT_NEAR(fixed.recv[2], 1e6, 1) << "the workers the fix does not name keep theirs";
}

// One worker of 10 ms compute on one PS over 1 B/ns links: each answer 4.5 MB (4.5 ms on its
// link) and each gradient 0.1 MB (0.1 ms); the measured answer transfer 5 ms (0.5 ms of it not
// the link's: latency, the worker's side), and the push's estimate (the pull's) 5 ms as well.
ReplayModel LinkedJob() {
  ReplayModel m;
  m.measured_step_ns = 15e6;
  m.link_bytes_per_ns = 1;
  m.link_explained_out_ns = 4.5e6, m.link_explained_in_ns = 0.1e6;
  ReplayModel::Ps p;
  p.pull_ns = 0.05e6, p.push_ns = 0.05e6;
  p.threads = 1;
  p.out_bytes = 4.5e6, p.in_bytes = 0.1e6;
  m.ps.push_back(p);
  ReplayModel::Worker x;
  x.task = 10;
  x.compute_ns = 10e6;
  x.pull_xfer_ns = x.push_xfer_ns = 5e6;
  m.workers.push_back(x);
  return m;
}

TEST(ReplayHeldOutliers, APushHoldsNoMoreThanTheAnswersRestOfItsEstimate) {
  const double step = ReplayMedianStep(LinkedJob(), Fix{}, 20);
  // Compute 10 ms, the answer 4.5 ms on its link and 0.5 ms held, the gradient 0.1 ms on its link
  // and at most the answer's 0.5 ms held, the PS's 0.1 ms: about 15.7 ms. Holding the push
  // estimate's rest beyond its link (4.9 ms, the answer's link time copied) gave about 20 ms.
  EXPECT_GT(step, 15e6);
  EXPECT_LT(step, 16.5e6);
}

TEST(ReplayHeldOutliers, APartitionMovesTheBytesByTheirOwnShare) {
  ReplayModel m = LinkedJob();
  m.ps[0].out_bytes = m.ps[0].in_bytes = 0.1e6;
  ReplayModel::Ps idle;
  idle.task = 1;
  idle.threads = 1;
  m.ps.push_back(idle);
  Fix fix;
  fix.partition = {{0, 0.5}};  // half the op time
  replay_detail::PsPlan by_time = replay_detail::PlanPs(m, fix);
  ASSERT_EQ(by_time.out.size(), 2u);
  EXPECT_NEAR(by_time.out[0], 0.1e6 * (0.5 + 0.25), 1) << "no byte share: the op time's";
  fix.partition_bytes = {{0, 0.9}};  // 90% of the bytes
  const replay_detail::PsPlan by_bytes = replay_detail::PlanPs(m, fix);
  EXPECT_NEAR(by_bytes.out[0], 0.1e6 * (0.1 + 0.45), 1);
  EXPECT_NEAR(by_bytes.out[1], 0.1e6 * 0.45, 1);
  EXPECT_NEAR(by_bytes.in[0], 0.1e6 * (0.1 + 0.45), 1) << "gradients move with the answers";
  EXPECT_NEAR(by_bytes.pull[0] + by_bytes.pull[1], by_time.pull[0] + by_time.pull[1], 1);
  EXPECT_NEAR(by_bytes.pull[0], by_time.pull[0], 1) << "the op time still moves by its own share";
}

// A worker's NIC carries its transfers in the order they reach it: each is through no sooner than
// the bytes before it and its own take at the NIC's rate.
TEST(ReplayWorkerNics, AWorkerNicCarriesItsTransfersOneAfterAnother) {
  WorkerNic nic(1);  // 1 byte/ns
  EXPECT_DOUBLE_EQ(nic.Carry(0, 4.5e6), 4.5e6);
  EXPECT_DOUBLE_EQ(nic.Carry(1e6, 1e6), 5.5e6) << "behind the first";
  EXPECT_DOUBLE_EQ(nic.Carry(10e6, 1e6), 11e6) << "the NIC idle since 5.5 ms";
}

// A worker's gradients leave at once and share its NIC equally, whatever the PS order: of 1, 3 and
// 1 MB at 1 byte/ns, the two small ones are through at 3 ms (each a third of the NIC), the large
// one at 5 ms; what follows waits for all 5 MB.
TEST(ReplayWorkerNics, GradientsLeavingTogetherShareTheNic) {
  WorkerNic nic(1);
  std::vector<double> through;
  nic.CarryTogether(0, {1e6, 3e6, 1e6}, &through);
  ASSERT_EQ(through.size(), 3u);
  EXPECT_DOUBLE_EQ(through[0], 3e6);
  EXPECT_DOUBLE_EQ(through[1], 5e6);
  EXPECT_DOUBLE_EQ(through[2], 3e6);
  EXPECT_DOUBLE_EQ(nic.Carry(4e6, 1e6), 6e6) << "behind the 5 MB";
}

// LinkedJob's worker with its 4.5 MB answer split over 4 PS: each PS's link carries 4.5 MB, as
// before, but the worker's NIC takes all 18 MB. With the workers' NICs as links the pull takes 18
// ms on it; with the PS ends alone 4.5 ms, as if the worker could take every PS's answer at once at
// the full rate (indep report34 42008: 12 PS, 3 workers, partitioning a table predicted -21% off
// its twin). With one PS the worker's NIC is never the busier end and changes nothing.
TEST(ReplayWorkerNics, AWorkerTakesEveryPsAnswerOnItsOneNic) {
  ReplayModel m = LinkedJob();
  const ReplayModel::Ps one = m.ps[0];
  const double single = ReplayMedianStep(m, Fix{}, 20);
  m.worker_links = true;
  EXPECT_NEAR(ReplayMedianStep(m, Fix{}, 20), single, 1e3) << "one PS: its end is the bound";
  for (uint32_t t = 1; t < 4; ++t) {
    ReplayModel::Ps p = one;
    p.task = t;
    m.ps.push_back(p);
  }
  m.worker_links = false;
  const double ps_ends = ReplayMedianStep(m, Fix{}, 20);
  m.worker_links = true;
  const double worker_nic = ReplayMedianStep(m, Fix{}, 20);
  EXPECT_LT(ps_ends, 17e6) << "10 ms compute, 4.5 ms answers at once, 0.5 ms held, the pushes";
  EXPECT_GT(worker_nic, 28e6) << "18 ms for the worker's NIC to take the 4 answers";
  EXPECT_LT(worker_nic, 31e6);
}

}  // namespace
}  // namespace tfdiag::test
