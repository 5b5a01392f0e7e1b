// Predictions whose model rests on what the capture did not check are at most medium
// (analyzers/replay_impact_weak.cc): a partition onto PS of more than one thread whose ops never
// show how fast they run at once, and a straggler fix under SyncReplicasOptimizer where other
// workers' transfers, held as measured, are longer than the median (their place in the burst of
// pulls after the barrier). On jobs of two independent generators (bench/twins/gen2 and indep,
// written apart from tfdiag). About half a minute.
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
TEST(ReplayUncheckedConfidence, Gen2PartitionOnThreadsOfUnknownCoresIsAtMostMedium) {
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

// indep report30 38001 (spent): 18 workers on 12 PS under SyncReplicasOptimizer, worker:13 slow.
// straggler-worker was predicted `high`, 27.8 ms against the twin's 21.8 ms (+28%): once the
// straggler is at the median, workers whose transfers were long (late in the burst) set the
// replayed barrier. Now medium, naming the transfers. Fails on the code before (high).
TEST(ReplayUncheckedConfidence, Indep38001SyncStragglerBesideLongTransfersIsAtMostMedium) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: indep needs it";
  rapidjson::Document d;
  std::string out;
  const rapidjson::Value* row = nullptr;
  ASSERT_NO_FATAL_FAILURE(
      RunBenchRow("indep/run_indep.py", 38001, "straggler-worker", true, &d, &out, &row));
  const std::string why = (*row)["why"].GetString();
  EXPECT_STREQ((*row)["confidence"].GetString(), "medium") << why;
  EXPECT_NE(why.find("place in that burst"), std::string::npos) << why;
}

}  // namespace
}  // namespace tfdiag::test
