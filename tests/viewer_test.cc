// tfdiag-view end to end (issue 8): screenshots rendered under xvfb-run with Mesa, decoded with
// stb_image (libstb-dev), and checked for content: not blank, the hot PS's bar in the exact hot
// colour, selecting a finding changes the focused region, different inputs give different
// images. Errors exit 2 with one line. Skipped when xvfb-run or the viewer is not available.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "core/bundle.h"
#include "core/capture_builder.h"
#include "samples/simulator.h"
#include "tests/viewer_util.h"

namespace tfdiag::test {
namespace {

class ViewerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why = ViewerSkipReason();
    if (!why.empty()) GTEST_SKIP() << why;
  }

  std::string HotPs() { return HotPsSample(dir_); }
  static std::string RealTrace() { return SharedTrace("tfe_e0cd14f_timeline_client.json"); }

  TempDir dir_;
};

TEST_F(ViewerTest, RealTraceScreenshotIsWrittenAndNotBlank) {
  if (!SharedAvailable()) GTEST_SKIP() << "../shared/traces not found beside the repository";
  Shot s = Screenshot(dir_, "real.png", "'" + RealTrace() + "'");
  ASSERT_EQ(s.run.exit_code, 0) << s.run.err;
  ASSERT_EQ(s.image.w, 1600);
  ASSERT_EQ(s.image.h, 1000);
  // Not blank: many colours (the pixel font is drawn without anti-aliasing, so text adds few), and
  // no single colour covers nearly everything.
  EXPECT_GT(DistinctColours(s.image), 32);
  EXPECT_LT(MostCommonShare(s.image), 0.97);
  for (const char* p : {"findings", "timeline", "ps_load", "details"})
    EXPECT_EQ(s.panels.count(p), 1u) << p;
  // The timeline draws ops: more than the background and text colours in its region.
  Image& img = s.image;
  const Rect& t = s.panels["timeline"];
  EXPECT_GT(DistinctColours(img, t), 16);
  // No hot PS in this trace: no pixel of the hot colour in the PS load panel.
  EXPECT_EQ(CountColour(img, s.panels["ps_load"], kHotR, kHotG, kHotB), 0);
}

TEST_F(ViewerTest, HotPsBarIsDrawnInTheHotColour) {
  Shot s = Screenshot(dir_, "hot.png", "--size 1280x800 '" + HotPs() + "'");
  ASSERT_EQ(s.run.exit_code, 0) << s.run.err;
  ASSERT_EQ(s.image.w, 1280);
  ASSERT_EQ(s.image.h, 800);
  ASSERT_EQ(s.panels.count("ps_load"), 1u) << s.layout;
  // The bar of ps:0 (about 85% of PS busy time) is a solid block of the exact colour.
  EXPECT_GT(CountColour(s.image, s.panels["ps_load"], kHotR, kHotG, kHotB), 2000);
}

TEST_F(ViewerTest, SelectingTheHotPsFindingChangesTheFocusedRegion) {
  std::string hot = HotPs();
  Shot plain = Screenshot(dir_, "plain.png", "'" + hot + "'");
  Shot focused = Screenshot(dir_, "focused.png", "--select hot-ps '" + hot + "'");
  ASSERT_EQ(plain.run.exit_code, 0) << plain.run.err;
  ASSERT_EQ(focused.run.exit_code, 0) << focused.run.err;
  ASSERT_EQ(plain.image.w, focused.image.w);
  const Rect& t = plain.panels["timeline"];
  // The timeline zooms to the finding's range and tints ps:0's rows; the findings panel shows
  // the evidence and fix.
  EXPECT_GT(DiffPixels(plain.image, focused.image, t), int64_t{t.w} * t.h / 50);
  EXPECT_GT(DiffPixels(plain.image, focused.image, plain.panels["findings"]), 2000);
  // Selecting by index gives the same picture as by rule id (the only finding is hot-ps).
  Shot by_index = Screenshot(dir_, "index.png", "--select 0 '" + hot + "'");
  ASSERT_EQ(by_index.run.exit_code, 0) << by_index.run.err;
  EXPECT_EQ(DiffPixels(focused.image, by_index.image, Rect{0, 0, 1600, 1000}), 0);
}

TEST_F(ViewerTest, HoveringAnOpShowsItsTooltip) {
  std::string hot = HotPs();
  Shot plain = Screenshot(dir_, "plain.png", "'" + hot + "'");
  // worker:0's first lane, in its first step's dense_1/MatMul (the layout is fixed).
  Shot hover = Screenshot(dir_, "hover.png", "--hover 690,286 '" + hot + "'");
  ASSERT_EQ(hover.run.exit_code, 0) << hover.run.err;
  EXPECT_NE(hover.layout.find("hover worker:0 dense_1/MatMul (MatMul)"), std::string::npos)
      << hover.layout;
  EXPECT_GT(DiffPixels(plain.image, hover.image, hover.panels["timeline"]), 2000);
}

TEST_F(ViewerTest, DifferentInputsGiveDifferentImages) {
  if (!SharedAvailable()) GTEST_SKIP() << "../shared/traces not found beside the repository";
  Shot a = Screenshot(dir_, "a.png", "'" + RealTrace() + "'");
  Shot b = Screenshot(dir_, "b.png", "'" + HotPs() + "'");
  ASSERT_EQ(a.run.exit_code, 0) << a.run.err;
  ASSERT_EQ(b.run.exit_code, 0) << b.run.err;
  EXPECT_GT(DiffPixels(a.image, b.image, Rect{0, 0, 1600, 1000}), 1600 * 1000 / 20);
}

