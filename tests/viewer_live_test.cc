// tfdiag-view on a real probe bundle (issue 8): a psload hot-shard job recorded by `tfdiag attach`
// with eBPF (tests/bpf_job.h), opened in the viewer. The PS load panel must mark the hot PS from
// measured bytes and draw the worker x PS traffic heat map with the hot PS's column hottest; the
// CPU tab must draw its series (threads, runnable, CPUs used, the CPU limit, switch rates).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "tests/bpf_job.h"
#include "tests/viewer_util.h"

namespace tfdiag::test {
namespace {

// The most common colour of the pixels in `r` (text in a cell does not change it).
uint32_t ModeColour(const Image& img, const Rect& r) {
  std::map<uint32_t, int> n;
  uint32_t best = 0;
  for (int y = r.y; y < r.y + r.h && y < img.h; ++y) {
    for (int x = r.x; x < r.x + r.w && x < img.w; ++x) {
      const uint8_t* p = img.At(x, y);
      uint32_t c = p[0] << 16 | p[1] << 8 | p[2];
      if (++n[c] > n[best]) best = c;
    }
  }
  return best;
}

TEST(ViewerLive, ProbeBundleShowsTheHotPsHeatMapAndCpuSeries) {
  std::string why = ViewerSkipReason();
  if (why.empty()) why = BpfSkipReason();
  if (!why.empty()) GTEST_SKIP() << why;
  TempDir dir;
  HotJob job;
  ASSERT_TRUE(job.Start(dir, &why)) << why;
  job.WaitWorkers();
  ASSERT_EQ(job.WaitAttach(false), 0) << ReadFile(job.attach_log);
  rapidjson::Document b = ParseJson(ReadFile(job.bundle));
  ASSERT_TRUE(b.IsObject());
  ASSERT_NE(std::string(b["meta"]["probes"].GetString()).find("traffic"), std::string::npos)
      << "the eBPF traffic probe did not run: " << ReadFile(job.attach_log);

  const std::string png = dir.File("live.png"), json = dir.File("live.json");
  RunResult r = RunView("--dump-view '" + json + "' --screenshot '" + png + "' --layout '" + png +
                        ".layout' '" + job.bundle + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Image img = DecodePng(png);
  ASSERT_EQ(img.w, 1600);
  std::map<std::string, Rect> panels = PanelRects(ReadFile(png + ".layout"));
  rapidjson::Document v = ParseJson(ReadFile(json));
  ASSERT_TRUE(v.IsObject());
  EXPECT_STREQ(v["tab"].GetString(), "cpu") << "a bundle without a timeline opens on its CPU tab";

  // PS load: the hot PS's bar (measured bytes) in the hot colour.
  EXPECT_GT(CountColour(img, panels["ps_load"], kHotR, kHotG, kHotB), 2000);
  // The heat map: measured bytes, and in every worker's row the hot PS (ps:0: --placement=hot
  // puts the hot shard there) is hotter than the other; the hottest colour of the ramp
  // (0xF8D040) is in ps:0's column only.
  const auto& m = v["matrix"];
  ASSERT_TRUE(m.IsObject()) << ReadFile(json);
  EXPECT_TRUE(m["measured"].GetBool());
  ASSERT_EQ(m["ps"].Size(), 2u);
  ASSERT_EQ(m["workers"].Size(), static_cast<size_t>(job.workers));
  ASSERT_STREQ(m["ps"][0].GetString(), "ps:0");
  const double x = m["x"].GetDouble(), y = m["y"].GetDouble();
  const double cw = m["cell_w"].GetDouble(), ch = m["cell_h"].GetDouble();
  ASSERT_GE(cw, 8);
  ASSERT_GE(ch, 4);
  int hottest_in_ps0 = 0, hottest_elsewhere = 0;
  for (int i = 0; i < job.workers; ++i) {
    uint32_t cell[2];
    for (int j = 0; j < 2; ++j) {
      Rect c{static_cast<int>(x + j * cw) + 1, static_cast<int>(y + i * ch) + 1,
             static_cast<int>(cw) - 3, static_cast<int>(ch) - 3};
      cell[j] = ModeColour(img, c);
      if (cell[j] == 0xF8D040) ++(j == 0 ? hottest_in_ps0 : hottest_elsewhere);
    }
    EXPECT_GT(cell[0] >> 16, cell[1] >> 16)
        << m["workers"][i].GetString() << " cells " << std::hex << cell[0] << " " << cell[1];
  }
  EXPECT_GE(hottest_in_ps0, 1);
  EXPECT_EQ(hottest_elsewhere, 0);

  // CPU tab: each series drawn below the tab bar and the legend (whose text uses the same
  // colours): threads, runnable, CPUs used, the CPU limit, involuntary switches.
  Rect charts = panels["details"];
  charts.y += 48;
  charts.h -= 48;
  const std::map<std::string, uint32_t> series = {{"threads", 0xB0B0B8},
                                                  {"runnable", 0xF5A623},
                                                  {"CPUs used", 0x4C8BF5},
                                                  {"CPU limit", 0xFF7070},
                                                  {"involuntary switches", 0x5BC0BE}};
  for (const auto& [name, c] : series) {
    EXPECT_GT(CountColour(img, charts, c >> 16, (c >> 8) & 0xFF, c & 0xFF), 200) << name;
  }
}

}  // namespace
}  // namespace tfdiag::test
