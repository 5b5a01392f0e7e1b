// ps-worker-ratio's measured count on PS under half their threads' time (issue 44, session 35):
// the FIFO replay of the PS queues measures more PS at any load where it reproduces the job (its
// own gates), since PS busy under half their threads' time still queue the pulls that arrive
// together. gen3 report11 (spent) 2707 (1 PS of 8 threads on 4 cores, busy 37% of its threads'
// time, 4 workers) and 2725 (1 PS of 1 thread, 39%, 4 workers): 2-3 PS buy 8-18% in their twins.
// Before, a floor of measured_min_ps_util_pct (50%) on the busiest PS left both with no finding,
// `Fix first` none and wrong; now 3 PS are named on each, predicted within 1% of the twin. About a
// minute.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <cmath>
#include <string>

#include "analyzers/ps_count_saturated.h"
#include "analyzers/ps_worker_ratio_measured.h"
#include "analyzers/replay.h"
#include "tests/replay_util.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

// The measurement itself: the busiest PS under the links' floor, and a count named all the same.
TEST(PsWorkerRatioLightLoad, MeasuresACountOnAPsUnderHalfItsThreadsTime) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen3 needs it";
  const RuleSet rules = Rules();
  const Rule& rule = *rules.Find("ps-worker-ratio");
  for (const int seed : {2707, 2725}) {
    TempDir dir;
    SimJob j;
    ASSERT_NO_FATAL_FAILURE(LoadSimJob("gen3", seed, dir, &j));
    const PsCpuBound cpu =
        ReadPsCpuBound(j.In(), j.m, ReplayBaseline(j.m).miss, PsCpuBoundLimitsOf(rule));
    const MeasuredPsCount meas = MeasurePsCount(j.m, rule, nullptr, &cpu);
    EXPECT_LT(100 * meas.busiest_util, rule.Param("measured_min_ps_util_pct")) << seed;
    EXPECT_FALSE(meas.over_links) << seed;
    EXPECT_GT(meas.count, 1) << seed << ": " << meas.why_none;
    EXPECT_GE(100 * meas.saving, rule.Param("measured_min_saving_pct")) << seed;
  }
}

// Against the twins: the count named is predicted within 10% of its twin and is `Fix first`,
// right on both jobs.
TEST(PsWorkerRatioLightLoad, Gen3CountPredictedAgainstItsTwin) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen3 needs it";
  rapidjson::Document d;
  std::string out;
  ASSERT_NO_FATAL_FAILURE(
      RunBenchJobs("gen3/run_gen3.py", "--seeds 2707,2725 --no-outlook", 2, &d, &out));
  for (const auto& job : d["jobs"].GetArray()) {
    const rapidjson::Value* row = nullptr;
    for (const auto& r : job["rows"].GetArray()) {
      if (std::string(r["rule"].GetString()) == "ps-worker-ratio") row = &r;
    }
    ASSERT_NE(row, nullptr) << "no ps-worker-ratio finding\n" << out;
    ASSERT_TRUE(row->HasMember("pred_ms")) << (*row)["withheld"].GetString() << "\n" << out;
    const double pred = (*row)["pred_ms"].GetDouble(), twin = (*row)["twin_ms"].GetDouble();
    EXPECT_LE(std::abs(pred - twin) / twin, 0.10) << out;
    EXPECT_TRUE(job["fix_first_right"].GetBool()) << out;
  }
}

}  // namespace
}  // namespace tfdiag::test
