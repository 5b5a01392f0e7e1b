// A prediction whose fix spreads work onto a PS the capture reads as on a slower host is at most
// medium (analyzers/replay_impact_weak.cc): the replay runs that work at the speed estimated from
// the PS's parts, which the fixed twin does not share. On a job of the third independent
// generator (bench/twins/gen3, written apart from tfdiag). About ten seconds.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <string>

#include "tests/replay_util.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

// gen3 report21 4710 (spent): ps:1 on a host at 0.44x the others' speed (read 2.3x slower), an
// embedding partitioned `div` whose hot part is on ps:0. hot-ps's partition was predicted `high`,
// 91.9 ms against the twin's 77.8 ms (+18%). Now medium, naming the slow host. Fails on the code
// before (high, no such reason).
TEST(ReplaySlowHostConfidence, Gen3PartitionOntoASlowHostIsAtMostMedium) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen3 needs it";
  rapidjson::Document d;
  std::string out;
  const rapidjson::Value* row = nullptr;
  ASSERT_NO_FATAL_FAILURE(RunBenchRow("gen3/run_gen3.py", 4710, "hot-ps", true, &d, &out, &row));
  EXPECT_STREQ((*row)["confidence"].GetString(), "medium") << (*row)["why"].GetString();
  EXPECT_NE(std::string((*row)["why"].GetString()).find("slower on its host"), std::string::npos)
      << (*row)["why"].GetString();
}

}  // namespace
}  // namespace tfdiag::test
