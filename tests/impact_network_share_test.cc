// The network as a resource where neither its held transfers nor the PS queue's unexplained wait
// alone passes its gate (analyzers/replay_impact_job.cc, ReadImpactJob's `network`): a PS link's
// queueing is wait the FIFO PS model does not explain. On a job of an independent generator
// (bench/twins/gen3, written apart from tfdiag), spent: gen3 report15 3529, 3 PS packed on one
// 5 Gb/s NIC, 12 workers, one a straggler; transfers held fixed 10% of the step and unexplained
// wait 20%. The FIFO replay held that wait while the fix re-placed the PS work: straggler-worker
// -17% off its twin; over the PS links -13%. A few seconds (the simulations).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "analyzers/replay_impact_job.h"
#include "tests/replay_util.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

TEST(ImpactNetworkShare, HeldTransfersAndUnexplainedWaitTogetherAreTheNetwork) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen3 needs it";
  TempDir dir;
  SimJob j;
  ASSERT_NO_FATAL_FAILURE(LoadSimJob("gen3", 3529, dir, &j));
  const replay_detail::ImpactJob job = replay_detail::ReadImpactJob(j.In(), j.m, ImpactRules{});
  // Neither alone passes its gate; together they do, and the links replay the capture.
  EXPECT_LE(job.transfer, kMaxFixedTransferShare);
  EXPECT_LE(job.unexplained, kMaxUnexplainedShare);
  EXPECT_GT(job.transfer + job.unexplained, kMaxUnexplainedShare);
  EXPECT_TRUE(job.links) << job.no_links;
}

// Over the links, within 20% of its twin: -13% when set (session 39), -16% since session 52's
// receive-wait change (HeldRecvBeyondLinks: 34.8 ms against the twin's 41.2 ms, whose step grows
// past the captured 33.9 ms once the straggler is fixed, which no replay of this capture shows),
// as the same job's ps-worker-ratio moved from +27% to +24%.
TEST(ImpactNetworkShare, TheStragglerFixIsPredictedOverTheLinks) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen3 needs it";
  rapidjson::Document d;
  std::string out;
  ASSERT_NO_FATAL_FAILURE(
      RunBenchJobs("gen3/run_gen3.py", "--seeds 3529 --no-outlook", 1, &d, &out));
  const rapidjson::Value* row = Row(d["jobs"][0], "straggler-worker");
  ASSERT_NE(row, nullptr) << "no straggler-worker finding\n" << out;
  ASSERT_TRUE(row->HasMember("pred_ms")) << (*row)["why"].GetString() << out;
  const std::string why = (*row)["why"].GetString();
  EXPECT_NE(why.find("PS links"), std::string::npos) << why;
  const double pred = (*row)["pred_ms"].GetDouble(), twin = (*row)["twin_ms"].GetDouble();
  EXPECT_LE(std::abs(pred - twin) / twin, 0.20) << out;
}

}  // namespace
}  // namespace tfdiag::test
