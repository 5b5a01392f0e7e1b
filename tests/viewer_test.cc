// tfdiag-view end to end (issue 8): screenshots rendered under xvfb-run with Mesa, decoded with
// stb_image (libstb-dev), and checked for content: not blank, the hot PS's bar in the exact hot
// colour, selecting a finding changes the focused region, different inputs give different
// images. Errors exit 2 with one line. Skipped when xvfb-run or the viewer is not available.
#include <gtest/gtest.h>
#include <sys/wait.h>

#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_STATIC
#include <stb/stb_image.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/bundle.h"
#include "core/capture_builder.h"
#include "samples/simulator.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

// viewer/panels/panels.h colors::kHot.
constexpr uint8_t kHotR = 0xFF, kHotG = 0x30, kHotB = 0x30;

struct Rect {
  int x = 0, y = 0, w = 0, h = 0;
};

struct Image {
  int w = 0, h = 0;
  std::vector<uint8_t> rgb;
  const uint8_t* At(int x, int y) const { return &rgb[(static_cast<size_t>(y) * w + x) * 3]; }
};

struct Shot {
  RunResult run;
  Image image;
  std::map<std::string, Rect> panels;  // from the "panel NAME X Y W H" lines
};

bool HaveXvfb() { return std::system("command -v xvfb-run >/dev/null 2>&1") == 0; }

#ifdef TFDIAG_VIEW_BINARY
constexpr const char* kViewBinary = TFDIAG_VIEW_BINARY;
#else
constexpr const char* kViewBinary = nullptr;
#endif

// Runs `env` tfdiag-view `args`, under xvfb-run when `xvfb` is set. xvfb-run -a can race with a
// concurrent xvfb-run for the same display number; such a failure is retried.
RunResult RunView(const std::string& args, bool xvfb = true, const std::string& env = "") {
  TempDir dir;
  std::string prefix = xvfb ? "xvfb-run -a -s '-screen 0 1600x1000x24' " : "";
  std::string cmd = env + " " + prefix + kViewBinary + " " + args + " >'" + dir.File("out") +
                    "' 2>'" + dir.File("err") + "' </dev/null";
  RunResult r;
  for (int attempt = 0; attempt < 3; ++attempt) {
    int rc = std::system(cmd.c_str());
    r.exit_code = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
    r.out = ReadFile(dir.File("out"));
    r.err = ReadFile(dir.File("err"));
    if (r.err.find("Xvfb failed to start") == std::string::npos) break;
  }
  return r;
}

Image DecodePng(const std::string& path) {
  Image img;
  int n = 0;
  uint8_t* data = stbi_load(path.c_str(), &img.w, &img.h, &n, 3);
  if (data == nullptr) return img;
  img.rgb.assign(data, data + static_cast<size_t>(img.w) * img.h * 3);
  stbi_image_free(data);
  return img;
}

Shot Screenshot(const TempDir& dir, const std::string& name, const std::string& args) {
  Shot s;
  std::string png = dir.File(name);
  s.run = RunView("--screenshot '" + png + "' " + args);
  std::istringstream lines(s.run.out);
  std::string word, panel;
  for (std::string line; std::getline(lines, line);) {
    std::istringstream ls(line);
    Rect r;
    if (ls >> word >> panel >> r.x >> r.y >> r.w >> r.h && word == "panel") s.panels[panel] = r;
  }
  s.image = DecodePng(png);
  return s;
}

int DistinctColours(const Image& img) {
  std::set<uint32_t> colours;
  for (size_t i = 0; i + 2 < img.rgb.size(); i += 3) {
    colours.insert(img.rgb[i] << 16 | img.rgb[i + 1] << 8 | img.rgb[i + 2]);
  }
  return static_cast<int>(colours.size());
}

double MostCommonShare(const Image& img) {
  std::map<uint32_t, int64_t> count;
  int64_t best = 0;
  for (size_t i = 0; i + 2 < img.rgb.size(); i += 3) {
    best = std::max(best, ++count[img.rgb[i] << 16 | img.rgb[i + 1] << 8 | img.rgb[i + 2]]);
  }
  return img.rgb.empty() ? 1.0 : static_cast<double>(best) / (img.rgb.size() / 3);
}

int64_t CountColour(const Image& img, const Rect& r, uint8_t cr, uint8_t cg, uint8_t cb) {
  int64_t n = 0;
  for (int y = r.y; y < r.y + r.h && y < img.h; ++y) {
    for (int x = r.x; x < r.x + r.w && x < img.w; ++x) {
      const uint8_t* p = img.At(x, y);
      n += p[0] == cr && p[1] == cg && p[2] == cb;
    }
  }
  return n;
}

// Pixels that differ between two images of the same size, within `r`.
int64_t DiffPixels(const Image& a, const Image& b, const Rect& r) {
  int64_t n = 0;
  for (int y = r.y; y < r.y + r.h && y < a.h; ++y) {
    for (int x = r.x; x < r.x + r.w && x < a.w; ++x) {
      const uint8_t *p = a.At(x, y), *q = b.At(x, y);
      n += p[0] != q[0] || p[1] != q[1] || p[2] != q[2];
    }
  }
  return n;
}

class ViewerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (kViewBinary == nullptr) GTEST_SKIP() << "tfdiag-view is not built (no GLFW/OpenGL/imgui)";
    if (!HaveXvfb()) GTEST_SKIP() << "xvfb-run is not installed (apt-get install xvfb xauth)";
  }

  // The simulated hot-PS job: 4 PS, 16 workers, 3 steps.
  std::string HotPs() {
    sim::ScenarioParams p;
    p.scenario = "hot-ps";
    p.steps = 3;
    std::string path = dir_.File("hot-ps.json");
    EXPECT_TRUE(sim::WriteScenario(p, path).ok());
    return path;
  }
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
  std::set<uint32_t> colours;
  for (int y = t.y; y < t.y + t.h; ++y) {
    for (int x = t.x; x < t.x + t.w; ++x)
      colours.insert(img.At(x, y)[0] << 16 | img.At(x, y)[1] << 8 | img.At(x, y)[2]);
  }
  EXPECT_GT(colours.size(), 16u);
  // No hot PS in this trace: no pixel of the hot colour in the PS load panel.
  EXPECT_EQ(CountColour(img, s.panels["ps_load"], kHotR, kHotG, kHotB), 0);
}

TEST_F(ViewerTest, HotPsBarIsDrawnInTheHotColour) {
  Shot s = Screenshot(dir_, "hot.png", "--size 1280x800 '" + HotPs() + "'");
  ASSERT_EQ(s.run.exit_code, 0) << s.run.err;
  ASSERT_EQ(s.image.w, 1280);
  ASSERT_EQ(s.image.h, 800);
  ASSERT_EQ(s.panels.count("ps_load"), 1u) << s.run.out;
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
  Shot hover = Screenshot(dir_, "hover.png", "--hover 900,364 '" + hot + "'");
  ASSERT_EQ(hover.run.exit_code, 0) << hover.run.err;
  EXPECT_NE(hover.run.out.find("hover worker:0 dense_1/MatMul (MatMul)"), std::string::npos)
      << hover.run.out;
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
