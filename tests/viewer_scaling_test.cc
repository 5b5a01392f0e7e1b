// tfdiag-view --scaling (issue 18): runs of one job side by side. Simulated sweeps (tfdiag simulate
// --workers 2,4,8,16) are opened in the viewer under xvfb-run; the view's dump and screenshot are
// checked against `tfdiag scaling -f json` on the same runs: the runs in worker order with the
// same throughput, the chart's points where those figures put them, each PS bar as high as its
// busy share and red exactly when saturated (rules/default.rules.json scaling-limit
// saturation_pct). Skipped when xvfb-run or the viewer is not available.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "tests/viewer_util.h"

namespace tfdiag::test {
namespace {

class ViewerScaling : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why = ViewerSkipReason();
    if (!why.empty()) GTEST_SKIP() << why;
  }

  // Writes the sweep; returns its runs, largest first (the viewer orders them itself).
  std::string Sweep(const std::string& scenario, const std::string& extra) {
    RunResult r = RunTfdiag("simulate " + scenario + " --workers 2,4,8,16 --steps 12 " + extra +
                            " -o " + dir_.path());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return dir_.File("workers-16.json") + " " + dir_.File("workers-2.json") + " " +
           dir_.File("workers-8.json") + " " + dir_.File("workers-4.json");
  }

  // `tfdiag scaling -f json` on `runs` (want), and the viewer's screenshot and view dump of the
  // same runs (shot, view); each parsed. Fails the test when any of them fails.
  void Open(const std::string& runs, const std::string& shot_name) {
    RunResult ref = RunTfdiag("scaling " + runs + " -f json");
    ASSERT_EQ(ref.exit_code, 0) << ref.err;
    want_ = ParseJson(ref.out);
    ASSERT_TRUE(want_.IsObject()) << ref.out;
    const std::string dump = dir_.File("view.json");
    shot_ = Screenshot(dir_, shot_name, "--scaling --dump-view " + dump + " " + runs);
    ASSERT_EQ(shot_.run.exit_code, 0) << shot_.run.err;
    view_ = ParseJson(ReadFile(dump));
    ASSERT_TRUE(view_.IsObject() && view_["scaling"].IsObject()) << ReadFile(dump);
  }

  TempDir dir_;
  rapidjson::Document want_, view_;
  Shot shot_;
};

constexpr double kSaturationPct = 80;  // rules/default.rules.json, scaling-limit saturation_pct

// Checks the dump against `tfdiag scaling -f json` on the same runs; returns how many bars the
// figures call saturated.
int CheckAgainstScaling(const rapidjson::Value& view, const rapidjson::Value& ref) {
  const auto& runs = view["runs"];
  const auto& want = ref["runs"];
  EXPECT_EQ(runs.Size(), want.Size());
  if (runs.Size() != want.Size() || runs.Size() < 2) return -1;
  for (rapidjson::SizeType i = 0; i < runs.Size(); ++i) {
    EXPECT_EQ(runs[i]["workers"].GetInt(), want[i]["workers"].GetInt()) << i;
    EXPECT_NEAR(runs[i]["throughput"].GetDouble(), want[i]["throughput_steps_per_s"].GetDouble(),
                1e-9 * want[i]["throughput_steps_per_s"].GetDouble())
        << i;
  }
  // The chart: x follows the worker counts, the height above the x axis the throughput (one
  // scale for all points), the ideal line is linear in workers from the smallest run.
  const auto& chart = view["chart"];
  const double base = chart["y"].GetDouble() + chart["h"].GetDouble();
  const auto& pts = chart["measured"];
  const auto& ideal = chart["ideal"];
  EXPECT_EQ(pts.Size(), runs.Size());
  EXPECT_EQ(ideal.Size(), runs.Size());
  if (pts.Size() != runs.Size() || ideal.Size() != runs.Size()) return -1;
  const double t0 = want[0]["throughput_steps_per_s"].GetDouble();
  const double h0 = base - pts[0][1].GetDouble();
  const double w0 = want[0]["workers"].GetDouble();
  EXPECT_GT(h0, 10);
  for (rapidjson::SizeType i = 1; i < pts.Size(); ++i) {
    EXPECT_GT(pts[i][0].GetDouble(), pts[i - 1][0].GetDouble()) << i;
    const double t = want[i]["throughput_steps_per_s"].GetDouble();
    EXPECT_NEAR(base - pts[i][1].GetDouble(), h0 * t / t0, 1.0) << "run " << i;
    const double w = want[i]["workers"].GetDouble();
    EXPECT_NEAR(base - ideal[i][1].GetDouble(), h0 * w / w0, 1.0) << "ideal " << i;
  }
  // The bars: one per PS of each run, height = busy share of a 100% bar, red iff saturated.
  int hot = 0;
  size_t bars = 0;
  for (const auto& b : view["bars"].GetArray()) {
    const auto& r = want[b["run"].GetUint()];
    const double busy = r["ps_busy_pct"][b["task"].GetString()].GetDouble();
    EXPECT_NEAR(b["busy_pct"].GetDouble(), busy, 1e-9) << b["task"].GetString();
    EXPECT_EQ(b["hot"].GetBool(), busy >= kSaturationPct) << b["task"].GetString() << " " << busy;
    hot += busy >= kSaturationPct;
    ++bars;
  }
  size_t ps = 0;
  for (const auto& r : want.GetArray()) ps += r["ps_busy_pct"].MemberCount();
  EXPECT_EQ(bars, ps);
  return hot;
}

