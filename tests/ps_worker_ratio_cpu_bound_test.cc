// ps-worker-ratio by measurement where the busiest PS's CPU bounds the job's throughput
// (analyzers/ps_count_saturated.h), and the checks that keep a fix adding PS off the PS queues
// replayed alone, on jobs of the second and third independent generators (bench/twins/gen2,
// gen3, written apart from tfdiag: a gen2 PS thread takes a random runnable op, not the oldest).
// gen2 report10 2229 (spent): 1 PS of 3 threads for 87 workers, busy 94% of the capture, its op
// time x the workers / its threads 91% of the mean step; with the pull wait no receive op spans
// out of the held tail (replay_waits.h) 9.6% of the step is wait the in-order queue does not
// explain one by one (32% held there as well): 2 PS named by measurement (the twin's best count),
// predicted (its 3 threads ran at once as fast as alone: cores for each). A few seconds each.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "analyzers/analysis_input.h"
#include "analyzers/ps_count_saturated.h"
#include "analyzers/ps_worker_ratio_measured.h"
#include "analyzers/replay.h"
#include "analyzers/replay_queued_waits.h"
#include "tests/replay_util.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

const Rule& PsWorkerRatioRule() {
  static const RuleSet rules = Rules();
  const Rule* r = rules.Find("ps-worker-ratio");
  EXPECT_NE(r, nullptr);
  return *r;
}

// ReadPsCpuBound on `m` with ps-worker-ratio's limits, as RunPsWorkerRatio reads it.
PsCpuBound Bound(const AnalysisInput& in, const ReplayModel& m) {
  return ReadPsCpuBound(in, m, ReplayBaseline(m).miss, PsCpuBoundLimitsOf(PsWorkerRatioRule()));
}

// gen2 seed `seed` run by bench/twins/gen2/run_gen2.py into `*d` (its stdout in `*out`), its
// ps-worker-ratio row in `*row` (a fatal failure without one).
void Gen2Row(int seed, rapidjson::Document* d, std::string* out, const rapidjson::Value** row) {
  ASSERT_NO_FATAL_FAILURE(RunBenchJobs(
      "gen2/run_gen2.py", "--seeds " + std::to_string(seed) + " --no-outlook", 1, d, out));
  *row = nullptr;
  for (const auto& r : (*d)["jobs"][0]["rows"].GetArray()) {
    if (std::string(r["rule"].GetString()) == "ps-worker-ratio") *row = &r;
  }
  ASSERT_NE(*row, nullptr) << *out;
}

// The row of `seed` is withheld (no confidence above none) with a `why` naming `reason` and
// `also` (any text when empty).
void ExpectWithheld(int seed, const std::string& reason, const std::string& also = "") {
  rapidjson::Document d;
  std::string out;
  const rapidjson::Value* row = nullptr;
  ASSERT_NO_FATAL_FAILURE(Gen2Row(seed, &d, &out, &row));
  const std::string why = (*row)["why"].GetString();
  EXPECT_STREQ((*row)["confidence"].GetString(), "none") << why;
  EXPECT_NE(std::string((*row)["withheld"].GetString()), "") << why;
  EXPECT_NE(why.find(reason), std::string::npos) << why;
  EXPECT_NE(why.find(also), std::string::npos) << why;
}

// 2229's busiest PS is read as the bound, and the count its twins name is measured: by the FIFO
// replay with the waits held, which passes its unexplained-wait gate once the pull wait no
// receive op spans leaves the held tail (held there as well, 32% of the step: it measured none);
// the queues-alone measurement is no longer reached (the waits-held one passes first). Its twins
// (every variable cut over the count, as the fix text says): 1 -> 2 PS -32%, 3 PS -43%, 4 PS -48%,
// so the fewest within measured_near_best_pct (85%) of the best is 3. At the PS's 1 us NoOp cost
// per part op the replay named 2; at the fixed cost its dense variables' ops show
// (analyzers/op_fixed_cost.h), 3.
TEST(PsWorkerRatioCpuBound, Gen2SaturatedPsOutOfOrderIsTheBoundAndNamesACount) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen2 needs it";
  TempDir dir;
  SimJob j;
  ASSERT_NO_FATAL_FAILURE(LoadSimJob("gen2", 2229, dir, &j));
  const AnalysisInput in = j.In();
  const ReplayModel& m = j.m;
  ASSERT_EQ(m.ps.size(), 1u);
  EXPECT_LT(UnexplainedWaitShare(m), kMaxUnexplainedShare);
  const PsCpuBound cpu = Bound(in, m);
  ASSERT_TRUE(cpu.bound) << cpu.why_not;
  EXPECT_EQ(cpu.label, "ps:0");
  EXPECT_TRUE(WithNoWaitsHeld(m).ok);
  const Rule& rule = PsWorkerRatioRule();
  const MeasuredPsCount held = MeasurePsCount(m, rule);
  EXPECT_EQ(held.count, 3) << held.why_none;
  const MeasuredPsCount meas = MeasurePsCount(m, rule, nullptr, &cpu);
  EXPECT_EQ(meas.count, 3) << meas.why_none;
  EXPECT_GE(100 * meas.saving, rule.Param("measured_min_saving_pct"));
}

