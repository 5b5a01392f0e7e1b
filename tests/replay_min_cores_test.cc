// A fix adding PS on PS whose threads ran at once as fast as alone (ReplayModel::ps_min_cores,
// analyzers/replay_cores.h): the capture shows a core for each thread, so the PS queues after the
// fix are the captured ones, and the prediction is made (it was withheld as "PS whose cores
// behind their threads the capture does not show"). On a job of the second independent generator
// (bench/twins/gen2, written apart from tfdiag). About fifteen seconds.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <cmath>
#include <string>

#include "tests/replay_util.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

// gen2 report24 5201 (spent): 7 PS of 2 threads on 2 cores for 53 workers; 7 -> 11 PS saves 28%
// in its twin. Withheld on the code before; now predicted within 25% of the twin (-13%), the
// checks naming the cores the ops show.
TEST(ReplayMinCores, Gen2MorePsOnThreadsAsFastAtOnceAsAloneIsPredicted) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen2 needs it";
  rapidjson::Document d;
  std::string out;
  const rapidjson::Value* row = nullptr;
  ASSERT_NO_FATAL_FAILURE(
      RunBenchRow("gen2/run_gen2.py", 5201, "ps-worker-ratio", true, &d, &out, &row));
  EXPECT_LT(std::abs((*row)["err_pct"].GetDouble()), 25) << (*row)["why"].GetString();
  EXPECT_NE(std::string((*row)["why"].GetString()).find("at least 2 core(s)"), std::string::npos)
      << (*row)["why"].GetString();
}

}  // namespace
}  // namespace tfdiag::test