TEST_F(ViewerScaling, HotPsSweepShowsTheSaturatedPsInRed) {
  // As tests/scaling_test.cc: rows of 256 floats saturate ps:0 within the sweep.
  const std::string runs = Sweep("hot-ps", "--embedding-dim 256");
  ASSERT_NO_FATAL_FAILURE(Open(runs, "hot.png"));
  ASSERT_GE(want_["findings"].Size(), 1u);
  const Shot& s = shot_;
  for (const char* p : {"findings", "throughput", "ps_busy", "runs"}) {
    EXPECT_EQ(s.panels.count(p), 1u) << p << "\n" << s.run.out;
  }
  const int hot = CheckAgainstScaling(view_["scaling"], want_);
  ASSERT_GE(hot, 1) << "ps:0 saturates in this sweep";
  // The saturated bars are solid blocks of the exact hot colour, in the PS busy panel only.
  int64_t area = 0;
  for (const auto& b : view_["scaling"]["bars"].GetArray()) {
    if (b["hot"].GetBool()) area += std::lround(b["w"].GetDouble() * b["h"].GetDouble());
  }
  const int64_t red = CountColour(s.image, s.panels.at("ps_busy"), kHotR, kHotG, kHotB);
  EXPECT_GT(red, area * 8 / 10);
  EXPECT_EQ(CountColour(s.image, Rect{0, 0, s.image.w, s.image.h}, kHotR, kHotG, kHotB), red);
  // The finding can be selected; the chart draws lines and points (many colours).
  EXPECT_GT(DistinctColours(s.image, s.panels.at("throughput")), 4);
  RunResult sel =
      RunView("--scaling --select scaling-limit --dump-view " + dir_.File("sel.json") + " " + runs);
  EXPECT_EQ(sel.exit_code, 0) << sel.err;
}

TEST_F(ViewerScaling, BalancedSweepHasNoSaturatedPs) {
  const std::string runs = Sweep("balanced", "");
  ASSERT_NO_FATAL_FAILURE(Open(runs, "balanced.png"));
  ASSERT_EQ(want_["findings"].Size(), 0u);
  EXPECT_EQ(CheckAgainstScaling(view_["scaling"], want_), 0);
  const Image& img = shot_.image;
  EXPECT_EQ(CountColour(img, Rect{0, 0, img.w, img.h}, kHotR, kHotG, kHotB), 0);
  // No finding to select: exit 2 saying so.
  RunResult sel =
      RunView("--scaling --select scaling-limit --dump-view " + dir_.File("sel.json") + " " + runs);
  EXPECT_EQ(sel.exit_code, 2);
  EXPECT_NE(sel.err.find("no rule fired"), std::string::npos) << sel.err;
}

TEST_F(ViewerScaling, BadRunsExitTwoWithOneLine) {
  const std::string runs = Sweep("balanced", "");
  // One run only.
  RunResult one =
      RunView("--scaling --dump-view " + dir_.File("v.json") + " " + dir_.File("workers-2.json"));
  EXPECT_EQ(one.exit_code, 2);
  EXPECT_NE(one.err.find("at least two"), std::string::npos) << one.err;
  // A run that is not a timeline: its file named.
  const std::string bad = dir_.File("bad.json");
  WriteFile(bad, "{\"traceEvents\": [");
  RunResult broken = RunView("--scaling --dump-view " + dir_.File("v.json") + " " +
                             dir_.File("workers-2.json") + " " + bad);
  EXPECT_EQ(broken.exit_code, 2);
  EXPECT_NE(broken.err.find("bad.json"), std::string::npos) << broken.err;
  EXPECT_EQ(std::count(broken.err.begin(), broken.err.end(), '\n'), 1) << broken.err;
  EXPECT_NE(access(dir_.File("v.json").c_str(), F_OK), 0) << "no view dump after a failed load";
}

}  // namespace
}  // namespace tfdiag::test
