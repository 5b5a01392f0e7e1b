// Each variable's share of the bytes its PS sends (TaskStats' VariableLoad::out_bytes), which
// hot-ps's fix moves off the PS's NIC (analyzers/hot_ps.cc HotPsFix; Fix::partition_bytes). On a
// job of the second independent generator (bench/twins/gen2, written apart from tfdiag): gen2
// report13 2804 (spent), 2 workers and 10 PS, ps:0 holding a hot embedding whose gathers are the
// only tensors it sends, though they are 70% of its op time (its applies the rest). Under a
// second (the simulation). And on a job of the third (bench/twins/gen3): gen3 report14 3322
// (spent), 96 synchronous workers and 16 PS, three of which hold dense kernels, whose
// accumulators' edges to the workers' train_op are unsized control edges: counted as such, the
// PS's bytes beside them and each variable's are known (they were -1, and hot-ps moved the NIC's
// bytes by op-time share, 31%: its prediction 245% off its twin). Five seconds (the simulation).
#include <gtest/gtest.h>

#include <string>

#include "analyzers/op_names.h"
#include "analyzers/task_stats.h"
#include "tests/replay_util.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

// The op type of the node that produced edge `e`'s tensor (its output slot dropped), or "".
std::string ProducerType(const Capture& c, const EdgeRow& e) {
  std::string_view name = c.Str(e.tensor);
  if (const size_t colon = name.rfind(':'); colon != std::string_view::npos) {
    name = name.substr(0, colon);
  }
  for (const NodeRow& n : c.nodes) {
    if (c.Str(n.name) == name) return std::string(c.Str(n.type));
  }
  return "";
}

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
    if (e.src_task == hot->task && !IsControlOnlyOpType(ProducerType(j.c, e))) {
      e.bytes = -1;
      break;
    }
  }
  const TaskStatsTable again = ComputeTaskStats(j.c);
  const TaskStats* unsized = again.Find("ps:0");
  ASSERT_NE(unsized, nullptr);
  for (const VariableLoad& v : unsized->variables) EXPECT_EQ(v.out_bytes, -1) << v.name;
}

TEST(VariableBytes, AControlOnlyOpsUnsizedEdgeLeavesThePsBytesKnown) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is needed to simulate the gen3 job";
  TempDir dir;
  SimJob j;
  ASSERT_NO_FATAL_FAILURE(LoadSimJob("gen3", 3322, dir, &j));
  const TaskStats* ps = j.stats.Find("ps:0");
  ASSERT_NE(ps, nullptr);
  // The capture leaves the edges of its accumulators (and applies) unsized, and only theirs.
  int unsized = 0;
  for (const EdgeRow& e : j.c.edges) {
    if (e.src_task != ps->task || e.bytes >= 0) continue;
    ++unsized;
    EXPECT_TRUE(IsControlOnlyOpType(ProducerType(j.c, e))) << j.c.Str(e.tensor);
  }
  ASSERT_GT(unsized, 0) << "gen3 sizes no control edge";
  // The bytes as the PS NIC demand reads them first stay unknown (PsNicBytes); beside the control
  // edges they are known (what PsNicBytesBesideControl reads then).
  EXPECT_EQ(ps->bytes_out, -1);
  ASSERT_GT(ps->bytes_out_beside_control, 0);
  ASSERT_FALSE(ps->variables.empty());
  // The dense kernel it holds sends nearly all its bytes (its reads), whatever its op-time share.
  const VariableLoad& top = ps->variables[0];
  EXPECT_NE(top.name.find("kernel"), std::string::npos) << top.name;
  EXPECT_GT(double(top.out_bytes), 0.9 * double(ps->bytes_out_beside_control)) << top.name;
  // A tensor of its own unsized (a read's): the bytes are unknown again.
  bool cut = false;
  for (EdgeRow& e : j.c.edges) {
    if (e.src_task == ps->task && e.bytes > 0) {
      e.bytes = -1;
      cut = true;
      break;
    }
  }
  ASSERT_TRUE(cut);
  const TaskStatsTable again = ComputeTaskStats(j.c);
  const TaskStats* unknown = again.Find("ps:0");
  ASSERT_NE(unknown, nullptr);
  EXPECT_EQ(unknown->bytes_out_beside_control, -1);
  for (const VariableLoad& v : unknown->variables) EXPECT_EQ(v.out_bytes, -1) << v.name;
}

}  // namespace
}  // namespace tfdiag::test
