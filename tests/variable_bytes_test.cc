// Each variable's share of the bytes its PS sends (TaskStats' VariableLoad::out_bytes), which
// hot-ps's fix moves off the PS's NIC (analyzers/hot_ps.cc HotPsFix; Fix::partition_bytes). On a
// job of the second independent generator (bench/twins/gen2, written apart from tfdiag): gen2
// report13 2804 (spent), 2 workers and 10 PS, ps:0 holding a hot embedding whose gathers are the
// only tensors it sends, though they are 70% of its op time (its applies the rest). Under a
// second (the simulation).
#include <gtest/gtest.h>

#include <string>

#include "analyzers/task_stats.h"
#include "tests/replay_util.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

TEST(VariableBytes, EachSentByteIsAVariablesAndTheHotTablesShareIsItsBytes) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is needed to simulate the gen2 job";
  TempDir dir;
  SimJob j;
  ASSERT_NO_FATAL_FAILURE(LoadSimJob("gen2", 2804, dir, &j));
  const TaskStats* hot = j.stats.Find("ps:0");
  ASSERT_NE(hot, nullptr);
  ASSERT_GT(hot->bytes_out, 0) << "gen2 sizes every tensor it sends";
  ASSERT_FALSE(hot->variables.empty());
  // Every byte the PS sent is some variable's (the gathers' and reads' producers name them).
  int64_t sum = 0;
  for (const VariableLoad& v : hot->variables) {
    ASSERT_GE(v.out_bytes, 0) << v.name;
    sum += v.out_bytes;
  }
  EXPECT_EQ(sum, hot->bytes_out);
  // The hottest variable (by op time) is the embedding, and all the bytes are its gathers'.
  const VariableLoad& top = hot->variables[0];
  EXPECT_NE(top.name.find("emb"), std::string::npos) << top.name;
  EXPECT_LT(top.share, 0.9) << "its applies' share of the op time is not its bytes'";
  EXPECT_GT(double(top.out_bytes), 0.95 * double(hot->bytes_out));
  // One tensor the PS sent unsized: no variable's share is known.
  for (EdgeRow& e : j.c.edges) {
    if (e.src_task == hot->task) {
      e.bytes = -1;
      break;
    }
  }
  const TaskStatsTable again = ComputeTaskStats(j.c);
  const TaskStats* unsized = again.Find("ps:0");
  ASSERT_NE(unsized, nullptr);
  for (const VariableLoad& v : unsized->variables) EXPECT_EQ(v.out_bytes, -1) << v.name;
}

}  // namespace
}  // namespace tfdiag::test
