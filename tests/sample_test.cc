// The committed demo sample is exactly what the simulator writes with the command in
// samples/README.md, and `make demo`'s analysis of it names the hot PS.
#include <gtest/gtest.h>
#include <zlib.h>

#include "analyzers/analysis.h"
#include "samples/simulator.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

std::string Gunzip(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  EXPECT_NE(f, nullptr) << path;
  std::string out;
  char buf[1 << 16];
  int n;
  while (f != nullptr && (n = gzread(f, buf, sizeof buf)) > 0)
    out.append(buf, static_cast<size_t>(n));
  if (f != nullptr) gzclose(f);
  return out;
}

TEST(Sample, CommittedHotPsSampleMatchesTheSimulator) {
  const std::string committed = std::string(TFDIAG_SOURCE_DIR) + "/samples/hot-ps.tf1.json.gz";
  TempDir dir;
  sim::ScenarioParams p;  // tfdiag simulate hot-ps --steps 3 --seed 7 --gzip
  p.scenario = "hot-ps";
  p.steps = 3;
  p.seed = 7;
  p.gzip = true;
  ASSERT_TRUE(sim::WriteScenario(p, dir.File("regen.json.gz")).ok());
  std::string a = Gunzip(committed), b = Gunzip(dir.File("regen.json.gz"));
  ASSERT_GT(a.size(), 1000u);
  EXPECT_TRUE(a == b) << "samples/hot-ps.tf1.json.gz is stale: regenerate it with the command in "
                         "samples/README.md";
}

TEST(Sample, DemoSampleShowsTheHotPs) {
  Capture c = LoadOrDie({std::string(TFDIAG_SOURCE_DIR) + "/samples/hot-ps.tf1.json.gz"});
  StatusOr<RuleSet> rules = DefaultRuleSet();
  ASSERT_TRUE(rules.ok());
  AnalysisResult r = Analyze(c, *rules);
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].rule_id, "hot-ps");
  EXPECT_EQ(r.findings[0].subject, "ps:0");
  ASSERT_FALSE(r.findings[0].ops.empty());
  EXPECT_EQ(r.findings[0].ops[0], "embedding/embedding_weights");
}

}  // namespace
}  // namespace tfdiag::test
