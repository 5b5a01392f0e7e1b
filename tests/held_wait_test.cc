// What the capture cannot show, said and not predicted (issue 44's trust check): on spent gen2
// jobs, each against its fixed twin from gen2's simulator (which shares no code with the replay),
// a new PS count whose held wait would decide its prediction over the PS links is withheld, and a
// PS that shows no apply op under SyncReplicasOptimizer has its applies costed at their take's
// time once asynchronous, so going asynchronous is no longer promised where its twin is slower.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <string>

#include "tests/replay_util.h"

namespace tfdiag::test {
namespace {

// gen2 report39 8212 (spent): 15 -> 30 PS replayed over the PS links, which hold the wait the PS
// queue does not explain as it is (31% of the predicted step); predicted, it was +69% off its
// twin. Withheld now, naming the held wait.
TEST(HeldWaitGen2, APsCountWhoseHeldWaitDecidesOverTheLinksIsWithheld) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen2 needs it";
  rapidjson::Document d;
  std::string out;
  const rapidjson::Value* row = nullptr;
  ASSERT_NO_FATAL_FAILURE(
      RunBenchRow("gen2/run_gen2.py", 8212, "ps-worker-ratio", false, &d, &out, &row));
  EXPECT_FALSE(row->HasMember("pred_ms")) << out;
  const std::string why = (*row)["withheld"].GetString();
  EXPECT_NE(why.find("wait the PS queue does not explain (the PS NICs replayed as links explain "
                     "part of it), held fixed"),
            std::string::npos)
      << why;
  EXPECT_NE(why.find("so whether it stays decides the prediction"), std::string::npos) << why;
}

// gen2 report41 8617 (spent): 8 PS under a CFS quota; gen2 writes the update's apply inside the
// accumulator's take, so the PS shows no apply op. Going asynchronous was predicted -36% and named
// first; its twin is slower. Now each push's apply is taken at the take's time, the PS's busy
// floor is over the step as is, and the finding is LOW with nothing predicted.
TEST(SyncTakeGen2, AppliesTheCaptureDoesNotShowAreCostedAtTheirTake) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen2 needs it";
  rapidjson::Document d;
  std::string out;
  const rapidjson::Value* row = nullptr;
  ASSERT_NO_FATAL_FAILURE(
      RunBenchRow("gen2/run_gen2.py", 8617, "sync-replicas", false, &d, &out, &row));
  ASSERT_TRUE(row->HasMember("twin_saving_pct")) << out;
  ASSERT_LT((*row)["twin_saving_pct"].GetDouble(), 0) << "the twin: asynchronous is slower\n"
                                                      << out;
  EXPECT_FALSE(row->HasMember("pred_ms")) << out;
  EXPECT_STREQ((*row)["severity"].GetString(), "low") << out;
  const std::string why = (*row)["why"].GetString();
  EXPECT_NE(why.find("the capture shows no apply op there, each apply taken at its aggregate's "
                     "take's time"),
            std::string::npos)
      << why;
  const rapidjson::Value& job = d["jobs"][0];
  ASSERT_TRUE(job.HasMember("fix_first"));
  EXPECT_FALSE(job["fix_first"].IsString() &&
               std::string(job["fix_first"].GetString()) == "sync-replicas")
      << out;
}

}  // namespace
}  // namespace tfdiag::test
