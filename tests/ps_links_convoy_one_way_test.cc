// The PS links in a convoy read one way under the band (LinkConvoy::under_band,
// convoy_one_way_min_link_pct) and the floor each worker's own NIC puts under a fix of the PS
// links (LinkConvoy::MostSaving), on hand-made convoys and on spent gen2 jobs against their twins
// (bench/twins/gen2, written apart from tfdiag). Each gen2 job runs in a few seconds.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <cmath>
#include <string>

#include "analyzers/ps_links_convoy.h"
#include "tests/replay_util.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

// 2 PS, 10 ms out and 10 ms in per worker step each, read one way; the workers wait 100% of the
// step, their compute 10% of it and each worker's own NIC 40% (20 ms x 2 PS of a 100 ms step).
LinkConvoy TwoPsOneWay(bool worker_nics) {
  LinkConvoy cv;
  cv.convoy = cv.one_way = true;
  cv.link_share = 1;
  cv.wait_share = 1;
  cv.out_ns = {10e6, 10e6};
  cv.in_ns = {10e6, 10e6};
  cv.ps_task = {0, 1};
  cv.busiest_ns = 10e6;
  cv.sum_ns = 20e6;
  cv.worker_nics = worker_nics;
  cv.own_share = 0.1;
  cv.worker_share = 0.4;
  return cv;
}

TEST(ConvoyOneWay, EachWorkersOwnNicBoundsTheSaving) {
  // 2 -> 8 PS: the busiest link's 10 ms becomes 20 / 8 = 2.5 ms, 75% saved on the links alone.
  EXPECT_NEAR(TwoPsOneWay(false).SavingAt(8), 0.75, 1e-12);
  EXPECT_NEAR(TwoPsOneWay(false).MostSaving(), 1.0, 1e-12);
  // With the workers' NICs as links: the step keeps the compute and each worker's own transfers,
  // 10% + 40%, so at most half of it goes, whatever the count.
  EXPECT_NEAR(TwoPsOneWay(true).MostSaving(), 0.5, 1e-12);
  EXPECT_NEAR(TwoPsOneWay(true).SavingAt(8), 0.5, 1e-12);
  EXPECT_NEAR(TwoPsOneWay(true).SavingAt(64), 0.5, 1e-12);
  // A saving under the floor is left as it is: 2 -> 3 PS, 1 - 20 / 3 / 10 = 1/3.
  EXPECT_NEAR(TwoPsOneWay(true).SavingAt(3), 1.0 / 3, 1e-12);
  // The waits still bound it where they are lower than the floor.
  LinkConvoy low = TwoPsOneWay(true);
  low.wait_share = 0.3;
  EXPECT_NEAR(low.MostSaving(), 0.3, 1e-12);
  // A floor over the step saves nothing, never a negative saving.
  LinkConvoy over = TwoPsOneWay(true);
  over.worker_share = 1.2;
  EXPECT_DOUBLE_EQ(over.MostSaving(), 0);
  EXPECT_DOUBLE_EQ(over.SavingAt(8), 0);
}

// The rule set reads the one-way band's bottom under the convoy band's.
TEST(ConvoyOneWay, TheRuleSetReadsTheOneWayBottomUnderTheBand) {
  const RuleSet rules = Rules();
  const ConvoyLimits lim = ConvoyLimitsOf(*rules.Find("ps-worker-ratio"));
  EXPECT_GT(lim.one_way_min_link, 0);
  EXPECT_LT(lim.one_way_min_link, lim.min_link);
  // A rule without the param keeps the band's bottom for one way (no reading under it).
  Rule bare;
  EXPECT_GE(ConvoyLimitsOf(bare).one_way_min_link, ConvoyLimitsOf(bare).min_link);
}

// gen2 report38 8008 (spent in session 61): 9 PS for 8 workers, ps:0 holding the hot dense kernel;
// each PS's NIC at 0.9 Gb/s, both ways 160% of the step, ps:0's busier direction 80% (under the
// band). Read one way, the hot kernel's partition without the floor was predicted 34.4 ms against
// the twin's 53.7 ms (-36%): each worker's own NIC (the replay as is took the workers' NICs as
// links) still carries 22% of the 187 ms step and its compute 9%. With the floor: 58.1 ms (+8%),
// `Fix first` right (the partition buys 70%, the best single fix).
TEST(ConvoyOneWay, Gen2HotPartitionKeepsEachWorkersOwnNic) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen2 needs it";
  rapidjson::Document d;
  std::string out;
  const rapidjson::Value* row = nullptr;
  ASSERT_NO_FATAL_FAILURE(RunBenchRow("gen2/run_gen2.py", 8008, "hot-ps", true, &d, &out, &row));
  const double pred = (*row)["pred_ms"].GetDouble(), twin = (*row)["twin_ms"].GetDouble();
  EXPECT_LE(std::abs(pred - twin) / twin, 0.15) << out;
  const std::string why = (*row)["why"].GetString();
  EXPECT_NE(why.find("each worker's own NIC"), std::string::npos) << why;
  EXPECT_NE(why.find("one way under the band"), std::string::npos) << why;
  EXPECT_STREQ((*row)["confidence"].GetString(), "low") << why;
  EXPECT_TRUE((*row)["in_range"].GetBool()) << out;
  EXPECT_TRUE(d["jobs"][0]["fix_first_right"].GetBool()) << out;
}

// gen2 6421 (spent pool): 4 PS for 12 workers with uneven shards, the links both ways 170% of the
// step, the busiest PS's busier direction 85% (under the band). Before, nothing was named (the
// FIFO replay and the links replay refuse, and no convoy was read): 8 PS buy 83% in the twin.
// Read one way: 4 -> 8 PS predicted within 1% of the twin, low confidence, `Fix first` right.
TEST(ConvoyOneWay, Gen2CountReadOneWayUnderTheBand) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen2 needs it";
  rapidjson::Document d;
  std::string out;
  const rapidjson::Value* row = nullptr;
  ASSERT_NO_FATAL_FAILURE(
      RunBenchRow("gen2/run_gen2.py", 6421, "ps-worker-ratio", true, &d, &out, &row));
  const double pred = (*row)["pred_ms"].GetDouble(), twin = (*row)["twin_ms"].GetDouble();
  EXPECT_LE(std::abs(pred - twin) / twin, 0.10) << out;
  EXPECT_STREQ((*row)["confidence"].GetString(), "low") << (*row)["why"].GetString();
  EXPECT_NE(std::string((*row)["why"].GetString()).find("one way under the band"),
            std::string::npos)
      << (*row)["why"].GetString();
  EXPECT_TRUE(d["jobs"][0]["fix_first_right"].GetBool()) << out;
}

}  // namespace
}  // namespace tfdiag::test
