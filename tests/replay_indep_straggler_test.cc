// Milder stragglers of asynchronous jobs (straggler-worker's async_mild_min_ratio): workers under
// min_ratio (1.5x) whose lost steps still cost the job 5% of its steps/s, the line issue 44 draws
// under a fix. Jobs of spent held-out sets of the independent simulator (bench/twins/indep),
// simulated at test time (tests/replay_indep_util.h); session 60 set the ratio on them.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <cmath>
#include <string>

#include "tests/replay_indep_util.h"
#include "tests/replay_util.h"

namespace tfdiag::test {
namespace {

// `seed`'s job: straggler-worker fires LOW with its fix predicted within 25% of its twin, and
// Fix first names it (the job's best fix: its slow workers at the others' median speed).
void ExpectMildStragglerFirst(int seed) {
  JobRun run;
  if (!Ran("seed:" + std::to_string(seed), &run)) return;
  const rapidjson::Value& job = run.job();
  ASSERT_FALSE(job["healthy"].GetBool()) << "the best fix must buy 5%\n" << run.table;
  const rapidjson::Value* row = Row(job, "straggler-worker");
  ASSERT_NE(row, nullptr) << "no straggler-worker finding\n" << run.table;
  EXPECT_EQ(std::string((*row)["severity"].GetString()), "low") << run.table;
  ASSERT_TRUE(row->HasMember("err_pct")) << (*row)["why"].GetString() << "\n" << run.table;
  EXPECT_LT(std::abs((*row)["err_pct"].GetDouble()), 25) << run.table;
  ASSERT_TRUE(job["fix_first"].IsString()) << "no Fix first\n" << run.table;
  EXPECT_EQ(std::string(job["fix_first"].GetString()), "straggler-worker") << run.table;
  EXPECT_TRUE(job["fix_first_right"].GetBool()) << run.table;
}

// 3 asynchronous workers, one about 1.3x the others' step (indep report 33010): it costs the job
// 7% of its steps/s (its twin at the median's speed), under min_ratio; before, no finding fired
// and Fix first named nothing.
TEST(ReplayIndep, MildStragglerOfThreeWorkersIsNamedFirst) { ExpectMildStragglerFirst(33010); }

// 30 asynchronous workers, ten of them 1.16-1.29x the others' step (45010): each alone costs the
// job 0.5-0.75%, together 5.6% of its steps/s; they are named together, LOW, and Fix first names
// them.
TEST(ReplayIndep, MildStragglersTogetherAreNamedFirst) { ExpectMildStragglerFirst(45010); }

}  // namespace
}  // namespace tfdiag::test
