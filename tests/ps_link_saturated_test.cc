// A PS link saturated one way (analyzers/ps_link_saturated.h) on jobs of the second independent
// generator (bench/twins/gen2, written apart from tfdiag).
// gen2 report8 1818 (spent): 1 PS for 25 workers, its NIC's answers out 92% of the step at the
// rate the capture reads, the PS's CPU busy 6% of its threads. Before, ps-worker-ratio named 5 PS
// (the band) and its prediction was withheld ("the PS model explains too little of the workers'
// waits": the link's queue held as fixed waits); 2026-11-30: predicted over the links with no
// wait held, 1.49 s -> 282 ms against the twin's 350 ms (-20%, medium), `Fix first` right.
// 2026-11-30 (w65): read first as the links in a convoy one way (its busier direction alone,
// analyzers/ps_links_convoy.h LinkConvoy::one_way), 1 -> 3 PS, 1.49 s -> 576 ms against the
// twin's 537 ms (+7%), the same direction the saturated link reads.
// gen2 report8 1813 (spent): the busiest PS's link as loaded (98%), but the links leave 29% of the
// step in transfers held fixed: refused. About twenty seconds.
#include "analyzers/ps_link_saturated.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <cmath>
#include <string>

#include "analyzers/replay.h"
#include "analyzers/replay_nic_bytes.h"
#include "tests/replay_util.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

// The top of the saturated band: ps-worker-ratio's convoy_max_link_pct / 100 in the default set.
double MaxDirection() {
  static const RuleSet rules = Rules();
  return rules.Find("ps-worker-ratio")->Param("convoy_max_link_pct") / 100;
}

TEST(PsLinkSaturated, Gen2LonePsSaturatedLinkPredictsTheCountAgainstItsTwin) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen2 needs it";
  rapidjson::Document d;
  std::string out;
  ASSERT_NO_FATAL_FAILURE(
      RunBenchJobs("gen2/run_gen2.py", "--seeds 1818 --no-outlook", 1, &d, &out));
  const rapidjson::Value* row = nullptr;
  for (const auto& r : d["jobs"][0]["rows"].GetArray()) {
    if (std::string(r["rule"].GetString()) == "ps-worker-ratio") row = &r;
  }
  ASSERT_NE(row, nullptr) << "no ps-worker-ratio finding\n" << out;
  const rapidjson::Value& r = *row;
  ASSERT_EQ(std::string(r["confidence"].GetString()), "medium") << r["why"].GetString() << out;
  const double pred = r["pred_ms"].GetDouble(), twin = r["twin_ms"].GetDouble();
  EXPECT_LE(std::abs(pred - twin) / twin, 0.25) << out;
  const std::string why = r["why"].GetString();
  EXPECT_TRUE(why.find("a PS link saturated") != std::string::npos ||
              why.find("its busier direction") != std::string::npos)
      << why;
  EXPECT_TRUE(d["jobs"][0]["fix_first_right"].GetBool()) << out;
}

// The model's own reading: 1818's busiest link direction in the band and a PS-count fix predicted
// to save most of the step; 1813's refused. Until session 53 the refusal was for the transfers its
// links hold fixed; with the workers' NICs as links too (ReplayModel::worker_links) the links
// explain more of them, and the replay over the links with no wait held misses its step by 11%.
TEST(PsLinkSaturated, ReadsTheSaturatedDirectionAndRefusesWhereTheReplayMisses) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen2 needs it";
  TempDir dir;
  Fix fix;
  Impact im;
  std::string why;
  {
    SimJob j;
    ASSERT_NO_FATAL_FAILURE(LoadSimJob("gen2", 1818, dir, &j));
    const ChosenLinks links = ChooseLinks(j.In(), j.m);
    const double dir_share = BusiestLinkDirection(j.m, links.linked);
    EXPECT_GE(dir_share, kMinSaturatedDirection);
    EXPECT_LE(dir_share, MaxDirection());
    fix.ps_count = 5;
    im.step_ns = j.m.measured_step_ns;
    ASSERT_TRUE(PredictFromSaturatedLink(j.m, links.linked, fix, 0, "1 PS -> 5", "", "checks",
                                         MaxDirection(), &im, &why))
        << why;
    EXPECT_EQ(im.confidence, "medium");
    EXPECT_GT(im.saving_pct, 50);
    EXPECT_LT(im.low_ns, im.step_ns_after_fix);
  }
  SimJob j;
  ASSERT_NO_FATAL_FAILURE(LoadSimJob("gen2", 1813, dir, &j));
  const ChosenLinks links = ChooseLinks(j.In(), j.m);
  EXPECT_TRUE(links.linked.worker_links) << "the workers' NICs explain its transfers";
  EXPECT_GE(BusiestLinkDirection(j.m, links.linked), kMinSaturatedDirection);
  fix.ps_count = 10;
  Impact none;
  EXPECT_FALSE(PredictFromSaturatedLink(j.m, links.linked, fix, 0, "8 PS -> 10", "", "",
                                        MaxDirection(), &none, &why));
  EXPECT_NE(why.find("with no wait held the replay of the capture as is misses it by"),
            std::string::npos)
      << why;
  EXPECT_EQ(none.method, Impact{}.method);
}

// gen2 report22 4619 (spent): 9 PS, ps:1 under a CPU quota the capture does not show, its answers
// read 100% of the step at the rate the last answers give (6.8 Gb/s; the NIC is 10 Gb/s). The
// saturated link predicted 9 -> 20 PS at +167% off its twin. That estimate reads near 100%
// wherever the answers take many times their spacing, so over kMaxAnswersDirection it is withheld,
// saying why. Fails on the code before (predicted).
TEST(PsLinkSaturated, Gen2AnswersEstimateNearTheThroughputIsWithheld) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen2 needs it";
  rapidjson::Document d;
  std::string out;
  const rapidjson::Value* row = nullptr;
  ASSERT_NO_FATAL_FAILURE(
      RunBenchRow("gen2/run_gen2.py", 4619, "ps-worker-ratio", false, &d, &out, &row));
  EXPECT_FALSE(row->HasMember("pred_ms")) << (*row)["why"].GetString();
  EXPECT_NE(std::string((*row)["withheld"].GetString()).find("the rate the last answers give"),
            std::string::npos)
      << (*row)["why"].GetString();
}

}  // namespace
}  // namespace tfdiag::test
