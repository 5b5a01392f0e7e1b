// oversharding's fix cuts each worker's receive time per transfer removed, the bytes staying
// (analyzers/oversharding.h). Where the transfers the replay holds fixed are a large share of the
// step, their bytes over the links may be what bounds them, and no count of parts changes that:
// the prediction is then at most `medium` and says why. On a job of the third independent
// generator (bench/twins/gen3, written apart from tfdiag): gen3 report13 3114 (spent), 3 PS packed
// on one node's NIC and a dense kernel cut into 16 parts; its fix (one part per PS) was predicted
// at `high` 18% under its twin, with 77% of the step in transfers. A few seconds.
#include <gtest/gtest.h>

#include <string>

#include "analyzers/analysis.h"
#include "analyzers/oversharding.h"
#include "analyzers/replay.h"
#include "tests/replay_util.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

// The oversharding finding of `j` analyzed with the default rules; an empty Finding without one.
Finding OvershardingFinding(const SimJob& j) {
  const AnalysisResult r = Analyze(j.c, Rules());
  for (const Finding& f : r.findings) {
    if (f.rule_id == "oversharding") return f;
  }
  return Finding{};
}

TEST(OvershardingBytes, TransfersHeldOverTheLimitCapTheConfidence) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen3 needs it";
  TempDir dir;
  SimJob j;
  ASSERT_NO_FATAL_FAILURE(LoadSimJob("gen3", 3114, dir, &j));
  ASSERT_GT(FixedTransferShare(j.m), kMaxFixedTransferShare) << "the job's transfers are its step";
  const Finding f = OvershardingFinding(j);
  ASSERT_EQ(f.rule_id, "oversharding");
  ASSERT_EQ(f.impact.method, "replay") << f.impact.withheld;
  EXPECT_EQ(f.impact.confidence, "medium") << f.impact.why;
  EXPECT_NE(f.impact.why.find("the cut is per transfer removed"), std::string::npos)
      << f.impact.why;
  // The same job with the transfers a tenth of what they were: the cut is the fix's own, and
  // the plan estimates nothing.
  ReplayModel m = j.m;
  for (ReplayModel::Worker& w : m.workers) w.pull_xfer_ns /= 10, w.push_xfer_ns /= 10;
  ASSERT_LT(FixedTransferShare(m), kMaxFixedTransferShare);
  const RuleSet rules = Rules();
  const FixPlan plan = OvershardingFix(j.In(), m, f, *rules.Find("oversharding"));
  ASSERT_FALSE(plan.fix.recv_cut.empty()) << plan.why;
  EXPECT_TRUE(plan.estimated.empty()) << plan.estimated;
  EXPECT_FALSE(OvershardingFix(j.In(), j.m, f, *rules.Find("oversharding")).estimated.empty());
}

}  // namespace
}  // namespace tfdiag::test
