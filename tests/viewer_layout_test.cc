// tfdiag-view layout at the 1400x860 window of issue 14 item 16, from the viewer's --dump-view
// state and its screenshot: no panel's text or widgets run past its right edge (the PS load
// headers, variable lines and the CPU tab's per-process figures did), and the worker x PS heat
// map of a timeline without tensor sizes shows each PS's busy time, so the hot PS's column is the
// hottest (transfer counts made the hot PS the coldest: it serves as many tensors as the others).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "core/bundle.h"
#include "core/capture_builder.h"
#include "tests/viewer_util.h"

namespace tfdiag::test {
namespace {

class ViewerLayoutTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why = ViewerSkipReason();
    if (!why.empty()) GTEST_SKIP() << why;
  }

  // Runs the viewer on `args` with --dump-view and --screenshot; returns the parsed dump.
  rapidjson::Document Dump(const std::string& name, const std::string& args, Shot* shot) {
    return DumpView(dir_, name, args, shot);
  }

  static std::string Overflow(const rapidjson::Value& v) {
    std::string out;
    for (const auto& o : v["overflow"].GetArray()) {
      out += std::string(o["window"].GetString()) + " by " + std::to_string(o["px"].GetDouble()) +
             " px; ";
    }
    return out;
  }

  TempDir dir_;
};

const std::string kSample = std::string(TFDIAG_SOURCE_DIR) + "/samples/hot-ps.tf1.json.gz";

TEST_F(ViewerLayoutTest, OverflowIsDetectedWhereTheWindowIsTooNarrow) {
  // The control: at 700 px the status bar's help text cannot fit, and the dump says so.
  Shot s;
  rapidjson::Document v = Dump("narrow", std::string("--size 700x600 '") + kSample + "'", &s);
  ASSERT_TRUE(v.IsObject());
  ASSERT_TRUE(v["overflow"].IsArray());
  EXPECT_NE(Overflow(v).find("##status"), std::string::npos) << Overflow(v);
}

TEST_F(ViewerLayoutTest, HotPsSampleFitsAt1400x860AndItsHeatMapShowsTheHotPs) {
  Shot s;
  rapidjson::Document v =
      Dump("hot", std::string("--size 1400x860 --select hot-ps '") + kSample + "'", &s);
  ASSERT_TRUE(v.IsObject());
  ASSERT_EQ(s.image.w, 1400);
  ASSERT_EQ(s.image.h, 860);
  EXPECT_EQ(v["overflow"].Size(), 0u) << Overflow(v);

  // The heat map: the sample has no tensor sizes, so the cells show each PS's busy time split
  // by its transfers, and in every worker's row ps:0 (the hot PS) is the largest.
  const auto& m = v["matrix"];
  ASSERT_TRUE(m.IsObject());
  EXPECT_FALSE(m["measured"].GetBool());
  EXPECT_STREQ(m["value"].GetString(), "busy");
  const size_t np = m["ps"].Size(), nw = m["workers"].Size();
  ASSERT_EQ(np, 4u);
  ASSERT_EQ(nw, 16u);
  ASSERT_EQ(m["values"].Size(), np * nw);
  ASSERT_STREQ(m["ps"][0].GetString(), "ps:0");
  for (size_t i = 0; i < nw; ++i) {
    for (size_t j = 1; j < np; ++j) {
      EXPECT_GT(m["values"][i * np].GetDouble(), 2 * m["values"][i * np + j].GetDouble())
          << m["workers"][i].GetString() << " " << m["ps"][j].GetString();
    }
  }
  // And on screen, in view: ps:0's column is drawn in the hot end of the ramp (yellow, towards
  // 0xF8D040), the others in its cold end (blue-grey, from 0x222A50).
  ASSERT_LE(m["y"].GetDouble() + m["cell_h"].GetDouble() * nw,
            s.panels["ps_load"].y + s.panels["ps_load"].h)
      << "the heat map is not in view";
  const double x = m["x"].GetDouble(), y = m["y"].GetDouble();
  const double cw = m["cell_w"].GetDouble(), ch = m["cell_h"].GetDouble();
  for (size_t j = 0; j < np; ++j) {
    Rect col{static_cast<int>(x + j * cw) + 1, static_cast<int>(y) + 1, static_cast<int>(cw) - 3,
             static_cast<int>(ch * nw) - 3};
    int64_t yellow = 0;
    for (int py = col.y; py < col.y + col.h; ++py) {
      for (int px = col.x; px < col.x + col.w; ++px) {
        const uint8_t* p = s.image.At(px, py);
        // Warm (yellow to olive: the hot end of the scale, dimmer for workers that sent ps:0
        // fewer transfers) against the cold blues of the idle PS.
        yellow += p[0] > 0x70 && p[2] < 0x70 && p[0] > p[2] + 0x30;
      }
    }
    if (j == 0) {
      EXPECT_GT(yellow, col.w * col.h / 2) << "ps:0's column is not the hottest";
    } else {
      EXPECT_EQ(yellow, 0) << m["ps"][j].GetString();
    }
  }
}

TEST_F(ViewerLayoutTest, CpuTabOfABundleFitsAt1400x860) {
  // A bundle of four long-named processes without a CPU quota (the widest per-process line).
  CaptureBuilder b;
  b.meta().interval_ms = 1000;  // samples 1 s apart, as attach writes them
  for (int k = 0; k < 4; ++k) {
    uint32_t task = b.AddTask(k < 2 ? "ps" : "worker", 0, k % 2);
    ProcessRow p;
    p.task = task;
    p.pid = 4100000 + k;
    p.pod = b.Intern("recommendation-model-training-" + std::string(k < 2 ? "ps-" : "worker-") +
                     std::to_string(k % 2));
    p.cpuset = b.Intern("0-63");
    p.cpu_limit = 0;
    p.host_cpus = 64;
    uint32_t proc = b.AddProcess(p);
    for (int i = 0; i < 20; ++i) {
      ProcessSampleRow s;
      s.ts = 1'000'000'000LL * (i + 1);
      s.process = proc;
      s.threads = 182;
      s.runnable = 20 + (i * 7 + k) % 30;
      s.cpu_ns = 23'000'000'000LL * i;
      s.voluntary = 123456 * i;
      s.involuntary = 45678 * i;
      b.AddProcessSample(s);
    }
  }
  Capture c = b.Finish();
  std::string path = dir_.File("cpu.tfdiag.json");
  ASSERT_TRUE(WriteBundle(c, path).ok());
  Shot s;
  rapidjson::Document v = Dump("cpu", "--size 1400x860 '" + path + "'", &s);
  ASSERT_TRUE(v.IsObject());
  EXPECT_STREQ(v["tab"].GetString(), "cpu");
  EXPECT_EQ(v["overflow"].Size(), 0u) << Overflow(v);
}

}  // namespace
}  // namespace tfdiag::test
