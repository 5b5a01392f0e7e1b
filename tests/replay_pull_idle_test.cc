// The replay's pull wait where the worker's receive op spans only the answer's transfer (gen2's
// RecvTensor, from its first byte): the PS's service before it is a gap no op covers, idle time
// in the step graph. The baseline model takes the replayed pull wait out of that idle time too;
// before, the tail held it while the replay served the pull again, and the replay of the capture
// as is ran the pull wait twice (gen2 report3 825: +29%, 819: +14%, 808: +19%).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analyzers/analysis.h"
#include "analyzers/replay.h"
#include "tests/replay_util.h"
#include "tests/test_util.h"
#include "tests/trace_json.h"

namespace tfdiag::test {
namespace {

constexpr int kSteps = 12;
constexpr int64_t kStepUs = 14'000;

// One worker and one PS. Each step: the PS reads `w` for 5 ms, its answer crosses in 200 us (the
// worker's RecvTensor), the worker computes 5 ms, pushes, the PS applies for 3 ms, and the step
// ends 100 us later; 14 ms in all, 5.1 ms of it a gap before the compute no op covers.
std::string Job() {
  std::vector<std::string> ev;
  ev.push_back(MetaEvent(1, "/job:ps/replica:0/task:0/device:CPU:0"));
  ev.push_back(MetaEvent(2, "/job:worker/replica:0/task:0/device:CPU:0"));
  ev.push_back(OpEvent(1, 0, 0, 1, "w", "VariableV2"));
  for (int k = 0; k < kSteps; ++k) {
    const int64_t t0 = 10 + k * kStepUs;
    ev.push_back(OpEvent(2, 0, t0, 1, "_SOURCE", "NoOp"));
    ev.push_back(OpEvent(1, 1, t0 + 100, 5'000, "w/read", "Identity", {"w"}));
    ev.push_back(OpEvent(2, 1, t0 + 5'100, 200, "RecvTensor", "RecvTensor"));
    ev.push_back(OpEvent(2, 0, t0 + 5'300, 5'000, "model/MatMul", "MatMul", {"w/read_S1"}));
    ev.push_back(OpEvent(1, 1, t0 + 10'400, 3'000, "w/ApplyGradientDescent", "ApplyGradientDescent",
                         {"w", "model/MatMul_S2"}));
    ev.push_back(OpEvent(2, 0, t0 + 13'500, 2, "group_deps", "NoOp"));
  }
  return ObjectForm(ev);
}

TEST(ReplayPullIdle, PullWaitInTheIdleGapIsReplayedOnce) {
  TempDir dir;
  const std::string path = dir.File("pull-idle.json");
  WriteFile(path, Job());
  const Capture c = LoadOrDie({path});
  const AnalysisResult r = Analyze(c, Rules());
  const AnalysisInput in{c, r.stats, r.processes, r.traffic, r.sched, nullptr, r.graph.get()};
  const ReplayModel m = BuildReplayModel(in);
  ASSERT_EQ(m.workers.size(), 1u);
  const Baseline b = ReplayBaseline(m);
  EXPECT_NEAR(b.measured_ns, 13.5e6, 0.02e6);  // the step ends with group_deps
  // Before: the tail held the 5.1 ms gap the replayed pull already waits (+36%).
  EXPECT_LT(std::abs(b.miss), 0.05) << "replay " << b.replay_ns << " measured " << b.measured_ns;
  EXPECT_LT(m.workers[0].tail_ns, 0.5e6);
}

}  // namespace
}  // namespace tfdiag::test