TEST_F(ViewerTest, BundleOpensOnItsCpuSamples) {
  CaptureBuilder b;
  b.meta().interval_ms = 1000;  // samples 1 s apart, as attach writes them
  uint32_t ps = b.AddTask("ps", 0, 0);
  ProcessRow p;
  p.task = ps;
  p.pid = 41;
  p.pod = b.Intern("job-ps-0");
  p.cpuset = b.Intern("0-7");
  p.cpu_limit = 2;
  p.host_cpus = 8;
  uint32_t proc = b.AddProcess(p);
  for (int i = 0; i < 30; ++i) {
    ProcessSampleRow s;
    s.ts = 1'000'000'000LL * (i + 1);
    s.process = proc;
    s.threads = 64;
    s.runnable = 6 + i % 5;
    s.cpu_ns = 1'900'000'000LL * i;
    s.voluntary = 1000 * i;
    s.involuntary = 300 * i;
    s.nr_periods = 10 * i;
    s.nr_throttled = 7 * i;
    b.AddProcessSample(s);
  }
  Capture c = b.Finish();
  std::string path = dir_.File("live.tfdiag.json");
  ASSERT_TRUE(WriteBundle(c, path).ok());
  Shot s = Screenshot(dir_, "cpu.png", "'" + path + "'");
  ASSERT_EQ(s.run.exit_code, 0) << s.run.err;
  // The CPU tab is open: the runnable line (0xF5A623) is drawn in the bottom panel.
  EXPECT_GT(CountColour(s.image, s.panels["details"], 0xF5, 0xA6, 0x23), 50);
  // Below the tab bar and the legend (whose text uses the series' colours): the CPU limit
  // (2 CPUs, dashed 0xFF7070), involuntary switches (0x5BC0BE), and the throttling strip
  // (0xC050E0 blended by the throttled share, 70% here: purple).
  Rect charts = s.panels["details"];
  charts.y += 48;
  charts.h -= 48;
  EXPECT_GT(CountColour(s.image, charts, 0xFF, 0x70, 0x70), 200) << "CPU limit";
  EXPECT_GT(CountColour(s.image, charts, 0x5B, 0xC0, 0xBE), 200) << "involuntary switches/s";
  int64_t purple = 0;
  for (int y = charts.y; y < charts.y + charts.h; ++y) {
    for (int x = charts.x; x < charts.x + charts.w; ++x) {
      const uint8_t* px = s.image.At(x, y);
      purple += px[0] > 100 && px[2] > 130 && px[1] < 90 && px[2] - px[1] > 60;
    }
  }
  EXPECT_GT(purple, 2000) << "throttling strip";
}

TEST_F(ViewerTest, ProgressBarShowsWhileALargeFileLoads) {
  // About 150k ops, 30 MB: reading alone takes many frames.
  sim::ScenarioParams p;
  p.scenario = "hot-ps";
  p.steps = 100;
  const std::string big = dir_.File("big.json");
  ASSERT_TRUE(sim::WriteScenario(p, big).ok());
  Shot s = Screenshot(dir_, "loading.png", "--screenshot-loading '" + big + "'");
  ASSERT_EQ(s.run.exit_code, 0) << s.run.err;
  EXPECT_NE(s.layout.find("loading "), std::string::npos) << s.layout;
  ASSERT_EQ(s.panels.count("status"), 1u) << s.layout;
  EXPECT_EQ(s.panels.count("timeline"), 0u) << "nothing but the status bar while loading";
  // The filled part of the bar in Dear ImGui's dark-style PlotHistogram colour (230, 179, 0):
  // at least 2% of a bar of at least 400 x 19 pixels.
  EXPECT_GT(CountColour(s.image, s.panels["status"], 230, 179, 0), 150);
  EXPECT_GT(MostCommonShare(s.image), 0.9) << "the rest of the window is empty";
}

TEST_F(ViewerTest, BenchFramesPrintsMeanAndP99) {
  RunResult r = RunView("--bench-frames 20 '" + HotPs() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("bench: 20 frames"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("p99"), std::string::npos) << r.out;
}

TEST_F(ViewerTest, ErrorsExitTwoWithOneLine) {
  if (!SharedAvailable()) GTEST_SKIP() << "../shared/traces not found beside the repository";
  std::string bad = dir_.File("bad.json");
  WriteFile(bad, "{\"traceEvents\": [ {\"ph\": ");
  RunResult r = RunView("--screenshot '" + dir_.File("x.png") + "' '" + bad + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("bad.json"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_TRUE(ReadFile(dir_.File("x.png")).empty()) << "no image is left behind";

  r = RunView("--screenshot '" + dir_.File("x.png") + "' '" + dir_.File("missing.json") + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("missing.json"), std::string::npos) << r.err;

  r = RunView("--screenshot '" + dir_.File("x.png") + "' --select no-such-rule '" + HotPs() + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("hot-ps"), std::string::npos) << "lists the findings there are: " << r.err;

  // No display at all.
  r = RunView("--screenshot '" + dir_.File("x.png") + "' '" + RealTrace() + "'", false,
              "env -u DISPLAY -u WAYLAND_DISPLAY");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("cannot open a window"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

}  // namespace
}  // namespace tfdiag::test
