// ps-worker-ratio's fewer PS are replayed before they are suggested (ps_worker_ratio_fewer.h):
// the band's count for too many PS (workers / its low end) was suggested even where the
// finding's own prediction had it lengthen the step several times over (indep report38 46013:
// 12 -> 1 PS predicted +280%, its twin +376%).
#include "analyzers/ps_worker_ratio_fewer.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "analyzers/replay.h"
#include "analyzers/replay_dispatch.h"
#include "tests/replay_util.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

// `workers` workers of `compute_ns` on `ps` PS of one thread, each PS serving `pull_ns` and
// `push_ns` a worker step of its part of one variable cut over all of them (a pull and a push);
// the measured step is the replay's own (the replay reproduces it).
ReplayModel Job(int ps, int workers, double compute_ns, double pull_ns, double push_ns) {
  ReplayModel m;
  for (int p = 0; p < ps; ++p) {
    ReplayModel::Ps x;
    x.task = uint32_t(p);
    x.pull_ns = pull_ns, x.push_ns = push_ns;
    x.threads = 1;
    x.op_floor_ns = 1e3;
    x.var_ns = {pull_ns + push_ns}, x.var_ops = {2}, x.var_parts = {double(ps)};
    m.ps.push_back(x);
  }
  AddWorkers(&m, workers, compute_ns, 0);
  m.steps = 10;
  m.measured_step_ns = m.worker_median_step_ns = 1;
  m.measured_step_ns = m.worker_median_step_ns = ReplayBaseline(m).replay_ns;
  return m;
}

TEST(PsWorkerRatioFewer, BusyPsAreKeptWhereEveryFewerCountLengthensTheStep) {
  // 4 PS each busy 2 ms a worker step for 8 workers of 4 ms compute: the PS bound the step, and
  // 3 PS already take a third more of it each.
  const ReplayModel m = Job(4, 8, 4e6, 1.5e6, 0.5e6);
  const FewerPsCheck c = CheckFewerPs(m, 1, 0.05);
  ASSERT_TRUE(c.judged) << c.why_not;
  EXPECT_EQ(c.count, 0);
  EXPECT_GT(c.band_loss, 1.0) << "1 PS for all of it";
  EXPECT_GT(c.least_loss, 0.05);
  EXPECT_LT(c.least_loss, c.band_loss);
}

TEST(PsWorkerRatioFewer, IdlePsGiveWayToTheBandsCount) {
  // 8 PS of 10 us a worker step for 2 workers of 10 ms: the band's 1 PS costs nothing.
  const FewerPsCheck c = CheckFewerPs(Job(8, 2, 10e6, 5e3, 5e3), 1, 0.05);
  ASSERT_TRUE(c.judged) << c.why_not;
  EXPECT_EQ(c.count, 1);
  EXPECT_LE(c.band_loss, 0.05);
}

TEST(PsWorkerRatioFewer, TheFewestCountWithinTheLossIsFound) {
  // 12 PS of 0.3 ms a worker step for 4 workers of 8 ms: 3.6 ms a worker step in all; 1 PS
  // replays +72%, 5 PS +5.3%, 6 PS +3.9% (and fewer part ops at TF's dispatch cost).
  const ReplayModel m = Job(12, 4, 8e6, 0.2e6, 0.1e6);
  const FewerPsCheck c = CheckFewerPs(m, 1, 0.05);
  ASSERT_TRUE(c.judged) << c.why_not;
  ASSERT_GT(c.count, 1);
  ASSERT_LT(c.count, 12);
  EXPECT_GT(c.band_loss, 0.05);
  // Exactly the fewest: the count below it loses more than 5% in a reading, it does not in any
  // (the PS's NoOp cost and TF's dispatch cost per part op; the capture's order is not unseen).
  const ReplayModel dear = AtDispatchCost(m);
  auto loss = [&](int n) {
    Fix f;
    f.ps_count = n;
    const int steps = ReplaySteps(m);
    return std::max(ReplayMedianStep(m, f, steps) / ReplayMedianStep(m, Fix{}, steps),
                    ReplayMedianStep(dear, f, steps) / ReplayMedianStep(dear, Fix{}, steps)) -
           1;
  };
  EXPECT_LE(loss(c.count), 0.05);
  EXPECT_GT(loss(c.count - 1), 0.05);
}

TEST(PsWorkerRatioFewer, NotJudgedWhereTheReplayMissesTheJob) {
  ReplayModel m = Job(8, 2, 10e6, 5e3, 5e3);
  m.measured_step_ns *= 2, m.worker_median_step_ns *= 2;
  const FewerPsCheck c = CheckFewerPs(m, 1, 0.05);
  EXPECT_FALSE(c.judged);
  EXPECT_NE(c.why_not.find("misses the measured step"), std::string::npos) << c.why_not;
  EXPECT_FALSE(CheckFewerPs(Job(2, 2, 10e6, 5e3, 5e3), 2, 0.05).judged) << "no fewer count";
}

// Against the independent suite's twin: indep report38 46013 (spent), 12 PS for 2 workers of
// a sparse model, one table's parts uneven. The band's 1 PS ran 376% slower in its twin (the
// replay had said +280%); the count suggested now is 10, which its twin (simulated by a
// generator that shares no code with the replay) runs 12.7% slower: the replay's readings of 10
// PS gave -19% to +4%, so its prediction is withheld, but the suggestion no longer costs the job
// several times its step. At most 25% (the `medium` bound) here.
TEST(PsWorkerRatioFewer, TheSuggestedCountCostsTheTwinAFractionOfTheBandsCount) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: the generator needs it";
  rapidjson::Document d;
  std::string out;
  ASSERT_NO_FATAL_FAILURE(
      RunBenchJobs("indep/run_indep.py", "--set report38 --seeds 46013 --no-outlook", 1, &d, &out));
  const rapidjson::Value* row = Row(d["jobs"][0], "ps-worker-ratio");
  ASSERT_NE(row, nullptr) << out;
  ASSERT_TRUE((*row)["fix"].IsArray()) << out;
  EXPECT_GT((*row)["fix"][1].GetInt(), 1) << out;
  EXPECT_LT((*row)["fix"][1].GetInt(), 12) << out;
  EXPECT_GE((*row)["twin_saving_pct"].GetDouble(), -25) << out;
}

}  // namespace
}  // namespace tfdiag::test
