// Issue 32 items 9 and 10: what tfdiag prints is honest. JSON documents never carry a number
// RapidJSON refused (NaN and +-Inf were written as nothing: `"speedup": ,` with exit 0): they are
// null, and a refused value is an error, not an invalid document. Notes and warnings on stderr
// carry workload text (pod labels, file names in a log directory) with control characters
// escaped, so a name with a newline or ESC cannot forge a line or drive the terminal.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <sys/stat.h>

#include <cmath>
#include <limits>
#include <string>

#include "core/capture_builder.h"
#include "core/escape.h"
#include "report/report.h"
#include "report/scaling_report.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

rapidjson::Document Parse(const std::string& s) {
  rapidjson::Document d;
  d.Parse(s.c_str(), s.size());
  return d;
}

ScalingResult NonFiniteScaling() {
  ScalingResult r;
  r.runs.resize(2);
  r.runs[0].name = "run-2";
  r.runs[0].workers = 2;
  r.runs[0].throughput_steps_per_s = 0;  // a run that made no step: every ratio to it is not finite
  r.runs[1].name = "run-4";
  r.runs[1].workers = 4;
  r.runs[1].throughput_steps_per_s = 10;
  r.runs[1].speedup = kInf;
  r.runs[1].efficiency = kNaN;
  r.runs[1].input_wait_pct = kNaN;  // a "may be unknown" figure that is NaN, not < 0
  r.runs[1].ps_busy.push_back({"ps:0", kNaN, "busy time / span", "v", -kInf});
  Finding f;
  f.rule_id = "scaling-limit";
  f.subject = "run-4";
  f.evidence.push_back({"efficiency", kNaN, "%"});
  f.evidence.push_back({"step time", kInf, "us"});
  r.findings.push_back(f);
  return r;
}

// Unknown figures are -1, the documents' one convention (docs/json.md); evidence values, which
// may be negative, stay null when they are not finite.
TEST(HonestJson, ScalingDocumentWritesUnknownForEveryNonFiniteNumber) {
  for (bool pretty : {true, false}) {
    StatusOr<std::string> json = RenderScalingJson(NonFiniteScaling(), pretty);
    ASSERT_TRUE(json.ok()) << json.status().message();
    rapidjson::Document d = Parse(*json);
    ASSERT_FALSE(d.HasParseError()) << "invalid JSON at byte " << d.GetErrorOffset() << ":\n"
                                    << *json;
    const auto& run = d["runs"][1];
    EXPECT_EQ(run["speedup"].GetDouble(), -1);
    EXPECT_EQ(run["efficiency"].GetDouble(), -1);
    EXPECT_EQ(run["input_wait_pct"].GetDouble(), -1);
    EXPECT_EQ(run["ps_busy_pct"]["ps:0"].GetDouble(), -1);
    // The PS list is "ps_tasks" (once "ps" a second time, beside the count).
    ASSERT_TRUE(run["ps_tasks"].IsArray()) << *json;
    EXPECT_EQ(run["ps_tasks"][0]["busy_pct"].GetDouble(), -1);
    EXPECT_EQ(run["ps_tasks"][0]["top_variable_pct"].GetDouble(), -1);
    EXPECT_TRUE(run["ps"].IsInt()) << *json;
    EXPECT_EQ(run["throughput_steps_per_s"].GetDouble(), 10);
    const auto& ev = d["findings"][0]["evidence"];
    EXPECT_TRUE(ev[0]["value"].IsNull());
    EXPECT_TRUE(ev[1]["value"].IsNull());
    EXPECT_EQ(json->find(": ,"), std::string::npos) << *json;
  }
}

TEST(HonestJson, AnalysisDocumentWritesNullForNonFiniteEvidence) {
  const Capture c = CaptureBuilder().Finish();
  AnalysisResult r;
  Finding f;
  f.rule_id = "hot-ps";
  f.subject = "ps:0";
  f.evidence.push_back({"busy", kNaN, "%"});
  f.evidence.push_back({"share", -kInf, ""});
  FindingObject o;
  o.subject = "ps:0";
  o.evidence = f.evidence;
  f.objects.push_back(o);
  r.findings.push_back(f);
  StatusOr<std::string> json = RenderJson(c, r, false);
  ASSERT_TRUE(json.ok()) << json.status().message();
  rapidjson::Document d = Parse(*json);
  ASSERT_FALSE(d.HasParseError()) << "invalid JSON at byte " << d.GetErrorOffset() << ":\n"
                                  << *json;
  const auto& finding = d["findings"][0];
  EXPECT_TRUE(finding["evidence"][0]["value"].IsNull());
  EXPECT_TRUE(finding["evidence"][1]["value"].IsNull());
  EXPECT_TRUE(finding["objects"][0]["evidence"][0]["value"].IsNull());
}

TEST(HonestNotes, PrintNoteEscapesControlCharactersOnOneLine) {
  TempDir dir;
  const std::string path = dir.File("err");
  std::FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  PrintNote("note: ", "pod evil\n\x1b[2Jnote: forged\r", f);
  std::fclose(f);
  EXPECT_EQ(ReadFile(path), "note: pod evil\\x0a\\x1b[2Jnote: forged\\x0d\n");
}

// A log directory whose run and host file names carry a newline and an ESC sequence (anyone who
// can write the log directory names them): the notes and the error name them escaped.
TEST(HonestNotes, LogDirectoryFileNamesAreEscapedOnStderr) {
  TempDir dir;
  const std::string evil = "2024_05_01\n\x1b[31mtfdiag analyze: error: forged";
  const std::string run = dir.File("plugins/profile/" + evil);
  ASSERT_EQ(RunShell("mkdir -p '" + run + "'").exit_code, 0);
  WriteFile(run + "/worker\x1b]0;title\x07.xplane.pb", "not an XSpace");
  ASSERT_EQ(RunShell("mkdir -p '" + dir.File("plugins/profile/2023_01_01") + "'").exit_code, 0);
  RunResult r = RunTfdiag("analyze --no-progress '" + dir.path() + "'");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\x07'), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("\n\x1b[31mtfdiag"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("2024_05_01\\x0a\\x1b[31mtfdiag analyze: error: forged"), std::string::npos)
      << r.err;
  // Every line of stderr is one of ours: a note or the error, no forged one.
  size_t lines = 0;
  for (size_t at = 0; at < r.err.size();) {
    const size_t nl = r.err.find('\n', at);
    const std::string line = r.err.substr(at, nl - at);
    EXPECT_TRUE(line.rfind("note: ", 0) == 0 || line.rfind("tfdiag analyze: error: ", 0) == 0)
        << line;
    ++lines;
    if (nl == std::string::npos) break;
    at = nl + 1;
  }
  EXPECT_GE(lines, 2u) << r.err;
  // The error for a missing run lists the runs, escaped.
  r = RunTfdiag("analyze --no-progress --run nope '" + dir.path() + "'");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("runs: 2023_01_01, 2024_05_01\\x0a"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace tfdiag::test
