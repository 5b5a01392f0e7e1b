// tfdiag-view's Scaling outlook tab (issue 44 item 3): one profile's outlook drawn as steps/s
// against workers. The view's dump is checked against `tfdiag analyze -f json` on the same file:
// the same points, each drawn where its figures put it (x by workers, height by steps/s on one
// scale), the ideal line through the captured point, and the saturation mark between the points
// that bracket it. Skipped when xvfb-run or the viewer is not available.
#include <gtest/gtest.h>

#include <string>

#include "tests/viewer_util.h"

namespace tfdiag::test {
namespace {

TEST(ViewerOutlook, ScalingTabDrawsTheOutlook) {
  const std::string why = ViewerSkipReason();
  if (!why.empty()) GTEST_SKIP() << why;
  TempDir dir;
  const std::string path = dir.File("hot.json");
  RunResult sim = RunTfdiag("simulate hot-ps --workers 8 --steps 24 --seed 7 -o " + path);
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  RunResult ref = RunTfdiag("analyze -f json " + path);
  rapidjson::Document want = ParseJson(ref.out);
  ASSERT_TRUE(want.IsObject() && want["outlook"].IsObject()) << ref.out;
  const auto& o = want["outlook"];
  ASSERT_GE(o["points"].Size(), 3u);
  const std::string dump = dir.File("view.json");
  Shot shot = Screenshot(dir, "outlook", "--tab scaling --dump-view " + dump + " " + path);
  ASSERT_EQ(shot.run.exit_code, 0) << shot.run.err;
  rapidjson::Document view = ParseJson(ReadFile(dump));
  ASSERT_TRUE(view.IsObject()) << ReadFile(dump);
  EXPECT_STREQ(view["tab"].GetString(), "scaling");
  const auto& v = view["outlook"];
  ASSERT_TRUE(v.IsObject()) << ReadFile(dump);
  EXPECT_STREQ(v["verdict"].GetString(), o["verdict"].GetString());
  ASSERT_EQ(v["points"].Size(), o["points"].Size());
  const auto& chart = v["chart"];
  const auto& as_is = chart["as_is"];
  const auto& after = chart["after_fix"];
  const auto& ideal = chart["ideal"];
  ASSERT_EQ(as_is.Size(), o["points"].Size());
  ASSERT_EQ(ideal.Size(), o["points"].Size());
  EXPECT_EQ(after.Size(), o["fix_first"].IsNull() ? 0u : o["points"].Size());
  const double x0 = chart["x"].GetDouble(), w = chart["w"].GetDouble();
  const double bottom = chart["y"].GetDouble() + chart["h"].GetDouble();
  // One scale: height / steps/s is the same for every point, x / workers likewise.
  const double k_y = (bottom - as_is[0][1].GetDouble()) / o["points"][0]["steps_per_s"].GetDouble();
  const double k_x = (as_is[0][0].GetDouble() - x0) / o["points"][0]["workers"].GetDouble();
  ASSERT_GT(k_y, 0);
  ASSERT_GT(k_x, 0);
  for (rapidjson::SizeType i = 0; i < as_is.Size(); ++i) {
    const auto& p = o["points"][i];
    EXPECT_EQ(v["points"][i]["workers"].GetInt(), p["workers"].GetInt());
    EXPECT_NEAR(as_is[i][0].GetDouble() - x0, k_x * p["workers"].GetDouble(), 1.5) << i;
    EXPECT_NEAR(bottom - as_is[i][1].GetDouble(), k_y * p["steps_per_s"].GetDouble(), 1.5) << i;
    if (after.Size() > i) {
      EXPECT_NEAR(bottom - after[i][1].GetDouble(), k_y * p["steps_per_s_after_fix"].GetDouble(),
                  1.5)
          << i;
    }
    // The ideal: linear in workers from the captured point.
    const double ideal_sps = o["points"][0]["steps_per_s"].GetDouble() * p["workers"].GetDouble() /
                             o["points"][0]["workers"].GetDouble();
    EXPECT_NEAR(bottom - ideal[i][1].GetDouble(), std::min(k_y * ideal_sps, chart["h"].GetDouble()),
                1.5)
        << i;
    EXPECT_LE(as_is[i][0].GetDouble(), x0 + w + 0.5);
  }
  if (o["saturates_at"].IsObject()) {
    EXPECT_NEAR(chart["saturation_x"].GetDouble() - x0,
                k_x * o["saturates_at"]["workers"].GetDouble(), 1.5);
    EXPECT_EQ(v["saturates_at"].GetInt(), o["saturates_at"]["workers"].GetInt());
  } else {
    EXPECT_EQ(chart["saturation_x"].GetDouble(), -1);
  }
  EXPECT_GT(DistinctColours(shot.image), 8);
}

}  // namespace
}  // namespace tfdiag::test
