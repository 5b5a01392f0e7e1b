// The critical path of a step drawn in tfdiag-view's timeline (issue 29 item 2): what the viewer
// drew (its --dump-view "critical_path") against AnalysisResult's step graph computed here from
// the same file, on the simulated hot-PS job (4 PS, 16 workers, ps:0 hot); the drawn pixels in
// its screenshot; the tooltip of a hovered segment; --path choosing the worker.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "analyzers/analysis.h"
#include "rules/rule_set.h"
#include "tests/viewer_util.h"

namespace tfdiag::test {
namespace {

// viewer/panels/panels.h colors::kPathWait.
constexpr uint8_t kWaitR = 0xFF, kWaitG = 0x8C, kWaitB = 0x1A;

bool IsWorker(JobKind k) {
  return k == JobKind::kWorker || k == JobKind::kChief || k == JobKind::kMaster;
}

class ViewerCriticalPathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why = ViewerSkipReason();
    if (!why.empty()) GTEST_SKIP() << why;
    Load(HotPsSample(dir_));
  }

  // Makes `path` the file the viewer opens and the graph is computed from.
  void Load(const std::string& path) {
    sample_ = path;
    capture_ = LoadOrDie({sample_});
    StatusOr<RuleSet> rules = DefaultRuleSet();
    ASSERT_TRUE(rules.ok()) << rules.status().message();
    result_ = Analyze(capture_, *rules);
    ASSERT_NE(result_.graph, nullptr);
  }

  // Runs the viewer with --dump-view and --screenshot on the sample; returns the parsed dump.
  rapidjson::Document Dump(const std::string& name, const std::string& args, Shot* shot) {
    return DumpView(dir_, name, "--size 1400x860 " + args + " '" + sample_ + "'", shot);
  }

  // The dump's critical path against the graph's median step of `task`: the same segments, in
  // order, with the same times, kinds, edges and producers.
  void ExpectPathMatchesGraph(const rapidjson::Value& p, uint32_t task) {
    const StepGraph& g = *result_.graph;
    const uint32_t step = g.MedianStep(task);
    ASSERT_NE(step, kNoIndex);
    const StepNode& n = g.steps()[step];
    const std::vector<PathSegment> seg = g.Segments(step);
    ASSERT_GE(seg.size(), 2u);
    auto us = [&](TimeNs t) { return static_cast<double>(t - capture_.start) / 1e3; };
    EXPECT_EQ(std::string(p["task"].GetString()), capture_.TaskLabelOf(task));
    EXPECT_EQ(p["step"].GetInt(), static_cast<int>(n.index) + 1);
    EXPECT_NEAR(p["start_us"].GetDouble(), us(n.start), 1e-3);
    EXPECT_NEAR(p["duration_us"].GetDouble(), (n.end - n.start) / 1e3, 1e-3);
    const auto& ds = p["segments"].GetArray();
    ASSERT_EQ(ds.Size(), seg.size());
    double sum_us = 0;
    for (size_t i = 0; i < seg.size(); ++i) {
      const rapidjson::Value& d = ds[i];
      SCOPED_TRACE("segment " + std::to_string(i) + ": " + d["label"].GetString());
      EXPECT_STREQ(d["kind"].GetString(), seg[i].wait ? "wait" : "compute");
      EXPECT_NEAR(d["start_us"].GetDouble(), us(seg[i].start), 1e-3);
      EXPECT_NEAR(d["duration_us"].GetDouble(), (seg[i].end - seg[i].start) / 1e3, 1e-3);
      sum_us += d["duration_us"].GetDouble();
      if (seg[i].edge == kNoIndex) {
        EXPECT_TRUE(d["edge"].IsNull());
        EXPECT_TRUE(d["producer"].IsNull());
        continue;
      }
      const GraphEdge& e = g.edges()[seg[i].edge];
      ASSERT_TRUE(d["edge"].IsObject());
      const std::string tensor(capture_.Str(e.tensor));
      EXPECT_EQ(d["edge"]["tensor"].GetString(), tensor);
      EXPECT_NEAR(d["edge"]["sent_us"].GetDouble(), us(e.sent), 1e-3);
      // A step's tail waits for the apply of the worker's own last push (issue 35): the edge
      // runs from the worker to the PS, so there is no producer to check on another task.
      if (e.ambiguous() || seg[i].step_tail) continue;
      const std::string from(capture_.TaskLabelOf(e.src_task));
      EXPECT_EQ(d["edge"]["from"].GetString(), from);
      // The op waited on: on the producing task, of the tensor's node, running when it was sent.
      ASSERT_TRUE(d["producer"].IsObject());
      EXPECT_EQ(d["producer"]["task"].GetString(), from);
      EXPECT_EQ(tensor.rfind(d["producer"]["node"].GetString(), 0), 0u)
          << d["producer"]["node"].GetString();
      EXPECT_LE(d["producer"]["start_us"].GetDouble(), us(e.sent) + 1e-3);
      EXPECT_GE(d["producer"]["start_us"].GetDouble() + d["producer"]["duration_us"].GetDouble(),
                us(e.sent) - 1.0 - 1e-3);
    }
    // The segments tile the step.
    EXPECT_NEAR(sum_us, (n.end - n.start) / 1e3, 1e-3 * seg.size());
  }

