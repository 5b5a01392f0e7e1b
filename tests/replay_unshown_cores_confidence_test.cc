// A partition's prediction is at most medium where the PS run more than one thread and no PS's
// ops show how fast they run at once (analyzers/replay_impact_weak.cc): the replay runs the
// spread work beside the other PS's as fast at once as alone, which nothing in the capture
// checked. On a job of the second independent generator (bench/twins/gen2, written apart from
// tfdiag). About five seconds.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <cmath>
#include <string>

#include "tests/replay_util.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

// gen2 report27 5812 (spent): 7 PS of 2 threads under a CFS quota with oversubscribed threads
// (neither in the profile), the hot dense_2/kernel on ps:2. hot-ps's partition was predicted
// `high`, 18.4 ms against the twin's 15.5 ms (+17%). Now medium, naming the unshown cores. Fails
// on the code before (high, no such reason).
TEST(ReplayUnshownCoresConfidence, Gen2PartitionOnThreadsOfUnknownCoresIsAtMostMedium) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen2 needs it";
  rapidjson::Document d;
  std::string out;
  const rapidjson::Value* row = nullptr;
  ASSERT_NO_FATAL_FAILURE(RunBenchRow("gen2/run_gen2.py", 5812, "hot-ps", true, &d, &out, &row));
  const std::string why = (*row)["why"].GetString();
  EXPECT_STREQ((*row)["confidence"].GetString(), "medium") << why;
  EXPECT_NE(why.find("their cores are not known"), std::string::npos) << why;
  // Medium promises the twin within 25%.
  EXPECT_LE(std::abs((*row)["err_pct"].GetDouble()), 25.0) << why;
}

}  // namespace
}  // namespace tfdiag::test
