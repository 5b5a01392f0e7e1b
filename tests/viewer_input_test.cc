// tfdiag-view interaction (issue 8): mouse wheel, drag, keys and hover played by --input through
// the GLFW backend's callbacks, checked in the --dump-view state (visible range in us, hovered
// op) and in the screenshots. Expected values come from the first dump (the fitted view) and the
// capture itself, never from constants of the layout.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "tests/viewer_util.h"

namespace tfdiag::test {
namespace {

// The view state and screenshot of one run.
struct View {
  RunResult run;
  rapidjson::Document dump;
  Image image;
  Rect timeline;
  double start = 0, end = 0;  // visible range, us from the capture's start
  double x = 0, w = 0;        // the track area, pixels
  double Span() const { return end - start; }
  // The time (us) under pixel column `px`.
  double TimeAt(double px) const { return start + (px - x) / w * Span(); }
  // The pixel column of time `us`.
  double XAt(double us) const { return x + (us - start) / Span() * w; }
};

class ViewerInputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why = ViewerSkipReason();
    if (!why.empty()) GTEST_SKIP() << why;
    hot_ = HotPsSample(dir_);
  }

  // Runs the viewer on the hot-PS sample with `script` and reads its state and screenshot.
  View Run(const std::string& script, const std::string& name) {
    View v;
    std::string json = dir_.File(name + ".json"), png = dir_.File(name + ".png");
    v.run = RunView("--input '" + script + "' --dump-view '" + json + "' --screenshot '" + png +
                    "' --layout '" + png + ".layout' '" + hot_ + "'");
    EXPECT_EQ(v.run.exit_code, 0) << v.run.err;
    v.dump = ParseJson(ReadFile(json));
    v.image = DecodePng(png);
    v.timeline = PanelRects(ReadFile(png + ".layout"))["timeline"];
    if (!v.dump.IsObject()) {
      ADD_FAILURE() << "no view dump: " << v.run.out << v.run.err;
      return v;
    }
    v.start = v.dump["visible"]["start_us"].GetDouble();
    v.end = v.dump["visible"]["end_us"].GetDouble();
    v.x = v.dump["track"]["x"].GetDouble();
    v.w = v.dump["track"]["w"].GetDouble();
    return v;
  }

  // The y (pixels) of the middle of the first drawn row of `task`, or -1.
  static double RowMid(const View& v, const std::string& task) {
    for (const auto& r : v.dump["rows"].GetArray()) {
      if (task == r["task"].GetString()) return r["y"].GetDouble() + 7;
    }
    return -1;
  }

  TempDir dir_;
  std::string hot_;
};

std::string Point(double x, double y) { return std::to_string(x) + "," + std::to_string(y); }

TEST_F(ViewerInputTest, WheelZoomsAroundTheCursor) {
  View fit = Run("", "fit");
  ASSERT_TRUE(fit.dump.IsObject());
  ASSERT_GT(fit.w, 100);
  const double y = RowMid(fit, "worker:0");
  ASSERT_GT(y, 0) << "worker:0 is drawn";
  const double px = fit.x + 0.3 * fit.w;  // left of the centre: zooming must keep it in place
  View in = Run("wheel 3 @" + Point(px, y), "in");
  ASSERT_TRUE(in.dump.IsObject());
  // Three notches in: narrower (0.8^3 of the span), and the time under the cursor stays there.
  EXPECT_NEAR(in.Span(), fit.Span() * 0.512, fit.Span() * 0.01);
  EXPECT_NEAR(in.TimeAt(px), fit.TimeAt(px), fit.Span() * 0.002);
  EXPECT_GT(in.start, fit.start);
  EXPECT_LT(in.end, fit.end);
  EXPECT_GT(DiffPixels(fit.image, in.image, fit.timeline), 5000) << "the zoomed timeline";

  View out = Run("wheel 3 @" + Point(px, y) + "; wheel -1 @" + Point(px, y), "out");
  ASSERT_TRUE(out.dump.IsObject());
  EXPECT_GT(out.Span(), in.Span() * 1.2) << "wheel back zooms out";
}

TEST_F(ViewerInputTest, DragAndKeysPanTheView) {
  View fit = Run("", "fit");
  ASSERT_TRUE(fit.dump.IsObject());
  const double y = RowMid(fit, "worker:1");
  ASSERT_GT(y, 0);
  const double x0 = fit.x + 0.6 * fit.w, x1 = x0 - 300;
  // Dragging the content 300 px to the left shows later times: +300 px worth of time.
  View drag = Run("drag " + Point(x0, y) + " -> " + Point(x1, y), "drag");
  ASSERT_TRUE(drag.dump.IsObject());
  const double shift = 300 / fit.w * fit.Span();
  EXPECT_NEAR(drag.start - fit.start, shift, 0.02 * shift);
  EXPECT_NEAR(drag.Span(), fit.Span(), 1e-6 * fit.Span()) << "panning keeps the zoom";
  EXPECT_GT(DiffPixels(fit.image, drag.image, fit.timeline), 5000);

  // Keys: W zooms in at the centre, Right/D pan later, Left/A earlier, by 15% of the span.
  View w = Run("key W", "w");
  EXPECT_NEAR(w.Span(), 0.7 * fit.Span(), 1e-3 * fit.Span());
  EXPECT_NEAR(w.start + w.end, fit.start + fit.end, 1e-3 * fit.Span()) << "same centre";
  View right = Run("key Right", "right");
  EXPECT_NEAR(right.start - fit.start, 0.15 * fit.Span(), 1e-3 * fit.Span());
  View left = Run("key W; key A; key Left", "left");
  EXPECT_NEAR(left.start - w.start, -0.3 * w.Span(), 1e-3 * w.Span());
  EXPECT_GT(DiffPixels(fit.image, right.image, fit.timeline), 5000);
  // F fits the whole run again (the script read from a file this time).
  const std::string script = dir_.File("back.txt");
  WriteFile(script, "key W\nkey D;\nkey F\n");
  View back = Run("@" + script, "back");
  EXPECT_NEAR(back.start, fit.start, 1e-6 * fit.Span());
  EXPECT_NEAR(back.end, fit.end, 1e-6 * fit.Span());
}

