// `high` promises the fixed twin within 10% (issue 44), and the replay's miss of the capture as
// is stays on the predicted step in time: where that miss is over 10% of a step the fix
// shortens, the prediction is at most `medium` and says so (analyzers/replay_impact_weak.cc). On
// a job of the third independent generator (bench/twins/gen3, written apart from tfdiag): gen3
// report14 3325 (spent), 2 PS and 8 workers, dense Adam on an embedding; its lazy-optimizer fix
// was predicted at `high` 13.4 ms against a twin of 17.2 (-22%), the replay as is 4.9% over the
// 53.4 ms step: 2.6 ms, 19% of the prediction. Under a second (the simulation).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "analyzers/analysis.h"
#include "tests/replay_util.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

TEST(ImpactMissOfPredicted, AMissLargeOnTheShortenedStepIsNotHigh) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen3 needs it";
  TempDir dir;
  SimJob j;
  ASSERT_NO_FATAL_FAILURE(LoadSimJob("gen3", 3325, dir, &j));
  const AnalysisResult r = Analyze(j.c, Rules());
  const Finding* dense = nullptr;
  for (const Finding& f : r.findings) {
    if (f.rule_id == "dense-optimizer-on-embedding") dense = &f;
  }
  ASSERT_NE(dense, nullptr);
  const Impact& im = dense->impact;
  ASSERT_EQ(im.method, "replay") << im.withheld;
  // The replay as is within the 5% a `high` allows, and the fix cutting most of the step.
  ASSERT_LE(std::abs(im.baseline_miss_pct), 5.0) << im.why;
  ASSERT_LT(im.step_ns_after_fix, 0.5 * im.step_ns) << im.why;
  const double miss_ns = std::abs(im.baseline_miss_pct) / 100 * im.step_ns;
  ASSERT_GT(miss_ns, 0.10 * im.step_ns_after_fix) << im.why;
  EXPECT_EQ(im.confidence, "medium") << im.why;
  EXPECT_NE(im.why.find("of the predicted step"), std::string::npos) << im.why;
  // Every prediction of the job at `high` has the miss within 10% of its step.
  for (const Finding& f : r.findings) {
    if (f.impact.confidence != "high") continue;
    EXPECT_LE(std::abs(f.impact.baseline_miss_pct) / 100 * f.impact.step_ns,
              0.10 * f.impact.step_ns_after_fix)
        << f.rule_id << ": " << f.impact.why;
  }
}

}  // namespace
}  // namespace tfdiag::test