  // The index of the longest wait of the dump's path (with `edge`: of those a cross-task edge
  // ended).
  static size_t LongestWait(const rapidjson::Value& p, bool edge = false) {
    size_t best = 0;
    double best_us = -1;
    const auto& ds = p["segments"].GetArray();
    for (size_t i = 0; i < ds.Size(); ++i) {
      // With `edge`: a wait that a tensor from another task ended (not the step's tail).
      const bool tail = ds[i].HasMember("step_tail") && ds[i]["step_tail"].GetBool();
      if (std::string(ds[i]["kind"].GetString()) == "wait" &&
          (!edge || (ds[i]["edge"].IsObject() && !tail)) &&
          ds[i]["duration_us"].GetDouble() > best_us) {
        best = i, best_us = ds[i]["duration_us"].GetDouble();
      }
    }
    return best;
  }

  TempDir dir_;
  std::string sample_;
  Capture capture_;
  AnalysisResult result_;
};

TEST_F(ViewerCriticalPathTest, DefaultPathIsTheSlowestWorkersMedianStepAsTheGraphHasIt) {
  // The default worker: the longest median step (the text report's first critical path).
  const StepGraph& g = *result_.graph;
  uint32_t want = kNoIndex;
  TimeNs want_len = -1;
  for (uint32_t t = 0; t < capture_.tasks.size(); ++t) {
    if (!IsWorker(capture_.tasks[t].kind) || g.MedianStep(t) == kNoIndex) continue;
    const StepNode& n = g.steps()[g.MedianStep(t)];
    if (n.end - n.start > want_len) want = t, want_len = n.end - n.start;
  }
  ASSERT_NE(want, kNoIndex);
  Shot shot;
  rapidjson::Document v = Dump("default", "", &shot);
  ASSERT_TRUE(v.IsObject());
  ASSERT_TRUE(v.HasMember("critical_path") && v["critical_path"].IsObject())
      << "the viewer draws no critical path";
  ExpectPathMatchesGraph(v["critical_path"], want);
  // The hot PS is on the path: the longest wait is for a tensor of ps:0, named in its label.
  const rapidjson::Value& w = v["critical_path"]["segments"][LongestWait(v["critical_path"])];
  ASSERT_TRUE(w["edge"].IsObject());
  EXPECT_STREQ(w["edge"]["from"].GetString(), "ps:0");
  const std::string label = w["label"].GetString();
  EXPECT_EQ(label.rfind("waits ", 0), 0u) << label;
  EXPECT_NE(label.find(std::string(" for ") + w["edge"]["tensor"].GetString() + " from ps:0"),
            std::string::npos)
      << label;
  EXPECT_EQ(v["overflow"].Size(), 0u) << "the path's toolbar and summary fit at 1400x860";
}

TEST_F(ViewerCriticalPathTest, PathOptionZoomsToTheStepAndDrawsBandsAndArrows) {
  const uint32_t task = capture_.FindTask("worker:1");
  ASSERT_NE(task, kNoIndex);
  Shot shot;
  rapidjson::Document v = Dump("w1", "--path worker:1", &shot);
  ASSERT_TRUE(v.IsObject());
  ASSERT_TRUE(v.HasMember("critical_path") && v["critical_path"].IsObject());
  const rapidjson::Value& p = v["critical_path"];
  ExpectPathMatchesGraph(p, task);
  // Zoomed to the step: it fills most of the visible range.
  const double start = p["start_us"].GetDouble(), dur = p["duration_us"].GetDouble();
  EXPECT_LE(v["visible"]["start_us"].GetDouble(), start);
  EXPECT_GE(v["visible"]["end_us"].GetDouble(), start + dur);
  EXPECT_LT(v["visible"]["end_us"].GetDouble() - v["visible"]["start_us"].GetDouble(), 1.2 * dur);
  EXPECT_STREQ(v["focus_task"].GetString(), "worker:1");
  // Every segment is drawn over worker:1's rows, which are on screen below ps:0's.
  float w1_top = -1, ps0_top = -1, ps0_bottom = -1;
  for (const auto& r : v["rows"].GetArray()) {
    const std::string t = r["task"].GetString();
    const float y = static_cast<float>(r["y"].GetDouble());
    if (t == "worker:1" && w1_top < 0) w1_top = y;
    if (t == "ps:0") {
      if (ps0_top < 0) ps0_top = y;
      ps0_bottom = y + 15;
    }
  }
  ASSERT_GE(w1_top, 0) << "worker:1's rows are on screen";
  ASSERT_GE(ps0_top, 0) << "ps:0's rows are on screen";
  for (const auto& d : p["segments"].GetArray()) {
    ASSERT_TRUE(d["rect"].IsArray()) << d["label"].GetString();
    EXPECT_NEAR(d["rect"][1].GetDouble(), w1_top, 0.5);
  }
  // The longest wait for another task, for the hot PS's embedding: its arrow runs from ps:0's op
  // that it waited for down to the wait's end.
  const rapidjson::Value& w = p["segments"][LongestWait(p, true)];
  ASSERT_STREQ(w["edge"]["from"].GetString(), "ps:0") << w["label"].GetString();
  ASSERT_TRUE(w["arrow"].IsArray()) << w["label"].GetString();
  const double ax0 = w["arrow"][0].GetDouble(), ay0 = w["arrow"][1].GetDouble();
  const double ax1 = w["arrow"][2].GetDouble(), ay1 = w["arrow"][3].GetDouble();
  EXPECT_GE(ay0, ps0_top);
  EXPECT_LE(ay0, ps0_bottom);
  EXPECT_NEAR(ay1, w["rect"][1].GetDouble(), 0.5) << "the arrow ends on worker:1's band";
  EXPECT_NEAR(ax1, w["rect"][2].GetDouble(), 1.0) << "...at the wait's end";
  EXPECT_LT(ax0, ax1);
  // The wait bands are in the screenshot, in the timeline panel.
  ASSERT_EQ(shot.panels.count("timeline"), 1u);
  EXPECT_GT(CountColour(shot.image, shot.panels["timeline"], kWaitR, kWaitG, kWaitB), 300)
      << "orange outlines and arrows of the path";

  // Without a path, nothing of it is drawn.
  Shot none;
  rapidjson::Document n = Dump("none", "--path none", &none);
  ASSERT_TRUE(n.IsObject());
  EXPECT_TRUE(n["critical_path"].IsNull());
  EXPECT_EQ(CountColour(none.image, none.panels["timeline"], kWaitR, kWaitG, kWaitB), 0);
}

