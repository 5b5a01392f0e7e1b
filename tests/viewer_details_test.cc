// tfdiag-view details a new user tripped over (issue 39 item 9), one test each: a bundle without
// the eBPF traffic probe promises no measured bytes; a long span reads as the text report writes
// it; a log directory given as "logs/" is named; a manifest's objects name their file once and
// fit the panel; the unzoomed critical path is not drawn as stray orange slivers but hinted; the
// PS load panel lists no "0%" variables; stdout carries no layout lines; nothing to judge is
// refused in one line as analyze refuses it; "No rule fired" counts the rules that could judge.
// Checked on --dump-view (figures, status, critical_path) and on the screenshot's pixels.
// Skipped without xvfb-run.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>

#include "core/bundle.h"
#include "core/duration.h"
#include "tests/fixtures.h"
#include "tests/viewer_util.h"

namespace tfdiag::test {
namespace {

// viewer/panels/panels.h colors::kPathWait.
constexpr uint8_t kWaitR = 0xFF, kWaitG = 0x8C, kWaitB = 0x1A;

class ViewerDetailsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why = ViewerSkipReason();
    if (!why.empty()) GTEST_SKIP() << why;
  }

  // Screenshot and view dump of `inputs` (quoted by the caller) at 1400x860.
  rapidjson::Document Dump(const std::string& name, const std::string& args, Shot* shot) {
    return DumpView(dir_, name, "--size 1400x860 " + args, shot);
  }

  static std::vector<std::string> Figures(const rapidjson::Document& d) {
    std::vector<std::string> out;
    for (const auto& f : d["figures"].GetArray()) out.push_back(f.GetString());
    return out;
  }

  // A bundle as `tfdiag attach` writes one without the eBPF probes: a PS and a worker process,
  // CPU samples `gap_s` seconds apart, no traffic figures.
  std::string ProcfsBundle(int samples, int gap_s) {
    SampledProcess ps = Sampled("ps", 0, 41), worker = Sampled("worker", 0, 42);
    ps.cpu_limit = worker.cpu_limit = 2;
    ps.threads = worker.threads = 16;
    ps.runnable = worker.runnable = 2;
    const std::string path = dir_.File("procfs.tfdiag.json");
    EXPECT_TRUE(WriteBundle(SampledCapture({ps, worker}, samples, "node-1", gap_s), path).ok());
    return path;
  }

  TempDir dir_;
};

TEST_F(ViewerDetailsTest, BundleWithoutTrafficProbeClaimsNoMeasuredBytes) {
  Shot shot;
  rapidjson::Document d = Dump("procfs", "'" + ProcfsBundle(5, 1) + "'", &shot);
  ASSERT_TRUE(d.IsObject());
  bool cpu_heading = false;
  for (const std::string& f : Figures(d)) {
    EXPECT_EQ(f.find("Measured (eBPF)"), std::string::npos) << f;
    cpu_heading = cpu_heading || f.find("share of the CPU used by all PS") != std::string::npos;
  }
  EXPECT_TRUE(cpu_heading) << "the PS load panel says what its bars show";
}

TEST_F(ViewerDetailsTest, LongSpanReadsAsTheTextReportWritesIt) {
  // 38 samples a minute apart: 37 minutes, 2220 s.
  Shot shot;
  rapidjson::Document d = Dump("long", "'" + ProcfsBundle(38, 60) + "'", &shot);
  ASSERT_TRUE(d.IsObject());
  const std::string status = d["status"].GetString();
  EXPECT_EQ(status.find("e+"), std::string::npos) << status;
  // The window as the text report gives it (its Cluster section's "live" line).
  EXPECT_NE(status.find("2 processes over 2220.0 s"), std::string::npos) << status;
}

TEST_F(ViewerDetailsTest, LogDirectoryWithTrailingSlashIsNamed) {
  if (!SharedAvailable()) GTEST_SKIP() << "../shared/traces not found beside the repository";
  Shot shot;
  rapidjson::Document d = Dump(
      "logdir", "'" + SharedTrace("mholmeslinder_9a8988e_scalars8_logdir/train") + "/'", &shot);
  ASSERT_TRUE(d.IsObject());
  const std::string status = d["status"].GetString();
  EXPECT_EQ(status.rfind("| train |", 0), 0u) << status;
}

TEST_F(ViewerDetailsTest, ManifestObjectsNameTheirFileOnceAndFitThePanel) {
  const std::string job = std::string(SourceDir()) + "/samples/job.yaml";
  Shot shot;
  rapidjson::Document d = Dump("manifest", "--select cpu-qos '" + job + "'", &shot);
  ASSERT_TRUE(d.IsObject());
  int objects = 0;
  bool heading = false;
  for (const std::string& f : Figures(d)) {
    heading = heading || f == "2 containers in job.yaml:";
    if (f.rfind("object: ", 0) != 0) continue;
    ++objects;
    EXPECT_EQ(f.find(job), std::string::npos) << "the path on every row: " << f;
    EXPECT_EQ(f.rfind("object: (doc 1): spec.tfReplicaSpecs.", 0), 0u) << f;
  }
  EXPECT_TRUE(heading) << "one file's 2 containers, not \"2 manifests\"";
  EXPECT_EQ(std::string(d["status"].GetString()),
            "| job.yaml | no timeline or samples | 3 findings");
  EXPECT_EQ(objects, 2);
  EXPECT_EQ(d["overflow"].Size(), 0u) << "nothing cut off at a panel's edge";
}

