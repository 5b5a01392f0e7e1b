// A fix adding PS read from the PS load's spread (analyzers/ps_count_spread.h), where the PS model
// explains too little of the workers' waits for a replay: its gates on hand-made models (each
// fails without its gate), and one job of the third independent generator (bench/twins/gen3,
// written apart from tfdiag) against its fixed twin. About half a minute.
#include "analyzers/ps_count_spread.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <cmath>
#include <string>
#include <vector>

#include "analyzers/replay.h"
#include "rules/rule_set.h"
#include "tests/replay_util.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

// The spread's limits in the default rule set (ps-worker-ratio's spread_* params).
const SpreadLimits& Limits() {
  static const RuleSet rules = Rules();
  static const SpreadLimits lim = SpreadLimitsOf(*rules.Find("ps-worker-ratio"));
  return lim;
}

// Two PS of one thread, op time `ps0_ns` and `ps1_ns` per worker step, for four workers of 2 ms
// compute and 1 ms input per step, measured at a 20 ms step, asynchronous.
ReplayModel TwoPs(double ps0_ns, double ps1_ns) {
  ReplayModel m;
  for (uint32_t t = 2; t < 6; ++t) {
    ReplayModel::Worker w;
    w.task = t;
    w.compute_ns = 2e6, w.input_ns = 1e6;
    m.workers.push_back(w);
  }
  for (uint32_t t = 0; t < 2; ++t) {
    ReplayModel::Ps p;
    p.task = t;
    p.pull_ns = (t == 0 ? ps0_ns : ps1_ns) / 2, p.push_ns = (t == 0 ? ps0_ns : ps1_ns) / 2;
    p.var_ns = {p.pull_ns + p.push_ns};
    p.var_ops = {0};  // no part ops added by a new count
    p.var_parts = {1};
    m.ps.push_back(p);
  }
  m.measured_step_ns = 20e6;
  m.steps = 40;
  return m;
}

Fix Count(int n) {
  Fix f;
  f.ps_count = n;
  return f;
}

// Even PS, op time and bytes spread alike: 2 -> 4 PS halves the busiest PS's load, so the 20 ms
// step becomes 10 ms, above the workers' own 3 ms.
TEST(PsCountSpread, EvenLoadHalvesTheStepWithTwiceThePs) {
  const ReplayModel m = TwoPs(1e6, 1e6);
  const LoadSpread s = ReadLoadSpread(m, {100, 100}, Count(4), 0.6, Limits());
  ASSERT_EQ(s.why_not, "");
  EXPECT_NEAR(s.ops_factor, 0.5, 1e-9);
  EXPECT_NEAR(s.bytes_factor, 0.5, 1e-9);
  EXPECT_NEAR(s.floor_ns, 3e6, 1);
  Impact im;
  std::string why_not;
  ASSERT_TRUE(PredictFromLoadSpread(m, {100, 100}, "their bytes", Count(4), m.measured_step_ns, 0.6,
                                    0, 0.05, Limits(), "2 PS -> 4", "checks", &im, &why_not));
  EXPECT_NEAR(im.step_ns_after_fix, 10e6, 1);
  EXPECT_EQ(im.confidence, "medium");
  EXPECT_LE(im.low_ns, im.step_ns_after_fix);
  EXPECT_GE(im.high_ns, im.step_ns_after_fix);
  // Ten times the PS: the workers' own compute and input bound it.
  ASSERT_TRUE(PredictFromLoadSpread(m, {100, 100}, "their bytes", Count(20), m.measured_step_ns,
                                    0.6, 0, 0.05, Limits(), "2 PS -> 20", "checks", &im, &why_not));
  EXPECT_NEAR(im.step_ns_after_fix, 3e6, 1);
}

// The part ops a new count adds are charged at the PS's op cost in the point and at TF's dispatch
// cost in the range's top; the bytes read apart from the op time (within spread_max_apart_pct)
// give the range's bottom, and the point takes the larger of the two factors.
TEST(PsCountSpread, PartOpsAndBytesWidenTheRange) {
  ReplayModel m = TwoPs(1e6, 1e6);
  for (ReplayModel::Ps& p : m.ps) p.var_ops = {4}, p.op_floor_ns = 5e3;
  const std::vector<double> bytes = {100, 80};
  const LoadSpread s = ReadLoadSpread(m, bytes, Count(4), 0.6, Limits());
  ASSERT_EQ(s.why_not, "");
  EXPECT_GT(s.ops_factor, 0.5) << "part ops add to the PS's op time";
  EXPECT_GT(s.dear_factor, s.ops_factor);
  EXPECT_NEAR(s.bytes_factor, 180.0 / 4 / 100, 1e-9);
  Impact im;
  std::string why_not;
  ASSERT_TRUE(PredictFromLoadSpread(m, bytes, "their bytes", Count(4), m.measured_step_ns, 0.6, 0,
                                    0.05, Limits(), "2 PS -> 4", "checks", &im, &why_not));
  EXPECT_NEAR(im.step_ns_after_fix, 20e6 * s.ops_factor, 1);
  EXPECT_NEAR(im.low_ns, 20e6 * s.bytes_factor * 0.95, 1);
  EXPECT_NEAR(im.high_ns, 20e6 * s.dear_factor * 1.05, 1);
  // Part ops that would cost more than the PS's whole load at TF's dispatch cost: refused.
  for (ReplayModel::Ps& p : m.ps) p.var_ops = {100}, p.op_floor_ns = 1e3;
  EXPECT_NE(ReadLoadSpread(m, {100, 100}, Count(4), 0.6, Limits()).why_not.find("part ops"),
            std::string::npos);
}

