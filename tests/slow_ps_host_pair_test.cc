// slow-ps-host on a job of two PS with no variable partitioned over both: against one other PS a
// slow host cannot be told from another mix of variables, so the two are compared on like-sized
// variables of one kind only (dense with dense, tables with tables), where neither runs more ops
// at once than its cores (analyzers/slow_ps_host.cc). Both jobs are the independent suite's
// (bench/twins/indep, a simulator that shares no code with the replay), each against its twins.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <string>

#include "tests/replay_util.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

// indep report38 46012 (spent): 2 PS of dense kernels on one thread each, ps:1 on a host at
// 0.49x the other's speed; moving it buys 39% in the twin. Before: no slow-ps-host finding, and
// Fix first named nothing. Now it fires on ps:1 and its prediction is within 25% of the twin.
TEST(SlowPsHostPair, ASlowHostOfTwoPsIsNamedAndPredicted) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: the generator needs it";
  rapidjson::Document d;
  std::string out;
  ASSERT_NO_FATAL_FAILURE(
      RunBenchJobs("indep/run_indep.py", "--set report38 --seeds 46012 --no-outlook", 1, &d, &out));
  const rapidjson::Value* row = Row(d["jobs"][0], "slow-ps-host");
  ASSERT_NE(row, nullptr) << out;
  ASSERT_TRUE(row->HasMember("pred_ms")) << out;
  EXPECT_LE(std::abs((*row)["err_pct"].GetDouble()), 25) << out;
  EXPECT_TRUE(d["jobs"][0]["fix_first_right"].GetBool()) << out;
}

// indep report27 35022 (spent): 2 PS of one speed, a hot table on one. Compared with dense
// kernels of its bytes, the table's gathers and sparse applies read 2.1x "slow"; kind with kind,
// no slow host, and hot-ps stays the finding.
TEST(SlowPsHostPair, AHotTableBesideDenseKernelsIsNoSlowHost) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: the generator needs it";
  rapidjson::Document d;
  std::string out;
  ASSERT_NO_FATAL_FAILURE(
      RunBenchJobs("indep/run_indep.py", "--set report27 --seeds 35022 --no-outlook", 1, &d, &out));
  EXPECT_EQ(Row(d["jobs"][0], "slow-ps-host"), nullptr) << out;
  EXPECT_NE(Row(d["jobs"][0], "hot-ps"), nullptr) << out;
}

}  // namespace
}  // namespace tfdiag::test
