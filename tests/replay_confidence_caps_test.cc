// A fix that re-places the PS work (PS added, or SyncReplicasOptimizer removed) moves the queues
// that the wait held fixed sits beside: with more than 5% of the step held, at most medium
// (analyzers/replay_impact_weak.cc, kReplacedWaitShare). On the independent suite's report9 (spent)
// before: 17018, 2 -> 7 PS with 7.5% held, predicted 12% fast at high; 17005, asynchronous with
// 7.0% held, 13% fast at high. Both stay predicted, at medium, within 25%.
// About half a minute.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <cmath>
#include <string>

#include "tests/replay_util.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

TEST(ReplayConfidenceCaps, AddedPsAndAsyncAreAtMostMediumAndWithinIt) {
  if (!HavePython3()) {
    GTEST_SKIP() << "python3 is not installed: the independent simulator (bench/twins/indep) "
                    "needs it";
  }
  TempDir dir;
  rapidjson::Document d;
  std::string out;
  ASSERT_NO_FATAL_FAILURE(
      RunBenchJobs("indep/run_indep.py", "--seeds 17005,17018 --work " + dir.path(), 2, &d, &out));
  const struct {
    int seed;
    const char* rule;
  } expected[] = {{17005, "sync-replicas"}, {17018, "ps-worker-ratio"}};
  for (const auto& job : d["jobs"].GetArray()) {
    const int seed = job["seed"].GetInt();
    for (const auto& row : job["rows"].GetArray()) {
      if (!row.HasMember("err_pct")) continue;
      const std::string conf = row["confidence"].GetString();
      EXPECT_LT(std::abs(row["err_pct"].GetDouble()), conf == "high" ? 10 : 25)
          << seed << " " << row["rule"].GetString() << " (" << conf << ")\n"
          << out;
    }
    for (const auto& e : expected) {
      if (e.seed != seed) continue;
      bool made = false;
      for (const auto& row : job["rows"].GetArray()) {
        if (std::string(row["rule"].GetString()) != e.rule) continue;
        made = row.HasMember("err_pct");
        EXPECT_STREQ(row["confidence"].GetString(), "medium") << seed << " " << e.rule;
      }
      EXPECT_TRUE(made) << seed << ": " << e.rule << " not predicted\n" << out;
    }
  }
}

}  // namespace
}  // namespace tfdiag::test
