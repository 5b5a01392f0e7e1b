// Two trust checks of ComputeImpacts (analyzers/replay_impact.cc) on hand-built models:
// - a partition (hot-ps) whose held wait (Worker::recv_ns, which the PS model does not explain)
//   is more than kMaxUnexplainedShare of the predicted step is withheld, naming both figures;
// - going asynchronous, workers of unequal speed step at their own rates, the replayed median
//   falls between them, and the prediction is at most medium, saying so;
// - a withheld prediction's floor (a PS saturating first) that caps the saving under 5% lowers
//   the finding's severity (LowerSeverityByImpact).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analyzers/analysis_input.h"
#include "analyzers/replay.h"
#include "core/capture_builder.h"
#include "tests/replay_util.h"

namespace tfdiag::test {
namespace {

// The capture and what its AnalysisInput refers to (SimJob's), with no step graph.
struct Job : SimJob {
  // ps:0, ps:1 (tasks 0, 1) and `workers` workers (tasks 2..), no rows: the model is by hand.
  explicit Job(int workers) {
    CaptureBuilder b;
    b.AddTask("ps", 0, 0);
    b.AddTask("ps", 1, 0);
    for (int w = 0; w < workers; ++w) b.AddTask("worker", w, 0);
    c = b.Finish();
  }

  // The measured step set to the replay of the model as is, its quartiles within 5%.
  void Measured() {
    m.measured_step_ns = m.worker_median_step_ns = 1;
    m.steps = int64_t(m.workers.size()) * 50;
    const double as_is = ReplayBaseline(m).replay_ns;
    m.measured_step_ns = m.worker_median_step_ns = as_is;
    m.step_q1_ns = 0.97 * as_is, m.step_q3_ns = 1.03 * as_is;
  }

  Impact ImpactOf(const Fix& fix) {
    const AnalysisInput in = In();
    ImpactRules rules;
    rules.plan = [fix](const ReplayModel&, const Finding&) {
      FixPlan plan;
      plan.fix = fix;
      plan.what = "the fix";
      return plan;
    };
    std::vector<Finding> findings(1);
    findings[0].rule_id = "hot-ps";
    findings[0].subject = "ps:0";
    ComputeImpacts(in, m, rules, &findings);
    return findings[0].impact;
  }
};

// One worker of 10 ms compute, ps:0 serving 20 ms of its pull, ps:1 idle; `held_ms` of its
// receive wait held as the wait the PS model does not explain.
Job HotPs(double held_ms) {
  Job job(1);
  ReplayModel::Worker w;
  w.task = 2;
  w.compute_ns = 10e6;
  w.recv_ns = held_ms * 1e6;
  job.m.workers.push_back(w);
  ReplayModel::Ps hot, idle;
  hot.task = 0, idle.task = 1;
  hot.pull_ns = 20e6;
  idle.pull_ns = 0.1e6;
  job.m.ps = {hot, idle};
  job.Measured();
  return job;
}

TEST(ReplayImpactGates, PartitionBesideAHeldWaitOverAQuarterOfThePredictedStepIsWithheld) {
  Fix fix;
  fix.partition = {{0, 1.0}};
  // 8 ms held of a 38 ms step (21%, under the 25% gate on the measured step), but the partition
  // halves ps:0's 20 ms: about 28 ms predicted, the held 8 ms 29% of it.
  Job held = HotPs(8);
  ASSERT_LE(UnexplainedWaitShare(held.m), kMaxUnexplainedShare);
  const Impact withheld = held.ImpactOf(fix);
  EXPECT_EQ(withheld.method, "none") << withheld.why;
  EXPECT_NE(withheld.withheld.find("of the median"), std::string::npos) << withheld.withheld;
  EXPECT_NE(withheld.withheld.find("step the replay predicts, over 25%"), std::string::npos)
      << withheld.withheld;
  // 2 ms held: under a quarter of the predicted step, predicted as before.
  Job light = HotPs(2);
  const Impact made = light.ImpactOf(fix);
  EXPECT_EQ(made.method, "replay") << made.why;
  EXPECT_LT(made.step_ns_after_fix, 0.8 * made.step_ns);
}

// Two synchronous workers of `fast_ms` and `slow_ms` compute on lightly loaded PS.
Job TwoSyncWorkers(double fast_ms, double slow_ms) {
  Job job(2);
  job.m.sync = true;
  for (int i = 0; i < 2; ++i) {
    ReplayModel::Worker w;
    w.task = uint32_t(2 + i);
    w.compute_ns = (i == 0 ? fast_ms : slow_ms) * 1e6;
    job.m.workers.push_back(w);
  }
  ReplayModel::Ps a, b;
  a.task = 0, b.task = 1;
  a.pull_ns = a.push_ns = b.pull_ns = b.push_ns = 0.1e6;
  job.m.ps = {a, b};
  job.Measured();
  return job;
}

TEST(ReplayImpactGates, AsynchronousWorkersAtTheirOwnRatesAreAtMostMedium) {
  Fix async;
  async.to_async = true;
  const Impact split = TwoSyncWorkers(50, 100).ImpactOf(async);
  ASSERT_EQ(split.method, "replay") << split.why;
  EXPECT_EQ(split.confidence, "medium") << split.why;
  EXPECT_NE(split.why.find("step at their own rates: 1 of 2"), std::string::npos) << split.why;
  // Workers of one speed: no split, and nothing else caps the confidence.
  const Impact even = TwoSyncWorkers(50, 52).ImpactOf(async);
  ASSERT_EQ(even.method, "replay") << even.why;
  EXPECT_EQ(even.why.find("own rates"), std::string::npos) << even.why;
  EXPECT_EQ(even.confidence, "high") << even.why;
}

// A withheld prediction whose floor (Impact::low_ns: a PS the fix leaves as it is saturates first)
// caps the saving under 5% lowers the finding to LOW, saying "at most"; a floor that leaves 5% or
// more, or a withheld prediction with no floor, changes nothing (indep tune 1016: prefetch on a
// healthy job whose ps:0 would be 97% busy).
TEST(ReplayImpactGates, AFloorUnderFivePercentLowersTheSeverity) {
  auto lowered = [](double floor_ns) {
    std::vector<Finding> f(1);
    f[0].severity = Severity::kMedium;
    f[0].impact.set = true;
    f[0].impact.step_ns = 100e6;
    f[0].impact.withheld = "ps:0 saturates";
    f[0].impact.low_ns = floor_ns;
    LowerSeverityByImpact(&f);
    return f[0];
  };
  const Finding capped = lowered(97e6);
  EXPECT_EQ(capped.severity, Severity::kLow);
  EXPECT_NE(capped.summary.find("can buy at most 3%"), std::string::npos) << capped.summary;
  EXPECT_EQ(lowered(80e6).severity, Severity::kMedium) << "20% still possible";
  EXPECT_EQ(lowered(0).severity, Severity::kMedium) << "no floor: withheld says nothing";
}

}  // namespace
}  // namespace tfdiag::test
