// Issue 46 item 7: the viewer's findings panel shows what the text report leads with (the `Fix
// first` line, each finding's impact and its waits, the same words), and the PS-load panel
// paints the hot PS in its finding's severity: a PS whose hot-ps is LOW (far from every limit)
// is no red HOT. Headless: the viewer's --dump-view state under xvfb.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "core/bundle.h"
#include "core/capture_builder.h"
#include "tests/viewer_util.h"

namespace tfdiag::test {
namespace {

class ViewerFindingsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why = ViewerSkipReason();
    if (!why.empty()) GTEST_SKIP() << why;
  }
  rapidjson::Document Dump(const std::string& name, const std::string& args, Shot* shot) {
    return DumpView(dir_, name, "--size 1400x860 " + args, shot);
  }
  static bool HasFigure(const rapidjson::Value& v, const std::string& text) {
    for (const auto& f : v["figures"].GetArray()) {
      if (std::string(f.GetString()).find(text) != std::string::npos) return true;
    }
    return false;
  }
  TempDir dir_;
};

// The text report's lines that start with `prefix` (trimmed), in order.
std::vector<std::string> ReportLines(const std::string& report, const std::string& prefix) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < report.size()) {
    size_t nl = report.find('\n', at);
    if (nl == std::string::npos) nl = report.size();
    std::string line = report.substr(at, nl - at);
    at = nl + 1;
    line.erase(0, line.find_first_not_of(' '));
    if (line.rfind(prefix, 0) == 0) out.push_back(line);
  }
  return out;
}

TEST_F(ViewerFindingsTest, FixFirstImpactAndWaitsAreTheTextReports) {
  const std::string sample = std::string(TFDIAG_SOURCE_DIR) + "/samples/hot-ps.tf1.json.gz";
  RunResult text = RunTfdiag("analyze --width 2000 '" + sample + "'");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  Shot shot;
  rapidjson::Document v = Dump("hot", "--select hot-ps '" + sample + "'", &shot);
  ASSERT_TRUE(v.IsObject());
  // Fix first: the same line, or none on both.
  const std::vector<std::string> fix = ReportLines(text.out, "Fix first:");
  if (fix.empty()) {
    EXPECT_TRUE(v["fix_first"].IsNull());
  } else {
    ASSERT_TRUE(v["fix_first"].IsString()) << "the viewer leaves out the report's " << fix[0];
    EXPECT_EQ(v["fix_first"].GetString(), fix[0]);
  }
  // The selected finding's impact and waits, as the report words them.
  const std::vector<std::string> impact = ReportLines(text.out, "impact:");
  ASSERT_FALSE(impact.empty()) << text.out;
  EXPECT_TRUE(HasFigure(v, impact[0])) << impact[0];
  const size_t waits_at = text.out.find("    waits:\n");
  if (waits_at != std::string::npos) {
    const size_t from = waits_at + 11, to = text.out.find('\n', from);
    std::string first = text.out.substr(from, to - from);
    first.erase(0, first.find("- ") + 2);
    EXPECT_TRUE(HasFigure(v, "wait: " + first)) << first;
  }
}

// A PS far from every limit (0.01 of 2 CPUs): hot-ps LOW, so its bar is no red HOT.
TEST_F(ViewerFindingsTest, APsWhoseHotPsIsLowIsNotPaintedHot) {
  constexpr TimeNs kS = 1000000000;
  CaptureBuilder b;
  b.meta().probes = "prometheus";
  b.meta().window_start = kS;
  b.meta().window_end = 11 * kS;
  b.meta().interval_ms = 1000;
  b.meta().tool_version = "test";
  b.meta().host = "node-0";
  struct T {
    const char* job;
    int index;
    double cpus, mb_s;
  };
  for (const T& t : {T{"ps", 0, 0.01, 2.5}, T{"ps", 1, 0.002, 0.05}, T{"worker", 0, 0.3, 1.2},
                     T{"worker", 1, 0.3, 1.2}}) {
    ProcessRow p;
    p.task = b.AddTask(t.job, 0, t.index);
    p.host_cpus = 2;
    p.node = b.Intern(fmt::format("node-{}", t.index));
    const uint32_t proc = b.AddProcess(p);
    for (int i = 0; i <= 10; ++i) {
      ProcessSampleRow s;
      s.ts = kS * (i + 1);
      s.process = proc;
      s.threads = 8;
      s.runnable = -1;
      s.cpu_ns = static_cast<int64_t>(t.cpus * i * kS);
      b.AddProcessSample(s);
      TrafficRow r;
      r.ts = s.ts;
      r.process = proc;
      r.bytes_received = r.bytes_sent = static_cast<int64_t>(t.mb_s * 1e6 * i);
      b.AddTraffic(r);
    }
  }
  const std::string bundle = dir_.File("low.tfdiag.json");
  ASSERT_TRUE(WriteBundle(b.Finish(), bundle).ok());
  RunResult text = RunTfdiag("analyze '" + bundle + "'");
  ASSERT_NE(text.out.find("[LOW] hot-ps ps:0"), std::string::npos) << text.out << text.err;
  Shot shot;
  rapidjson::Document v = Dump("low", "'" + bundle + "'", &shot);
  ASSERT_TRUE(v.IsObject());
  EXPECT_TRUE(HasFigure(v, "bar ps:0: ")) << "the PS-load panel's bar of ps:0";
  EXPECT_TRUE(HasFigure(v, "hot-ps LOW"));
  EXPECT_FALSE(HasFigure(v, "HOT"));
  EXPECT_EQ(CountColour(shot.image, shot.panels["ps_load"], kHotR, kHotG, kHotB), 0)
      << "no pixel of the hot red";
}

}  // namespace
}  // namespace tfdiag::test