TEST_F(ViewerInputTest, HoverReportsTheOpUnderTheMouse) {
  View fit = Run("", "fit");
  ASSERT_TRUE(fit.dump.IsObject());
  // The widest dense_1/MatMul of worker:0 in the capture (a known op of the hot-PS model, which
  // has inputs), hovered at its middle.
  Capture c = LoadOrDie({hot_});
  const uint32_t task = c.FindTask("worker:0");
  ASSERT_NE(task, kNoIndex);
  const OpRow* op = nullptr;
  const std::vector<OpRow> rows = c.ops.Rows();
  for (const OpRow& o : rows) {
    if (c.devices[o.device].task == task && c.Str(c.OpName(o)) == "dense_1/MatMul" &&
        (op == nullptr || o.dur() > op->dur())) {
      op = &o;
    }
  }
  ASSERT_NE(op, nullptr) << "the hot-ps sample has worker:0 dense_1/MatMul";
  ASSERT_GT(c.Node(*op).inputs_count, 0);
  const double mid_us = static_cast<double>(op->start - c.start + op->dur() / 2) / 1e3;
  const DeviceRow& d = c.devices[op->device];
  double y = -1;
  for (const auto& r : fit.dump["rows"].GetArray()) {
    std::string device = std::string(c.Str(d.type)) + ":" + std::to_string(d.index);
    if (std::string(r["task"].GetString()) == "worker:0" && r["device"].GetString() == device &&
        r["lane"].GetInt() == op->lane) {
      y = r["y"].GetDouble() + 7;
    }
  }
  ASSERT_GT(y, 0) << "the op's row is drawn";
  View hover = Run("hover " + Point(std::round(fit.XAt(mid_us)), y), "hover");
  ASSERT_TRUE(hover.dump.IsObject());
  const auto& h = hover.dump["hovered"];
  ASSERT_TRUE(h.IsObject()) << ReadFile(dir_.File("hover.json"));
  EXPECT_STREQ(h["task"].GetString(), "worker:0");
  EXPECT_EQ(h["node"].GetString(), std::string(c.Str(c.OpName(*op))));
  EXPECT_EQ(h["op"].GetString(), std::string(c.Str(c.OpType(*op))));
  EXPECT_NEAR(h["duration_us"].GetDouble(), static_cast<double>(op->dur()) / 1e3, 1e-3);
  EXPECT_NEAR(h["start_us"].GetDouble(), static_cast<double>(op->start - c.start) / 1e3, 1e-3);
  ASSERT_EQ(h["inputs"].Size(), c.Node(*op).inputs_count);
  for (uint32_t i = 0; i < c.Node(*op).inputs_count; ++i) {
    EXPECT_EQ(h["inputs"][i].GetString(),
              std::string(c.Str(c.inputs[c.Node(*op).inputs_begin + i])));
  }
  EXPECT_TRUE(fit.dump["hovered"].IsNull()) << "no mouse, no hovered op";
  // The tooltip is drawn.
  EXPECT_GT(DiffPixels(fit.image, hover.image, fit.timeline), 2000);
}

// A timeline on standard input ("-") is copied to a temporary file first: the viewer shows the
// same ops as for the file itself and names the input "-".
TEST_F(ViewerInputTest, StandardInputShowsTheFileAndItsGivenName) {
  const std::string json = dir_.File("stdin.json");
  const View direct = Run("wait 1", "direct");
  const RunResult r = RunUnderXvfb("sh -c \"cat '" + hot_ + "' | " + ViewBinary() +
                                   " --dump-view '" + json + "' -\"");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  rapidjson::Document d = ParseJson(ReadFile(json));
  ASSERT_TRUE(d.IsObject()) << r.out << r.err;
  ASSERT_EQ(d["files"].Size(), 1u);
  EXPECT_EQ(d["files"][0].GetString(), std::string("-"));
  EXPECT_EQ(d["ops"].GetInt64(), direct.dump["ops"].GetInt64());
  EXPECT_GT(d["ops"].GetInt64(), 0);
}

TEST_F(ViewerInputTest, BadScriptExitsTwoWithOneLine) {
  RunResult r = RunView("--input 'wheel 3 @800,400; jump 2' --dump-view x.json '" + hot_ + "'",
                        /*xvfb=*/false);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("'jump 2'"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  r = RunView("--input 'drag 1,2 3,4' --dump-view x.json '" + hot_ + "'", /*xvfb=*/false);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("X0,Y0 -> X1,Y1"), std::string::npos) << r.err;
  r = RunView("--input @" + dir_.File("missing.txt") + " --dump-view x.json '" + hot_ + "'",
              /*xvfb=*/false);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("missing.txt: cannot read"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace tfdiag::test