// Each gate refuses on its own: too little unexplained wait, a hot PS, op time and bytes spread
// apart, no bytes, SyncReplicasOptimizer, PS packed on one node, a fix that removes PS, one that
// partitions or drops PS beside the new count, and PS that carry no load.
TEST(PsCountSpread, EachGateRefuses) {
  const ReplayModel even = TwoPs(1e6, 1e6);
  EXPECT_NE(ReadLoadSpread(even, {100, 100}, Count(4), Limits().min_unexplained - 0.01, Limits())
                .why_not.find("does not explain"),
            std::string::npos);
  EXPECT_NE(
      ReadLoadSpread(TwoPs(1e6, 0.1e6), {100, 10}, Count(4), 0.6, Limits()).why_not.find("uneven"),
      std::string::npos);
  // Even op time, but one PS holds most of the bytes: 2 -> 4 reads 0.5x by op time, 0.28x by
  // bytes (110 / 4 / 100), more than spread_max_apart_pct apart.
  EXPECT_NE(ReadLoadSpread(even, {100, 10}, Count(4), 0.6, Limits()).why_not.find("differently"),
            std::string::npos);
  EXPECT_NE(ReadLoadSpread(even, {}, Count(4), 0.6, Limits()).why_not.find("sizes neither"),
            std::string::npos);
  ReplayModel sync = even;
  sync.sync = true;
  EXPECT_NE(ReadLoadSpread(sync, {100, 100}, Count(4), 0.6, Limits())
                .why_not.find("SyncReplicasOptimizer"),
            std::string::npos);
  ReplayModel packed = even;
  packed.ps_node = {0, 0};
  EXPECT_NE(
      ReadLoadSpread(packed, {100, 100}, Count(4), 0.6, Limits()).why_not.find("share a node"),
      std::string::npos);
  EXPECT_NE(ReadLoadSpread(even, {100, 100}, Count(1), 0.6, Limits()).why_not.find("only add PS"),
            std::string::npos);
  Fix partition = Count(4);
  partition.partition = {{0, 1.0}};
  EXPECT_NE(ReadLoadSpread(even, {100, 100}, partition, 0.6, Limits()).why_not.find("only add PS"),
            std::string::npos);
  Fix drop = Count(4);
  drop.drop_ps = {1};
  EXPECT_NE(ReadLoadSpread(even, {100, 100}, drop, 0.6, Limits()).why_not.find("only add PS"),
            std::string::npos);
  EXPECT_NE(ReadLoadSpread(TwoPs(0, 0), {0, 0}, Count(4), 0.6, Limits()).why_not, "");
}

// A rule without the spread_* params refuses every spread.
TEST(PsCountSpread, LimitsOfARuleWithoutTheParamsRefuse) {
  const SpreadLimits bare = SpreadLimitsOf(Rule{});
  EXPECT_FALSE(ReadLoadSpread(TwoPs(1e6, 1e6), {100, 100}, Count(4), 0.99, bare).why_not.empty());
}

// gen3 report18 4101 (spent): 1 PS for 16 workers whose waits on it are 65% of the step beyond
// what the PS model explains (a wait the capture does not show), so the replay was withheld and
// `Fix first` named nothing, though 4 PS save 76% in its twin. Read from the load's spread (one
// PS: the busiest's load becomes a quarter): 154.3 -> 38.7 ms against the twin's 37.8 ms (+3%),
// medium, `Fix first` right. Fails on the code before (withheld: the PS model explains too little).
TEST(PsCountSpread, Gen3LonePsHoldingTheWorkersIsPredictedAgainstItsTwin) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen3 needs it";
  rapidjson::Document d;
  std::string out;
  const rapidjson::Value* row = nullptr;
  ASSERT_NO_FATAL_FAILURE(
      RunBenchRow("gen3/run_gen3.py", 4101, "ps-worker-ratio", true, &d, &out, &row));
  EXPECT_STREQ((*row)["confidence"].GetString(), "medium");
  const double pred = (*row)["pred_ms"].GetDouble(), twin = (*row)["twin_ms"].GetDouble();
  EXPECT_LE(std::abs(pred - twin) / twin, 0.10) << out;
  EXPECT_NE(std::string((*row)["why"].GetString())
                .find("the busiest PS's throughput is taken to set the step"),
            std::string::npos)
      << (*row)["why"].GetString();
  EXPECT_TRUE(d["jobs"][0]["fix_first_right"].GetBool()) << out;
}

}  // namespace
}  // namespace tfdiag::test