// The ps-worker-ratio row of gen2 seed `seed` is predicted within 25% of its twin (medium's
// bound), its checks naming the `cores` its PS's threads showed ("at least N core(s)": they ran N
// at once as fast as alone, ReplayModel::ps_min_cores); the run in `*d`, its stdout in `*out`.
void ExpectPredictedOnShownCores(int seed, const std::string& cores, rapidjson::Document* d,
                                 std::string* out) {
  const rapidjson::Value* row = nullptr;
  ASSERT_NO_FATAL_FAILURE(Gen2Row(seed, d, out, &row));
  const std::string why = (*row)["why"].GetString();
  ASSERT_TRUE(row->HasMember("pred_ms")) << why;
  EXPECT_LT(std::abs((*row)["err_pct"].GetDouble()), 25) << why;
  EXPECT_NE(why.find(cores), std::string::npos) << why;
}

// The count named for 2229 is predicted: its PS's 3 threads ran at once as fast as alone, so
// the ops show a core for each (ReplayModel::ps_min_cores; the twin runs them on 8). Withheld
// before session 46 by the cores guard ("the capture does not show"); now -14% of its twin at
// medium, and Fix first. 2217 below (8 threads on 1 core) stays withheld.
TEST(PsWorkerRatioCpuBound, Gen2CountPredictedOnThreadsAsFastAtOnceAsAlone) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen2 needs it";
  rapidjson::Document d;
  std::string out;
  ASSERT_NO_FATAL_FAILURE(ExpectPredictedOnShownCores(2229, "at least 3 core(s)", &d, &out));
  EXPECT_TRUE(d["jobs"][0]["fix_first_right"].GetBool()) << out;
}

// gen2 report24 5201 (spent): 7 PS of 2 threads on 2 cores for 53 workers; 7 -> 11 PS saves 28%
// in its twin. Withheld before session 46 as "PS whose cores behind their threads the capture
// does not show"; now -13% of its twin. (Fix first still misses it: 14 PS buy 38%.)
TEST(PsWorkerRatioCpuBound, Gen2MorePsOnTwoThreadsAsFastAtOnceAsAloneIsPredicted) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen2 needs it";
  rapidjson::Document d;
  std::string out;
  ExpectPredictedOnShownCores(5201, "at least 2 core(s)", &d, &out);
}

// gen2 report10 2217 (spent): 1 PS of 8 threads for 7 workers, busy 98% of the capture; the
// replay with the waits held misses the measured step by 6% (11% with the pull wait no receive op
// spans held in the tail as well), the PS queues alone by 2%: the bound is read and 3 PS (the
// twin's best) named, but the 8 threads' cores are not shown (the twin runs them on 1), so the
// prediction is withheld, by the replay with the waits held too (34% of the step is pull wait it
// makes from the PS queues: +10% of the twin at medium without the guard; before: +1% at medium
// on the queues alone, passing by construction).
TEST(PsWorkerRatioCpuBound, Gen2WithheldWhereTheHeldWaitsMissTheStepOnUnshownCores) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen2 needs it";
  TempDir dir;
  SimJob j;
  ASSERT_NO_FATAL_FAILURE(LoadSimJob("gen2", 2217, dir, &j));
  const PsCpuBound cpu = Bound(j.In(), j.m);
  ASSERT_TRUE(cpu.bound) << cpu.why_not;
  EXPECT_LE(std::abs(cpu.held_miss), kMaxBaselineMiss);
  const MeasuredPsCount meas = MeasurePsCount(j.m, PsWorkerRatioRule(), nullptr, &cpu);
  EXPECT_EQ(meas.count, 3) << meas.why_none;
  // By the waits-held replay's guard (b9b955a), the queues-alone path no longer reached.
  ExpectWithheld(2217, "cores behind their threads the capture does not show",
                 "wait for pulls that no receive op spans, which the replay makes from the PS "
                 "queues alone");
}

