// Issue 35 item 1: a finding's severity comes from its rule's evidence and thresholds; the
// what-if prediction (analyzers/replay.h) orders the findings and names `Fix first` only where it
// is trusted, and never lowers or raises a severity. The same hot-PS job in every profile format
// is HIGH and fails `--fail-on high`, whatever the replay can or cannot predict from it.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <map>
#include <string>

#include "analyzers/analysis.h"
#include "rules/rule_set.h"
#include "samples/simulator.h"
#include "tests/replay_util.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

// `tfdiag simulate hot-ps` written as each format `simulate --format` knows; the path to analyze.
std::map<std::string, std::string> HotPsInEveryFormat(const TempDir& dir, int steps) {
  std::map<std::string, std::string> paths = {{"tf1", dir.File("hot.json")},
                                              {"xplane", dir.File("hot-xplane")},
                                              {"trace-json", dir.File("hot-trace")},
                                              {"runmetadata", dir.File("hot.pb")}};
  for (const auto& [format, path] : paths) {
    // The TF2 log directories with the rendezvous keys their RecvTensor events carry.
    const bool tf2 = format == "xplane" || format == "trace-json";
    const RunResult s =
        RunTfdiag(fmt::format("simulate hot-ps --steps {} --format {} {}-o {}", steps, format,
                              tf2 ? "--rendezvous-keys " : "", path));
    EXPECT_EQ(s.exit_code, 0) << format << ": " << s.err;
  }
  return paths;
}

// The same job as a TF1 timeline, a TF2 XSpace log directory, a TF2 trace JSON log directory
// and a RunMetadata: hot-ps is HIGH in each (its own evidence: one PS does most of the PS work),
// `--fail-on high` exits 1, and where the replay is not trusted the finding says "not predicted"
// and no `Fix first` line names a saving. Before: the XSpace and trace JSON were [LOW] (the
// replay found no cross-task transfers and predicted -0%), exit 0.
TEST(SeverityFromEvidence, HotPsIsHighInEveryFormat) {
  TempDir dir;
  for (const auto& [format, path] : HotPsInEveryFormat(dir, 10)) {
    SCOPED_TRACE(format);
    const RunResult r = RunTfdiag("analyze -f json --fail-on high " + path);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    rapidjson::Document j;
    j.Parse(r.out.c_str());
    ASSERT_FALSE(j.HasParseError()) << r.out.substr(0, 400);
    bool found = false;
    for (const auto& f : j["findings"].GetArray()) {
      if (std::string(f["rule"].GetString()) != "hot-ps") continue;
      found = true;
      EXPECT_STREQ(f["severity"].GetString(), "high");
      EXPECT_STREQ(f["subject"].GetString(), "ps:0");
      ASSERT_TRUE(f.HasMember("impact"));
      const auto& im = f["impact"];
      ASSERT_TRUE(im.HasMember("trusted"));
      if (!im["trusted"].GetBool()) continue;
      // A trusted prediction is a replay that saves something real on this job.
      EXPECT_STREQ(im["method"].GetString(), "replay");
      EXPECT_STRNE(im["confidence"].GetString(), "low");
    }
    EXPECT_TRUE(found) << r.out.substr(0, 2000);
    const RunResult text = RunTfdiag("analyze " + path);
    EXPECT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("[HIGH] hot-ps ps:0"), std::string::npos) << text.out;
    // No "Fix first" on a prediction of nothing.
    EXPECT_EQ(text.out.find("(-0%)"), std::string::npos) << text.out;
  }
}

// Issue 35 item 7: the same job in every format names the same hot variable with the same
// share of the hot PS's op time (an XSpace records no op inputs: its ops are tied to variables by
// TF's name scopes, "<var>/read", ".../update_<var>/...", the variable's own scope), and a format
// that records no cross-task transfers says its waits are not named rather than counting 0.
TEST(SeverityFromEvidence, EveryFormatGivesTheSameVariableShare) {
  TempDir dir;
  std::map<std::string, double> share;
  for (const auto& [format, path] : HotPsInEveryFormat(dir, 5)) {
    SCOPED_TRACE(format);
    const RunResult r = RunTfdiag("analyze -f json " + path);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    rapidjson::Document j;
    j.Parse(r.out.c_str());
    ASSERT_FALSE(j.HasParseError());
    for (const auto& f : j["findings"].GetArray()) {
      if (std::string(f["rule"].GetString()) != "hot-ps") continue;
      ASSERT_GE(f["ops"].Size(), 1u);
      EXPECT_STREQ(f["ops"][0].GetString(), "embedding/embedding_weights");
      for (const auto& e : f["evidence"].GetArray()) {
        if (std::string(e["label"].GetString()) == "op time share of embedding/embedding_weights") {
          share[format] = e["value"].GetDouble();
        }
      }
    }
    const RunResult text = RunTfdiag("analyze " + path);
    // The XSpace's and trace JSON's RecvTensor events carry their rendezvous keys
    // (tf2_events.h RendezvousKey): every format records the transfers.
    const bool no_transfers = false;
    EXPECT_EQ(text.out.find("this profile records no cross-task transfers") != std::string::npos,
              no_transfers)
        << text.out;
  }
  ASSERT_EQ(share.size(), 4u);
  for (const auto& [format, v] : share) EXPECT_NEAR(v, share["tf1"], 2) << format;
}

// Severity never follows the prediction: input-bound over one step per worker (the replay has
// low confidence: one step may be warm-up) is as severe as over 20 steps, its impact says
// "not predicted" with the reason, and no `Fix first` line rests on it. Before, one step lowered
// it from HIGH and printed the saving anyway.
TEST(SeverityFromEvidence, AnUntrustedPredictionNeitherGradesNorOrders) {
  TempDir dir;
  std::map<int, Severity> severity;
  for (int steps : {1, 20}) {
    std::string path;
    const AnalysisResult r = AnalyzeScenario(dir, "input-bound", steps, &path);
    const Finding* f = FindRule(r, "input-bound");
    ASSERT_NE(f, nullptr) << steps;
    severity[steps] = f->severity;
    const RunResult text = RunTfdiag("analyze " + path);
    ASSERT_EQ(text.exit_code, 0) << text.err;
    if (steps == 1) {
      EXPECT_FALSE(f->impact.trusted()) << f->impact.why;
      EXPECT_NE(text.out.find("impact: not predicted (confidence low)"), std::string::npos)
          << text.out;
      EXPECT_EQ(text.out.find("Fix first: input-bound"), std::string::npos) << text.out;
    } else {
      EXPECT_TRUE(f->impact.trusted()) << f->impact.why;
      EXPECT_EQ(text.out.rfind("Fix first: input-bound", 0), 0u) << text.out;
    }
  }
  EXPECT_EQ(severity[1], Severity::kHigh);
  EXPECT_EQ(severity[1], severity[20]);
}

}  // namespace
}  // namespace tfdiag::test
