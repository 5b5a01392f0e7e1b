// Under SyncReplicasOptimizer every worker pulls at once after the barrier, so each answer waits
// behind the others' on its PS's NIC: a worker's measured transfer beyond the workers' shortest is
// that queue. A fix adding PS re-partitions every variable over the new count, so the busiest
// PS's NIC carries the job's bytes over the new count, and the queue shrinks with it
// (replay_plan.h HeldTransferScale); held as measured, the barrier kept the slowest worker's
// queue as the step after the fix (gen2 report33 7011, 1 -> 16 PS: +148% off its twin).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "analyzers/replay.h"
#include "analyzers/replay_plan.h"
#include "tests/replay_indep_util.h"
#include "tests/replay_util.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

// 20 synchronous workers of 10 ms compute on `ps` PS of one thread and 0.05 ms a pull each, PS p
// answering and receiving bytes[p] per worker step (default 4 MB: 0.61 s of queue at 1 Gbit/s for
// 19 workers, no cap); worker w's answers and gradients took 0.2 + w ms (its place in the burst's
// queue).
ReplayModel BurstJob(int ps, const std::vector<double>& bytes = {4e6}) {
  ReplayModel m;
  m.sync = true;
  m.measured_step_ns = 40e6;
  for (int p = 0; p < ps; ++p) {
    ReplayModel::Ps x;
    x.task = uint32_t(p);
    x.pull_ns = 0.05e6, x.push_ns = 0.05e6;
    x.threads = 1;
    x.burst_out = x.burst_in = size_t(p) < bytes.size() ? bytes[size_t(p)] : 0;
    x.var_ns = {0.1e6}, x.var_ops = {2}, x.var_parts = {1};
    m.ps.push_back(x);
  }
  AddWorkers(&m, 20, 10e6, 0);
  for (size_t w = 0; w < m.workers.size(); ++w) {
    m.workers[w].pull_xfer_ns = m.workers[w].push_xfer_ns = 0.2e6 + double(w) * 1e6;
  }
  return m;
}

Fix PsCount(int n) {
  Fix f;
  f.ps_count = n;
  return f;
}

TEST(ReplaySyncBurst, TheQueueShrinksWithTheBusiestPsBytes) {
  using replay_detail::HeldTransferScale;
  // One PS: its NIC carries everything, after the fix a sixteenth.
  EXPECT_DOUBLE_EQ(HeldTransferScale(BurstJob(1), PsCount(16)), 1.0 / 16);
  // Sized bytes: the busiest PS's after (the sum over the new count) over its own now.
  const ReplayModel sized = BurstJob(3, {3e6, 0.5e6, 0.5e6});
  EXPECT_NEAR(HeldTransferScale(sized, PsCount(6)), 4e6 / 6 / 3e6, 1e-12);
  // Even bytes: the busiest PS's share of the job's bytes after, 3 of 4 PS' worth over 1 now.
  EXPECT_DOUBLE_EQ(HeldTransferScale(BurstJob(3, {1e6, 1e6, 1e6}), PsCount(4)), 0.75);
  // Nothing scaled where the queue is not known to be a NIC's (no PS's bytes sized); nor for a
  // fix that does not add PS, goes asynchronous (no barrier, no burst), or in an asynchronous
  // job.
  EXPECT_EQ(HeldTransferScale(BurstJob(1, {}), PsCount(16)), 1);
  EXPECT_EQ(HeldTransferScale(BurstJob(1), PsCount(1)), 1);
  EXPECT_EQ(HeldTransferScale(BurstJob(1), Fix{}), 1);
  Fix held = PsCount(16);
  held.hold_burst_queue = true;
  EXPECT_EQ(HeldTransferScale(BurstJob(1), held), 1) << "the replay a prediction is checked on";

  Fix async = PsCount(16);
  async.to_async = true;
  EXPECT_EQ(HeldTransferScale(BurstJob(1), async), 1);
  ReplayModel unsynced = BurstJob(1);
  unsynced.sync = false;
  EXPECT_EQ(HeldTransferScale(unsynced, PsCount(16)), 1);
}