// gen2 report9 2009 (spent): 5 PS of 1 thread, ps:0 46% of their load (utilisations summing to
// 2.2 times the busiest's): no bound read (uneven load), and the band's 12 PS are not replayed on
// the PS queues alone (before: -53% of the twin at medium, the w66 merge; -56% before it), nor
// 5 -> 10 PS on the replay with the waits held, 36% of whose step is pull wait it makes from the
// PS queues (-42% of the twin at medium without the guard).
TEST(PsWorkerRatioCpuBound, Gen2UnevenPsLoadWithheld) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen2 needs it";
  TempDir dir;
  SimJob j;
  ASSERT_NO_FATAL_FAILURE(LoadSimJob("gen2", 2009, dir, &j));
  const PsCpuBound cpu = Bound(j.In(), j.m);
  EXPECT_FALSE(cpu.bound);
  EXPECT_LT(cpu.evenness, PsCpuBoundLimitsOf(PsWorkerRatioRule()).min_evenness);
  EXPECT_NE(cpu.why_not.find("uneven"), std::string::npos) << cpu.why_not;
  ExpectWithheld(2009, "unevenly", "wait for pulls that no receive op spans");
}

// The gates refuse: gen2 report10 2207 (busy 79%, its median-step utilisation 1.12), gen2 report9
// 2030 (1.18 at the median step, 0.84 at the mean, busy 88%), gen3 report8 2100 (1.05 at the
// median, busy 83%).
TEST(PsWorkerRatioCpuBound, NoBoundUnderTheBusyShare) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen2 needs it";
  for (const auto& [gen, seed] :
       std::vector<std::pair<std::string, int>>{{"gen2", 2207}, {"gen2", 2030}, {"gen3", 2100}}) {
    TempDir dir;
    SimJob j;
    ASSERT_NO_FATAL_FAILURE(LoadSimJob(gen, seed, dir, &j));
    const PsCpuBound cpu = Bound(j.In(), j.m);
    EXPECT_FALSE(cpu.bound) << gen << " " << seed;
    EXPECT_LT(cpu.busy_pct, PsWorkerRatioRule().Param("cpu_bound_min_busy_pct")) << seed;
    EXPECT_FALSE(cpu.why_not.empty()) << seed;
  }
}

// The check can fail: gen3 report9 2318 (spent), 1 PS whose op time x the workers / its threads is
// 86% of the step and busy 82% of the capture (a CPU share stolen by its neighbours): no bound, and
// no count measured on the queues alone (1 -> 3 PS would be replayed -89% off a twin 4.75x slower).
TEST(PsWorkerRatioCpuBound, NoBoundOnAPsUnderTheBand) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen3 needs it";
  TempDir dir;
  SimJob j;
  ASSERT_NO_FATAL_FAILURE(LoadSimJob("gen3", 2318, dir, &j));
  const AnalysisInput in = j.In();
  const PsCpuBound cpu = Bound(in, j.m);
  EXPECT_FALSE(cpu.bound);
  EXPECT_LT(cpu.util, 0.90);
  EXPECT_FALSE(cpu.why_not.empty());
  const MeasuredPsCount meas = MeasurePsCount(j.m, PsWorkerRatioRule(), nullptr, &cpu);
  EXPECT_FALSE(meas.cpu_bound);
  EXPECT_EQ(meas.count, 0) << meas.why_none;
}

// Under SyncReplicasOptimizer the barrier paces the step: no bound (gen2 report10 2219).
TEST(PsWorkerRatioCpuBound, NoBoundUnderSyncReplicas) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen2 needs it";
  TempDir dir;
  SimJob j;
  ASSERT_NO_FATAL_FAILURE(LoadSimJob("gen2", 2219, dir, &j));
  ASSERT_TRUE(j.m.sync);
  const PsCpuBound cpu = Bound(j.In(), j.m);
  EXPECT_FALSE(cpu.bound);
  EXPECT_NE(cpu.why_not.find("SyncReplicasOptimizer"), std::string::npos) << cpu.why_not;
}

}  // namespace
}  // namespace tfdiag::test
