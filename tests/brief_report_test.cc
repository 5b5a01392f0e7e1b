// `analyze --brief` (issue 48): Fix first with its range, one line per finding and Not judged,
// on one screen for each of the README tour's inputs; the whole report's findings are all in it.
// The tour's inputs are made by `simulate` as the README's tour makes them.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

const std::string kSource = TFDIAG_SOURCE_DIR;

std::vector<std::string> SplitLines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream is(s);
  for (std::string l; std::getline(is, l);) out.push_back(l);
  return out;
}

// The "[SEV] rule subject" heads of the whole report's findings.
std::vector<std::string> FindingHeads(const std::string& report) {
  std::vector<std::string> heads;
  const std::regex head(R"(^  \[(CRITICAL|HIGH|MEDIUM|LOW|INFO)\] (\S+) (.*)$)");
  for (const std::string& l : SplitLines(report)) {
    std::smatch m;
    if (std::regex_match(l, m, head)) heads.push_back("[" + m[1].str() + "] " + m[2].str());
  }
  return heads;
}

TEST(BriefReport, FitsOneScreenOnTheToursInputs) {
  TempDir dir;
  ASSERT_EQ(
      RunTfdiag("simulate hot-ps --steps 20 -o '" + dir.File("timeline.json") + "'").exit_code, 0);
  ASSERT_EQ(RunTfdiag("simulate hot-ps --steps 3 --profiler-hook 1 -o '" + dir.File("hook") + "'")
                .exit_code,
            0);
  ASSERT_EQ(
      RunTfdiag("simulate hot-ps --format xplane --rendezvous-keys -o '" + dir.File("logs") + "'")
          .exit_code,
      0);
  const std::vector<std::string> tour = {
      "'" + dir.File("timeline.json") + "'",
      "'" + dir.File("hook") + "'/*.json",
      "'" + dir.File("logs") + "'",
      "'" + dir.File("logs") + "' '" + kSource + "/samples/pods.json'",
      "'" + dir.File("logs") + "' '" + kSource + "/samples/job.yaml'",
      "'" + kSource + "/samples/job.yaml'",
      "'" + kSource + "/samples/pods.json'",
  };
  for (const std::string& in : tour) {
    RunResult brief = RunTfdiag("analyze --brief --width 100 " + in);
    ASSERT_LT(brief.exit_code, 2) << in << "\n" << brief.err;
    RunResult full = RunTfdiag("analyze --width 100 " + in);
    ASSERT_EQ(full.exit_code, brief.exit_code) << in;
    const std::vector<std::string> lines = SplitLines(brief.out);
    EXPECT_LE(lines.size(), 40u) << in << "\n" << brief.out;
    // Lines cut to the width (the Fix first line, whole, aside).
    for (size_t i = 1; i < lines.size(); ++i)
      EXPECT_LE(lines[i].size(), 100u) << in << ": " << lines[i];
    // Every finding of the whole report is one line of the brief one, in the same order.
    const std::vector<std::string> heads = FindingHeads(full.out);
    ASSERT_FALSE(heads.empty()) << in;
    size_t finding_lines = 0;
    for (const std::string& l : lines) finding_lines += l.rfind("  [", 0) == 0;
    EXPECT_EQ(finding_lines, heads.size()) << in << "\n" << brief.out;
    size_t at = 0;
    for (const std::string& h : heads) {
      at = brief.out.find("  " + h + " ", at);
      EXPECT_NE(at, std::string::npos) << in << ": " << h << "\n" << brief.out;
      if (at == std::string::npos) break;
    }
    // Not judged when the whole report has it; Fix first when it has it, the same line's head.
    EXPECT_EQ(brief.out.find("\nNot judged") != std::string::npos,
              full.out.find("\nNot judged") != std::string::npos)
        << in;
    const bool fix_first = full.out.rfind("Fix first: ", 0) == 0;
    EXPECT_EQ(brief.out.rfind("Fix first: ", 0) == 0, fix_first) << in;
    if (fix_first) {
      EXPECT_EQ(brief.out.substr(0, brief.out.find('\n')), full.out.substr(0, full.out.find('\n')));
    }
    // None of the long sections.
    for (const char* section : {"\nTasks", "\nPS load", "\nImport", "\nCluster"})
      EXPECT_EQ(brief.out.find(section), std::string::npos) << in << ": " << section;
  }
}

// Fix first gives the predicted range, and says when the range reaches today's step (the fix may
// buy nothing): read off the JSON's impact of the same finding, not off the text.
TEST(BriefReport, FixFirstKeepsItsRange) {
  TempDir dir;
  ASSERT_EQ(RunTfdiag("simulate hot-ps --steps 20 -o '" + dir.File("t.json") + "'").exit_code, 0);
  RunResult text = RunTfdiag("analyze --brief '" + dir.File("t.json") + "'");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  const std::string line = text.out.substr(0, text.out.find('\n'));
  ASSERT_EQ(line.rfind("Fix first: hot-ps on ps:0: step ", 0), 0u) << text.out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(line, m, std::regex(R"(; range ([0-9.]+)-([0-9.]+) ms)"))) << line;
  RunResult json = RunTfdiag("analyze -f json '" + dir.File("t.json") + "'");
  ASSERT_EQ(json.exit_code, 0);
  rapidjson::Document d;
  d.Parse(json.out.c_str());
  ASSERT_TRUE(d.IsObject());
  double lo = -1, hi = -1, now = -1;
  for (const auto& f : d["findings"].GetArray()) {
    if (std::string(f["rule"].GetString()) != "hot-ps") continue;
    lo = f["impact"]["low_ns"].GetDouble();
    hi = f["impact"]["high_ns"].GetDouble();
    now = f["impact"]["step_ns"].GetDouble();
  }
  ASSERT_GT(lo, 0);
  EXPECT_NEAR(std::stod(m[1]), lo / 1e6, 0.051) << line;
  EXPECT_NEAR(std::stod(m[2]), hi / 1e6, 0.051) << line;
  const bool includes = hi >= now;
  EXPECT_EQ(line.find("which includes today's step") != std::string::npos, includes) << line;
}

}  // namespace
}  // namespace tfdiag::test
