// Each PS op's fixed cost, measured from the capture (analyzers/op_fixed_cost.h): the intercept
// of the dense variables' time per op in their bytes. Checked on made points and against the
// per-request cost a twin generator draws (gen2's rpc_us, gen3's msg_us), which the replay never
// reads: the capture shows it only through the ops' times.
#include "analyzers/op_fixed_cost.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "analyzers/replay.h"
#include "tests/replay_util.h"

namespace tfdiag::test {
namespace {

TEST(OpFixedCost, TheInterceptOfTimeInBytes) {
  // 30 us an op plus 1.5 ns a byte: 1 kB, 20 kB (4 parts), 400 kB.
  std::vector<OpCostPoint> pts = {{1024, 30e3 + 1.5 * 1024, 300}};
  for (int k = 0; k < 4; ++k) pts.push_back({20e3, 30e3 + 1.5 * 20e3, 300});
  pts.push_back({400e3, 30e3 + 1.5 * 400e3, 300});
  EXPECT_NEAR(FitOpFixedCostNs(pts), 30e3, 1);
}

TEST(OpFixedCost, NothingWhereTheSizesCannotShowIt) {
  // One size: no slope to take out.
  EXPECT_EQ(FitOpFixedCostNs({{20e3, 40e3, 10}, {20e3, 41e3, 10}}), 0);
  // Sizes too close (under kMinOpCostSizeRatio apart).
  EXPECT_EQ(FitOpFixedCostNs({{20e3, 40e3, 10}, {60e3, 90e3, 10}}), 0);
  // Time that falls with the bytes: the ops' times do not follow their sizes.
  EXPECT_EQ(FitOpFixedCostNs({{1e3, 90e3, 10}, {100e3, 40e3, 10}}), 0);
  // No ops, no size: left out, leaving one point.
  EXPECT_EQ(FitOpFixedCostNs({{1e3, 30e3, 0}, {0, 30e3, 5}, {100e3, 180e3, 10}}), 0);
  EXPECT_EQ(FitOpFixedCostNs({}), 0);
}

TEST(OpFixedCost, AtMostTheSmallestOpAndNotBelowZero) {
  // Two variables twice each: the line crosses at 9.39 us, over the 9 us a 1 kB op took.
  EXPECT_EQ(FitOpFixedCostNs({{1e3, 10e3, 5}, {1e3, 9e3, 5}, {100e3, 20e3, 5}, {100e3, 21e3, 5}}),
            9e3);
  // 1 ns a byte less 9 us: the line crosses under zero.
  EXPECT_EQ(FitOpFixedCostNs({{10e3, 1e3, 5}, {50e3, 41e3, 5}, {100e3, 91e3, 5}}), 0);
}

TEST(OpFixedCost, AnInterceptItsPointsDoNotPinIsNone) {
  // Three points, the intercept's standard error 34% of it (the two 1 kB variables 5 us apart).
  EXPECT_EQ(FitOpFixedCostNs({{1e3, 10e3, 5}, {1e3, 5e3, 5}, {100e3, 20e3, 5}}), 0);
  // Two points: taken where the smaller variable's ops are mostly the intercept (1 kB at 30 us,
  // 100 kB at 130 us: 29.0 us, its bytes 1 us), not where the line is carried far past them
  // (50 kB at 60 us, 400 kB at 410 us: 10 us, the smaller's bytes 50 us).
  EXPECT_NEAR(FitOpFixedCostNs({{1e3, 30e3, 5}, {100e3, 130e3, 5}}), 28990, 1);
  EXPECT_EQ(FitOpFixedCostNs({{50e3, 60e3, 5}, {400e3, 410e3, 5}}), 0);
}

// The generator's drawn per-request cost (`key` of draw(seed)), in us, or -1 when python fails.
double DrawnUs(const std::string& gen, int seed, const std::string& key) {
  const RunResult r = RunShell("cd " + std::string(SourceDir()) + "/bench/twins/" + gen +
                               " && python3 -c 'import " + gen + "jobs; print(" + gen +
                               "jobs.draw(" + std::to_string(seed) + ")[\"" + key + "\"])'");
  return r.exit_code == 0 ? std::stod(r.out) : -1;
}

// gen2 report35 7424 (spent): 16 PS, a 342 kB kernel in 16 parts and a 1 kB bias on ps:1, every
// PS op paying rpc_us (32.6 us) beside its bytes; the PS's NoOps take 1 us. Each variable's ops in
// a worker step are a read (or gather) and an apply (the capture's VariableV2 rows count as ops
// too): their fixed cost per step is 2 x rpc_us, times the mean of gen2's lognormal op noise
// (exp(sigma^2 / 2), ps_sigma 0.25: 1.03). Before the fit the replay charged 1 us per part op and
// predicted 16 -> 48 PS to save 44%, -42% off its twin (4.5% slower).
TEST(OpFixedCost, Gen2PerRequestCostIsMeasured) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed (bench/twins/gen2)";
  TempDir dir;
  SimJob j;
  ASSERT_NO_FATAL_FAILURE(LoadSimJob("gen2", 7424, dir, &j));
  const double rpc_us = DrawnUs("gen2", 7424, "rpc_us");
  ASSERT_GT(rpc_us, 0);
  const double sigma = DrawnUs("gen2", 7424, "ps_sigma");
  const double truth_ns = 2 * rpc_us * 1e3 * std::exp(sigma * sigma / 2);
  int checked = 0;
  for (const ReplayModel::Ps& p : j.m.ps) {
    for (size_t v = 0; v < p.var_ops.size(); ++v) {
      EXPECT_NEAR(p.op_floor_ns * p.var_ops[v], truth_ns, 0.15 * truth_ns) << "ps task " << p.task;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 33);  // 16 table parts, 16 kernel parts, the bias
}

}  // namespace
}  // namespace tfdiag::test