// A partition alone (hot-ps) moves the hot PS's share of its bytes off its NIC, spread over
// every PS; the queue shrinks with the busiest NIC after (session 60: indep report26 34014 and
// report34 42013, synchronous with a hot table on one PS, +39% and +40% off their twins with the
// queue held as measured, +12.5% and +13% scaled). Before, only a fix adding PS scaled it.
TEST(ReplaySyncBurst, APartitionShrinksTheQueueWithTheHotPsBytes) {
  using replay_detail::HeldTransferScale;
  Fix hot;
  hot.partition = {{0, 0.8}};
  // PS bytes 10 and 2 (MB): 8 leave ps:0, 4 to each PS: both carry 6, against 10 now.
  EXPECT_NEAR(HeldTransferScale(BurstJob(2, {10e6, 2e6}), hot), 0.6, 1e-12);
  // The bytes' own share where the fix gives it (Fix::partition_bytes), not the op time's.
  Fix bytes = hot;
  bytes.partition_bytes = {{0, 0.5}};
  // 5 of 10 leave ps:0, 2.5 to each PS: ps:0 carries 7.5.
  EXPECT_NEAR(HeldTransferScale(BurstJob(2, {10e6, 2e6}), bytes), 0.75, 1e-12);
  // Never above 1: a partition that leaves the busiest NIC as busy scales nothing.
  Fix cold;
  cold.partition = {{1, 1.0}};
  EXPECT_EQ(HeldTransferScale(BurstJob(2, {10e6, 2e6}), cold), 1);
  // Not with a new PS count or a spread over nodes beside it (partition_only), not held.
  Fix held = hot;
  held.hold_burst_queue = true;
  EXPECT_EQ(HeldTransferScale(BurstJob(2, {10e6, 2e6}), held), 1);
  Fix spread = hot;
  spread.spread_ps = true;
  EXPECT_EQ(HeldTransferScale(BurstJob(2, {10e6, 2e6}), spread), 1);
}

// The same on the job (indep report34 42013, spent: 21 synchronous workers, a hot table on ps:7 of
// 12 PS, a few workers' answers 12-21 ms late in the burst): hot-ps within 15% of its twin (it was
// +40%, the queue held as measured), and Fix first right.
TEST(ReplaySyncBurst, APartitionOfASyncJobsHotTableIsPredicted) {
  ExpectPredicted("seed:42013", "hot-ps", 15);
}

TEST(ReplaySyncBurst, TheShortestTransferStaysAndTheQueueBeyondItScales) {
  const ReplayModel m = BurstJob(1);
  const replay_detail::WorkerPlan as_is = replay_detail::PlanWorkers(m, Fix{});
  const replay_detail::WorkerPlan fixed = replay_detail::PlanWorkers(m, PsCount(4));
  ASSERT_EQ(fixed.pull_xfer.size(), 20u);
  EXPECT_DOUBLE_EQ(as_is.pull_xfer[19], 19.2e6) << "the capture as is holds what was measured";
  EXPECT_DOUBLE_EQ(fixed.pull_xfer[0], 0.2e6) << "the shortest transfer queued behind nothing";
  EXPECT_NEAR(fixed.pull_xfer[19], 0.2e6 + 19e6 / 4, 1);
  EXPECT_NEAR(fixed.push_xfer[19], 0.2e6 + 19e6 / 4, 1);
  // Over the PS links the measured transfers stay in the plan: the links replay their NIC time at
  // the new count, and only what the links leave held of them is scaled (ScaleBurstQueue there).
  ReplayModel linked = m;
  linked.link_bytes_per_ns = 1.25;
  EXPECT_DOUBLE_EQ(replay_detail::PlanWorkers(linked, PsCount(4)).pull_xfer[19], 19.2e6);
  std::vector<double> pull = {1e6, 3e6}, push = {0, 2e6};
  replay_detail::ScaleBurstQueue(linked, PsCount(4), &pull, &push);
  EXPECT_DOUBLE_EQ(pull[1], 1e6 + 2e6 / 4);
  EXPECT_DOUBLE_EQ(push[1], 2e6 / 4);
  EXPECT_DOUBLE_EQ(pull[0], 1e6);
  // A fix that also cuts a worker's receive time cuts the scaled transfer, never the queue's
  // reference (worker 19 is task 29).
  Fix cut = PsCount(4);
  cut.recv_cut = {{29, 0.5}};
  EXPECT_NEAR(replay_detail::PlanWorkers(m, cut).pull_xfer[19], (0.2e6 + 19e6 / 4) / 2, 1);
}

