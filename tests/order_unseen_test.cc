// A new PS count replayed where the capture cannot show the order its PS serve in
// (ReplayModel::order_unseen; analyzers/replay_impact.cc). On a job of the independent generator
// (bench/twins/indep, written apart from tfdiag; its PS take a random waiting op): spent
// held-out seed 29003 (indep report21), 12 PS of one thread for 21 asynchronous workers, each PS
// busy about a tenth of the time. ps-worker-ratio advises 7 PS, every variable partitioned over
// them: each pull and push becomes 17 small ops on every PS. Replayed in arrival order the step
// stays at 28.8 ms (`medium`); the twin (the job with the fix applied) steps in 40.8 ms: a PS
// taking a random waiting op holds each request until nearly every op queued beside it is
// done. At the job's light load both orders replay the job as is alike, so the capture cannot
// tell, and the prediction is withheld, saying why. Since session 58 the band's count is replayed
// before it is named (ps_worker_ratio_fewer.h), in the same readings: 7 PS lose more than 5% in
// the random order, so the finding keeps the 12 PS and names no count; a rule set without
// fewer_max_loss_pct (an older rules file) still names 7, and that prediction is withheld. About
// five seconds (the simulation).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "analyzers/analysis.h"
#include "analyzers/replay_dispatch.h"
#include "tests/replay_util.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

TEST(OrderUnseen, FewerPsOfManyPartOpsAreWithheldWhereTheOrderIsUnseen) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is needed to simulate the independent job";
  TempDir dir;
  SimJob j;
  ASSERT_NO_FATAL_FAILURE(LoadSimJob("indep", 29003, dir, &j));
  // The capture's steps cannot choose an order: served in arrival order, the order unseen.
  ASSERT_FALSE(j.m.sync);
  EXPECT_FALSE(j.m.any_order);
  EXPECT_TRUE(j.m.order_unseen);
  // The two orders part once every variable is cut into 7: at TF's dispatch cost per part op,
  // the out-of-order replay's step is over 25% longer than the in-order one's (each against its
  // own replay of the job as is).
  Fix seven;
  seven.ps_count = 7;
  const int steps = ReplaySteps(j.m);
  ReplayModel any = j.m;
  any.any_order = true;
  const double fifo = ReplayMedianStep(j.m, seven, steps) / ReplayMedianStep(j.m, Fix{}, steps);
  const double random =
      ReplayMedianStep(AtDispatchCost(any), seven, steps) / ReplayMedianStep(any, Fix{}, steps);
  EXPECT_GT(random, 1.25 * fifo);
  // So ps-worker-ratio keeps the count: INFO, no count suggested, the band's 7 PS named as
  // slower.
  const AnalysisResult kept = Analyze(j.c, Rules());
  const Finding* keep = FindRule(kept, "ps-worker-ratio");
  ASSERT_NE(keep, nullptr);
  EXPECT_EQ(keep->severity, Severity::kInfo);
  EXPECT_EQ(keep->fix.rfind("For this job: keep 12 PS. The band's 7 PS", 0), 0u) << keep->fix;
  for (const Figure& e : keep->evidence) EXPECT_NE(e.label, "suggested PS count");
  // Where the rule set names the band's 7 PS, their prediction is withheld, naming the order;
  // input-bound's, which adds no part op, is still made.
  RuleSet older = Rules();
  std::vector<RuleParam>& params = older.Find("ps-worker-ratio")->params;
  params.erase(std::remove_if(params.begin(), params.end(),
                              [](const RuleParam& p) { return p.name == "fewer_max_loss_pct"; }),
               params.end());
  const AnalysisResult r = Analyze(j.c, older);
  const Finding* ratio = FindRule(r, "ps-worker-ratio");
  ASSERT_NE(ratio, nullptr);
  EXPECT_EQ(ratio->impact.method, "none");
  EXPECT_NE(ratio->impact.withheld.find("too light to show the order its PS serve them in"),
            std::string::npos)
      << ratio->impact.withheld;
  const Finding* input = FindRule(r, "input-bound");
  ASSERT_NE(input, nullptr);
  EXPECT_EQ(input->impact.method, "replay");
  EXPECT_TRUE(input->impact.withheld.empty()) << input->impact.withheld;
}

}  // namespace
}  // namespace tfdiag::test