TEST_F(ViewerCriticalPathTest, HoveringAWaitNamesItAndABadPathIsAUsageError) {
  Shot shot;
  rapidjson::Document v = Dump("first", "--path worker:0", &shot);
  ASSERT_TRUE(v.IsObject() && v["critical_path"].IsObject());
  const rapidjson::Value& p = v["critical_path"];
  const size_t i = LongestWait(p);
  const rapidjson::Value& r = p["segments"][i]["rect"];
  ASSERT_TRUE(r.IsArray());
  // A point inside the band, low enough to miss the label plate at its top.
  const int x = static_cast<int>((r[0].GetDouble() + r[2].GetDouble()) / 2);
  const int y = static_cast<int>(r[3].GetDouble() - 4);
  Shot hover;
  rapidjson::Document h =
      Dump("hover",
           "--path worker:0 --input 'hover " + std::to_string(x) + "," + std::to_string(y) + "'",
           &hover);
  ASSERT_TRUE(h.IsObject() && h["critical_path"].IsObject());
  ASSERT_TRUE(h["critical_path"]["hovered"].IsInt()) << "hovered at " << x << "," << y;
  EXPECT_EQ(h["critical_path"]["hovered"].GetInt(), static_cast<int>(i));
  // The tooltip is drawn: the images differ around the mouse.
  EXPECT_GT(DiffPixels(shot.image, hover.image, hover.panels["timeline"]), 500);

  RunResult bad = RunView("--size 1400x860 --path ps:0 --dump-view '" + dir_.File("bad.json") +
                          "' '" + sample_ + "'");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--path ps:0"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("worker:0"), std::string::npos) << "names the workers: " << bad.err;
}

TEST_F(ViewerCriticalPathTest, RealTraceWorkerWaitsForThePsSplit) {
  // A real TF1 timeline of a PS job (1 PS, 2 workers; ../shared/traces): worker:0's step waits
  // on the tensor `split` that ps:0 sent.
  if (!SharedAvailable()) GTEST_SKIP() << "../shared/traces not found beside the repository";
  Load(SharedTrace("tfe_e0cd14f_timeline_client.json"));
  const uint32_t task = capture_.FindTask("worker:0");
  ASSERT_NE(task, kNoIndex);
  Shot shot;
  rapidjson::Document v = Dump("real", "--path worker:0", &shot);
  ASSERT_TRUE(v.IsObject());
  ASSERT_TRUE(v.HasMember("critical_path") && v["critical_path"].IsObject());
  const rapidjson::Value& p = v["critical_path"];
  ExpectPathMatchesGraph(p, task);
  const rapidjson::Value& w = p["segments"][LongestWait(p, true)];
  ASSERT_TRUE(w["edge"].IsObject());
  EXPECT_STREQ(w["edge"]["tensor"].GetString(), "split");
  EXPECT_STREQ(w["edge"]["from"].GetString(), "ps:0");
  ASSERT_TRUE(w["producer"].IsObject());
  EXPECT_STREQ(w["producer"]["node"].GetString(), "split");
  EXPECT_TRUE(w["arrow"].IsArray());
  EXPECT_EQ(v["overflow"].Size(), 0u);
}

}  // namespace
}  // namespace tfdiag::test