TEST(ReplaySyncBurst, OnlyWhatTheBurstsBytesCanQueueIsScaled) {
  // 1.25 kB a worker step each way: the 19 other workers' bytes take 0.19 ms on a 1 Gbit/s NIC,
  // so of worker 19's 19 ms beyond the shortest only 0.19 ms is taken as the NIC's queue.
  const ReplayModel m = BurstJob(1, {1250});
  EXPECT_NEAR(replay_detail::BurstQueueCapNs(m, true), 0.19e6, 1);
  const replay_detail::WorkerPlan fixed = replay_detail::PlanWorkers(m, PsCount(4));
  EXPECT_NEAR(fixed.pull_xfer[19], 19.2e6 - 0.19e6 * 3 / 4, 1);
  EXPECT_NEAR(fixed.pull_xfer[1], 1.2e6 - 0.19e6 * 3 / 4, 1);
  EXPECT_DOUBLE_EQ(fixed.pull_xfer[0], 0.2e6);
}

TEST(ReplaySyncBurst, TheBarrierNoLongerWaitsForTheWholeQueue) {
  // The barrier waits for worker 19's 38 ms of held transfers each step: as is the step is about
  // 48 ms. With 4 PS the queue is a quarter (about 10 ms beside 10 ms of compute).
  const ReplayModel m = BurstJob(1);
  const double now = ReplayMedianStep(m, Fix{}, 20);
  const double after = ReplayMedianStep(m, PsCount(4), 20);
  EXPECT_GT(now, 45e6);
  EXPECT_LT(after, 25e6);
  EXPECT_GT(after, 19e6) << "the compute and the shortest transfers stay";
}

// Against the independent simulator's twin (bench/twins/indep: its own NIC and PS model, no code
// shared): indep report29 37023 (spent), 2 PS of 8 threads, 40 synchronous workers of 25 Gbit/s
// NICs; ps-worker-ratio's 2 -> 8 PS was predicted +67% off its twin (43.0 ms) with each worker's
// burst queue held as measured, and is within 10% of it now (+1%).
TEST(ReplaySyncBurst, MorePsShortenTheSyncBurstsQueueAsTheTwinDoes) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed (bench/twins/indep)";
  ExpectBenchRowWithin("indep/run_indep.py", 37023, "ps-worker-ratio", 10);
}

// Against the second generator's twin (bench/twins/gen2: dataflow order, its own NIC model):
// gen2 report33 7011 (spent), one PS of 8 threads on 1 core, 77 synchronous workers of 10 Gbit/s
// NICs, a 2.3 MB dense kernel pulled by each: 1 -> 16 PS was predicted 140 ms against its twin's
// 57 ms (+148%) with the burst's queue held; within 25% now (-16%).
TEST(ReplaySyncBurst, SixteenPsForOneSpreadTheBurstAsTheSecondGeneratorsTwinDoes) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed (bench/twins/gen2)";
  ExpectBenchRowWithin("gen2/run_gen2.py", 7011, "ps-worker-ratio", 25);
}

}  // namespace
}  // namespace tfdiag::test
