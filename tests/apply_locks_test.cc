// Applies serialized by their variable's lock (analyzers/apply_locks.h): read from row-built PS
// ops where a node's overlapping applies end one alone-time apart, not where they run at once;
// the cores fit cuts the waits out of the PS's op time; every fix moves the locked work and a
// push waits for the lock on its thread; and on spent gen3 jobs (its simulator
// holds the variable's mutex in every apply, as TF's use_locking=True kernels do), the replay
// that reads the lock predicts what the one that took the waits for work got wrong or withheld.
#include "analyzers/apply_locks.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <cmath>
#include <string>
#include <vector>

#include "analyzers/replay_cores.h"
#include "analyzers/replay_plan.h"
#include "analyzers/task_stats.h"
#include "core/capture_builder.h"
#include "tests/replay_util.h"

namespace tfdiag {
namespace {

constexpr TimeNs kUs = 1000;

// A PS whose node "emb/ApplyAdam" runs 1 ms alone: per round, one apply alone, then three that
// reach it at once and end `apart` us after one another (1000 us: one at a time under a lock;
// less: at once, slowed a little by each other).
Capture Applies(int rounds, TimeNs apart) {
  CaptureBuilder b;
  StatusOr<DeviceName> d = ParseDeviceName("/job:ps/replica:0/task:0/device:CPU:0");
  EXPECT_TRUE(d.ok());
  const uint32_t dev = b.AddDevice(*d);
  const uint32_t name = b.Intern("emb/ApplyAdam"), type = b.Intern("ApplyAdam");
  for (int k = 0; k < rounds; ++k) {
    const TimeNs t = k * 10000 * kUs;
    b.AddOp(t, 1000 * kUs, dev, 0, name, type, nullptr, 0);  // alone
    for (int i = 0; i < 3; ++i) {
      b.AddOp(t + 5000 * kUs, 1000 * kUs + i * apart * kUs, dev, 0, name, type, nullptr, 0);
    }
  }
  return b.Finish();
}

TEST(ApplyLocks, AppliesThatEndOneAtATimeWaitedOnTheLock) {
  const Capture c = Applies(8, 1000);
  const TaskStatsTable st = ComputeTaskStats(c);
  const TaskStats* ps = st.Find("ps:0");
  ASSERT_NE(ps, nullptr);
  const ApplyLockWaits locks = ReadApplyLockWaits(c, *ps);
  EXPECT_EQ(locks.nodes, 1);
  // Per round: the second of the three waited 1 ms, the third 2 ms; every apply did 1 ms of work.
  EXPECT_EQ(locks.wait_ns, 8 * 3000 * kUs);
  EXPECT_EQ(locks.locked_ns, 8 * 4 * 1000 * kUs);
  EXPECT_EQ(locks.wait.size(), 16u);
  // The cores fit cuts the waits when asked, and only then.
  const PsOpLoad cut = FitPsCores(c, *ps, 0, true), timed = FitPsCores(c, *ps);
  EXPECT_NEAR(cut.op_ns, 8 * 4000.0 * kUs, 1);
  EXPECT_NEAR(cut.lock_wait_ns, 8 * 3000.0 * kUs, 1);
  EXPECT_NEAR(timed.op_ns, 8 * 7000.0 * kUs, 1);
  EXPECT_EQ(timed.lock_wait_ns, 0);
}

TEST(ApplyLocks, AppliesAtOnceShowNoLock) {
  // Ending 200 us apart, the three ran at once: no lock, whatever their overlap.
  const Capture c = Applies(8, 200);
  const TaskStatsTable st = ComputeTaskStats(c);
  const ApplyLockWaits locks = ReadApplyLockWaits(c, *st.Find("ps:0"));
  EXPECT_EQ(locks.nodes, 0);
  EXPECT_EQ(locks.wait_ns, 0);
  EXPECT_TRUE(locks.wait.empty());
}

TEST(ApplyLocks, TooFewOverlapsTellNothing) {
  // Two rounds: four applies overlap an earlier one, under kLockMinOverlaps.
  const Capture c = Applies(2, 1000);
  const TaskStatsTable st = ComputeTaskStats(c);
  EXPECT_EQ(ReadApplyLockWaits(c, *st.Find("ps:0")).nodes, 0);
}

// Two PS: ps 0's applies 10 us per worker step, 8 of them under a lock; ps 1's 2, none locked.
ReplayModel TwoLockedPs() {
  ReplayModel m;
  m.ps.resize(2);
  m.ps[0].task = 1, m.ps[0].push_ns = 10, m.ps[0].locked_ns = 8;
  m.ps[1].task = 2, m.ps[1].push_ns = 2;
  return m;
}

TEST(ApplyLocks, EveryFixMovesTheLockedWork) {
  using replay_detail::PlanPs;
  const ReplayModel m = TwoLockedPs();
  const replay_detail::PsPlan as_is = PlanPs(m, Fix{});
  EXPECT_EQ(as_is.locked, (std::vector<double>{8, 0}));
  Fix more;  // 2 -> 4 PS: every variable over 4 parts, the locked work too
  more.ps_count = 4;
  const replay_detail::PsPlan four = PlanPs(m, more);
  EXPECT_EQ(four.locked, (std::vector<double>{2, 2, 2, 2}));
  EXPECT_EQ(four.push, (std::vector<double>{3, 3, 3, 3}));
  Fix drop;  // ps 1 dropped: its applies (none locked) join ps 0's
  drop.drop_ps = {2};
  const replay_detail::PsPlan one = PlanPs(m, drop);
  EXPECT_EQ(one.locked, (std::vector<double>{8}));
  EXPECT_EQ(one.push, (std::vector<double>{12}));
  Fix part;  // half of ps 0's work spread over both PS, its locked half too
  part.partition = {{1, 0.5}};
  const replay_detail::PsPlan spread = PlanPs(m, part);
  EXPECT_EQ(spread.locked, (std::vector<double>{6, 2}));
  EXPECT_EQ(spread.push, (std::vector<double>{7.5, 4.5}));
  Fix cut;  // lazy Adam: 6 us less of ps 0's applies, off the locked ones first
  cut.ps_demand_cut = {{1, 6}};
  EXPECT_EQ(PlanPs(m, cut).locked, (std::vector<double>{2, 0}));
  ReplayModel sync = m;  // the chief's aggregated applies: no lock read
  sync.sync = true;
  for (const double l : PlanPs(sync, Fix{}).locked) EXPECT_EQ(l, 0);
}

TEST(ApplyLocks, APushWaitsForTheLockOnItsThread) {
  double lock_free = 1;
  // Reaching the PS at 0, 5 us of applies, 3 under the lock (free at 1): done at 6.
  EXPECT_EQ(replay_detail::RunUnderLock(0, 5, 3, &lock_free), 6);
  EXPECT_EQ(lock_free, 4);
  // The next at 2 waits for the lock until 4.
  EXPECT_EQ(replay_detail::RunUnderLock(2, 5, 3, &lock_free), 9);
  EXPECT_EQ(lock_free, 7);
  // Nothing locked: no wait.
  EXPECT_EQ(replay_detail::RunUnderLock(2, 5, 0, &lock_free), 7);
  EXPECT_EQ(lock_free, 7);
}

}  // namespace

namespace test {
namespace {

// gen3 report39 8509 (spent): 1 PS of 2 threads, a dense Adam over an 18 MB embedding whose
// applies wait on its lock (30% of their op time). Taken as work, the waits put the replay as is
// 25% over the step and nothing was predicted; read as the lock, lazy Adam is predicted within
// 10% of its twin and named first.
TEST(ApplyLocksGen3, DenseAdamUnderItsLockIsPredicted) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen3 needs it";
  rapidjson::Document d;
  std::string out;
  const rapidjson::Value* row = nullptr;
  ASSERT_NO_FATAL_FAILURE(
      RunBenchRow("gen3/run_gen3.py", 8509, "dense-optimizer-on-embedding", true, &d, &out, &row));
  EXPECT_LE(std::abs((*row)["err_pct"].GetDouble()), 10) << out;
  EXPECT_NE(std::string((*row)["why"].GetString()).find("under their variable's lock on 1 PS"),
            std::string::npos)
      << (*row)["why"].GetString();
  ASSERT_TRUE(d["jobs"][0]["fix_first"].IsString()) << out;
  EXPECT_STREQ(d["jobs"][0]["fix_first"].GetString(), "dense-optimizer-on-embedding") << out;
}

// gen3 report39 8501 (spent): 8 PS of 4 threads on 2 cores, each holding a part of a dense-Adam
// embedding whose applies wait on its lock (68% of their op time). Taken as work, the waits made
// 8 -> 12 PS +62.5% off its twin; read as the lock, within 10%.
TEST(ApplyLocksGen3, PsCountOverLockedPartsIsPredicted) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen3 needs it";
  ExpectBenchRowWithin("gen3/run_gen3.py", 8501, "ps-worker-ratio", 10);
}

// gen3 report39 8524 (spent): one PS's applies show the lock, but read, the replay still leaves
// 36% of the step unexplained: the lock is not read (the checks say so), and the hot-PS
// partition stays predicted.
TEST(ApplyLocksGen3, ALockThatExplainsNoWaitsIsNotRead) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen3 needs it";
  rapidjson::Document d;
  std::string out;
  const rapidjson::Value* row = nullptr;
  ASSERT_NO_FATAL_FAILURE(RunBenchRow("gen3/run_gen3.py", 8524, "hot-ps", true, &d, &out, &row));
  EXPECT_LE(std::abs((*row)["err_pct"].GetDouble()), 25) << out;
  const std::string why = (*row)["why"].GetString();
  EXPECT_NE(why.find("lock on 1 PS not read as a lock (with it the replay still leaves 36%"),
            std::string::npos)
      << why;
  EXPECT_EQ(why.find("under their variable's lock"), std::string::npos) << why;
}

}  // namespace
}  // namespace test
}  // namespace tfdiag
