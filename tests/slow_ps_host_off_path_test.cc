// slow-ps-host's severity on the waits the slow PS ends (issue 44, session 35: no medium+ finding
// on a healthy job). Moving a PS to a normal host buys at most the waits its answers and applies
// end; where the workers wait on other PS's answers but seldom on its own (under its fair share
// of the waits PS end), the rule's finding is LOW.
// indep report16 (spent) 24007: 12 PS for 3 workers, ps:5 on a host at half speed and busy 44%
// of the capture, the workers bound by their own links; none of the waits PS end are ps:5's, and
// moved to a normal host its twin gains 0.3%. Before: MEDIUM on a healthy job. gen3 report11
// (spent) 2722 and 2727: slow hosts whose twins gain 12-13% end most of the waits PS end, and
// stay MEDIUM. About half a minute.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <string>

#include "analyzers/analysis.h"
#include "tests/replay_util.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

// The severity of `rule`'s row in job `i` of `d` (a run_*.py --json document), "" without one.
std::string SeverityOf(const rapidjson::Document& d, size_t i, const std::string& rule) {
  for (const auto& r : d["jobs"][rapidjson::SizeType(i)]["rows"].GetArray()) {
    if (std::string(r["rule"].GetString()) == rule) return r["severity"].GetString();
  }
  return "";
}

// 24007 LOW (MEDIUM before), and the slow hosts that pace their jobs still MEDIUM.
TEST(SlowPsHostOffPath, SeverityFollowsTheWaitsTheSlowPsEnds) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: indep and gen3 need it";
  rapidjson::Document d;
  std::string out;
  ASSERT_NO_FATAL_FAILURE(RunBenchJobs("indep/run_indep.py", "--seeds 24007", 1, &d, &out));
  ASSERT_TRUE(d["jobs"][0]["healthy"].GetBool()) << out;
  EXPECT_EQ(SeverityOf(d, 0, "slow-ps-host"), "low") << out;
  EXPECT_EQ(d["jobs"][0]["severe_findings"].Size(), 0u) << out;
  for (const int seed : {2722, 2727}) {
    TempDir dir;
    SimJob j;
    ASSERT_NO_FATAL_FAILURE(LoadSimJob("gen3", seed, dir, &j));
    const AnalysisResult r = Analyze(j.c, Rules());
    const Finding* f = FindRule(r, "slow-ps-host");
    ASSERT_NE(f, nullptr) << seed;
    EXPECT_EQ(f->severity, Severity::kMedium) << seed << ": " << f->summary;
  }
}

}  // namespace
}  // namespace tfdiag::test