TEST_F(ViewerDetailsTest, UnzoomedCriticalPathIsHintedNotDrawnAsSlivers) {
  const std::string hot = HotPsSample(dir_);
  Shot shot;
  rapidjson::Document d = Dump("unzoomed", "'" + hot + "'", &shot);
  ASSERT_TRUE(d.IsObject() && d["critical_path"].IsObject());
  const rapidjson::Value& p = d["critical_path"];
  EXPECT_FALSE(p["legible"].GetBool());
  EXPECT_NE(std::string(p["hint"].GetString()).find("zoom in"), std::string::npos);
  for (const auto& s : p["segments"].GetArray()) {
    EXPECT_TRUE(s["rect"].IsNull());
    EXPECT_TRUE(s["arrow"].IsNull());
  }
  // No orange of the path among the rows (below the toolbar and ruler, which hold its tag).
  ASSERT_EQ(shot.panels.count("timeline"), 1u);
  Rect rows = shot.panels["timeline"];
  rows.y += 75, rows.h -= 75;
  EXPECT_EQ(CountColour(shot.image, rows, kWaitR, kWaitG, kWaitB), 0);

  // Clicking the step tag left of the ruler (as the hint says) zooms to the step: it reads.
  // The ruler is the 22 pixels above the rows' job header (18 pixels above the first row).
  const int tag_x = static_cast<int>(d["track"]["x"].GetDouble()) - 150 + 30;
  const int tag_y = static_cast<int>(d["rows"][0]["y"].GetDouble()) - 18 - 11;
  Shot clicked;
  rapidjson::Document k = Dump(
      "clicked",
      "--input 'click " + std::to_string(tag_x) + "," + std::to_string(tag_y) + "' '" + hot + "'",
      &clicked);
  ASSERT_TRUE(k.IsObject() && k["critical_path"].IsObject());
  EXPECT_TRUE(k["critical_path"]["legible"].GetBool()) << "clicked at " << tag_x << "," << tag_y;
  EXPECT_LE(k["visible"]["start_us"].GetDouble(), k["critical_path"]["start_us"].GetDouble());

  // Zoomed to the step it reads, and is drawn.
  Shot zoomed;
  rapidjson::Document z = Dump("zoomed", "--path worker:1 '" + hot + "'", &zoomed);
  ASSERT_TRUE(z.IsObject() && z["critical_path"].IsObject());
  EXPECT_TRUE(z["critical_path"]["legible"].GetBool());
  EXPECT_STREQ(z["critical_path"]["hint"].GetString(), "");
  EXPECT_GT(CountColour(zoomed.image, rows, kWaitR, kWaitG, kWaitB), 300);
}

TEST_F(ViewerDetailsTest, PsLoadListsNoZeroPercentVariables) {
  Shot shot;
  rapidjson::Document d = Dump("vars", "'" + HotPsSample(dir_) + "'", &shot);
  ASSERT_TRUE(d.IsObject());
  int lines = 0;
  for (const std::string& f : Figures(d)) {
    if (f.rfind("ps:", 0) != 0) continue;
    ++lines;
    EXPECT_EQ(f.find(" 0%"), std::string::npos) << f;
  }
  EXPECT_EQ(lines, 4) << "one variables line per PS";
}

TEST_F(ViewerDetailsTest, StdoutSaysOnlyWhatWasWritten) {
  const std::string png = dir_.File("quiet.png"), json = dir_.File("quiet.json");
  RunResult r = RunView("--size 800x600 --screenshot '" + png + "' --dump-view '" + json + "' '" +
                        HotPsSample(dir_) + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "wrote " + png + " (800x600)\nwrote " + json + "\n");
}

// Nothing to judge (a misspelt kind) is the one line `tfdiag analyze` exits 2 with, not an empty
// view reading "No rule fired (20 rules run)" above 16 rules that could not run (issue 39 items
// 2 and 8 in the viewer).
TEST_F(ViewerDetailsTest, NothingToJudgeIsRefusedAsAnalyzeRefusesIt) {
  WriteFile(dir_.File("job.yaml"),
            TfJobYaml("mnist", {{"PS", 1, "            image: tensorflow/tensorflow:2.13.0\n"}},
                      "TFjob"));
  const std::string png = dir_.File("typo.png");
  RunResult r = RunView("--screenshot '" + png + "' '" + dir_.File("job.yaml") + "'");
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("nothing to judge: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("TFjob (did you mean TFJob?)"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(png));
}

// A run where no rule fired says how many rules could judge it, as the text report's Findings
// header does ("12 of 20 analyze rules could judge these inputs"), not how many ran.
TEST_F(ViewerDetailsTest, NoRuleFiredCountsTheRulesThatCouldJudge) {
  const std::string trace = dir_.File("balanced.json");
  ASSERT_EQ(RunTfdiag("simulate balanced --steps 4 -o '" + trace + "'").exit_code, 0);
  RunResult text = RunTfdiag("analyze --color never '" + trace + "'");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  const size_t at = text.out.find("Findings (0)  (");
  ASSERT_NE(at, std::string::npos) << text.out;
  const std::string counts =
      text.out.substr(at + 15, text.out.find(" could judge", at) - at - 15);  // "12 of 20 rules"
  Shot shot;
  rapidjson::Document d = Dump("balanced", "'" + trace + "'", &shot);
  ASSERT_TRUE(d.IsObject());
  const std::string want = "No rule fired (" + counts + " could judge these inputs).";
  bool found = false;
  for (const std::string& f : Figures(d)) found = found || f == want;
  EXPECT_TRUE(found) << want;
}

}  // namespace
}  // namespace tfdiag::test
