// ps-worker-ratio by measurement where the busiest PS's CPU bounds the job's throughput
// (analyzers/ps_count_saturated.h) and serves its queue out of arrival order, so the FIFO replay's
// waits fail its gates, on jobs of the second independent generator (bench/twins/gen2, written
// apart from tfdiag: a PS thread takes a random runnable op, not the oldest).
// gen2 report10 2229 (spent): 1 PS of 3 threads for 87 workers, busy 94% of the capture, its op
// time x the workers / its threads 103% of the step; 32% of the step is wait the in-order queue
// does not explain one by one. Before, no count was measured (the waits' gate) and the band's
// 18 PS were withheld; 2026-12-01: 2 PS named by measurement on the PS queues alone, predicted
// 41.4 ms against the twin's 47.7 ms (-13%, medium). A few seconds each.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <cmath>
#include <string>

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

// gen2 seed `seed` run by bench/twins/gen2/run_gen2.py into `*d` (its stdout in `*out`): its
// ps-worker-ratio row, predicted (not withheld) at medium, within 25% of its twin (a fatal failure
// without one or at another confidence).
void ExpectPredictedAtMedium(int seed, rapidjson::Document* d, std::string* out) {
  ASSERT_NO_FATAL_FAILURE(RunBenchJobs(
      "gen2/run_gen2.py", "--seeds " + std::to_string(seed) + " --no-outlook", 1, d, out));
  const rapidjson::Value* row = nullptr;
  for (const auto& r : (*d)["jobs"][0]["rows"].GetArray()) {
    if (std::string(r["rule"].GetString()) == "ps-worker-ratio") row = &r;
  }
  ASSERT_NE(row, nullptr) << *out;
  ASSERT_STREQ((*row)["confidence"].GetString(), "medium") << (*row)["why"].GetString();
  ASSERT_STREQ((*row)["method"].GetString(), "replay") << (*row)["why"].GetString();
  const double pred = (*row)["pred_ms"].GetDouble(), twin = (*row)["twin_ms"].GetDouble();
  EXPECT_LE(std::abs(pred - twin) / twin, 0.25) << *out;
  EXPECT_LT(twin, (*d)["jobs"][0]["now_ms"].GetDouble()) << *out;
}

// 2229's busiest PS is read as the bound, and the count is measured on the PS queues alone; the
// FIFO replay with the waits held measures none (its unexplained-wait gate).
TEST(PsWorkerRatioCpuBound, Gen2SaturatedPsOutOfOrderIsTheBoundAndNamesACount) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen2 needs it";
  TempDir dir;
  SimJob j;
  ASSERT_NO_FATAL_FAILURE(LoadSimJob("gen2", 2229, dir, &j));
  const AnalysisInput in = j.In();
  const ReplayModel& m = j.m;
  ASSERT_EQ(m.ps.size(), 1u);
  EXPECT_GT(UnexplainedWaitShare(m), kMaxUnexplainedShare);
  const PsCpuBound cpu = ReadPsCpuBound(in, m);
  ASSERT_TRUE(cpu.bound) << cpu.why_not;
  EXPECT_EQ(cpu.label, "ps:0");
  EXPECT_GE(cpu.util, kMinCpuBoundUtil);
  EXPECT_LE(cpu.util, kMaxCpuBoundUtil);
  EXPECT_GE(cpu.busy_pct, kMinCpuBoundBusyPct);
  EXPECT_TRUE(WithNoWaitsHeld(m).ok);
  const Rule& rule = PsWorkerRatioRule();
  const MeasuredPsCount held = MeasurePsCount(m, rule);
  EXPECT_EQ(held.count, 0);
  EXPECT_NE(held.why_none.find("waits"), std::string::npos) << held.why_none;
  const MeasuredPsCount meas = MeasurePsCount(m, rule, nullptr, &cpu);
  EXPECT_TRUE(meas.cpu_bound) << meas.why_none;
  EXPECT_GT(meas.count, 1) << meas.why_none;
  EXPECT_GE(100 * meas.saving, rule.Param("measured_min_saving_pct"));
}

// The count named for 2229 is predicted (not withheld) within 25% of its twin at medium.
TEST(PsWorkerRatioCpuBound, Gen2CountPredictedAgainstItsTwin) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen2 needs it";
  rapidjson::Document d;
  std::string out;
  ASSERT_NO_FATAL_FAILURE(ExpectPredictedAtMedium(2229, &d, &out));
}

// gen2 report10 2217 (spent): 1 PS of 8 threads on 1 core for 7 workers, busy 98% of the capture;
// the replay with the waits held misses the measured step by 11%, the PS queues alone by 2%.
// Before, the count (2 PS by the band) was withheld; 2026-12-01: 3 PS named and predicted on the
// queues alone within 25% of the twin (+1%), at medium, `Fix first` right.
TEST(PsWorkerRatioCpuBound, Gen2PredictedWhereTheHeldWaitsMissTheStep) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen2 needs it";
  rapidjson::Document d;
  std::string out;
  ASSERT_NO_FATAL_FAILURE(ExpectPredictedAtMedium(2217, &d, &out));
  EXPECT_TRUE(d["jobs"][0]["fix_first_right"].GetBool()) << out;
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
  const PsCpuBound cpu = ReadPsCpuBound(in, j.m);
  EXPECT_FALSE(cpu.bound);
  EXPECT_LT(cpu.util, kMinCpuBoundUtil);
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
  const PsCpuBound cpu = ReadPsCpuBound(j.In(), j.m);
  EXPECT_FALSE(cpu.bound);
  EXPECT_NE(cpu.why_not.find("SyncReplicasOptimizer"), std::string::npos) << cpu.why_not;
}

}  // namespace
}  // namespace tfdiag::test
