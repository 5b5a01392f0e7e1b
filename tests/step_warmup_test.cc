// Issue 38, item 5: a warm-up step (the first step of a session far longer than the rest: a Keras
// fit() traces its function and autotunes cuDNN kernels in it) is reported and left out of the
// step median and of the median step the rules look at. Fixture: a capture built here with known
// step lengths.
#include <gtest/gtest.h>

#include "analyzers/step_graph.h"
#include "analyzers/task_stats.h"
#include "core/capture_builder.h"

namespace tfdiag {
namespace {

// A worker whose steps last `ms` milliseconds each, 10 ms apart, one MatMul spanning each step.
Capture Steps(const std::vector<int>& ms) {
  CaptureBuilder b;
  DeviceName dn;
  dn.job = "worker";
  dn.type = "CPU";
  const uint32_t d = b.AddDevice(dn);
  const uint32_t t = b.AddTask("worker", 0, 0);
  TimeNs at = 0;
  for (int m : ms) {
    const TimeNs len = TimeNs{m} * 1'000'000;
    b.AddOp(at, len, d, 0, b.Intern("dense/MatMul"), b.Intern("MatMul"), nullptr, 0);
    b.AddStep(t, at, at + len);
    at += len + 10'000'000;
  }
  return b.Finish();
}

TEST(StepWarmup, AFirstStepFarLongerThanTheRestIsLeftOutOfTheMedian) {
  const Capture c = Steps({400, 50, 60, 55});
  const std::vector<bool> w = WarmupSteps(c, 0);
  ASSERT_EQ(w.size(), 4u);
  EXPECT_TRUE(w[0]);
  EXPECT_FALSE(w[1] || w[2] || w[3]);
  const TaskStatsTable table = ComputeTaskStats(c);
  ASSERT_EQ(table.tasks.size(), 1u);
  EXPECT_EQ(table.tasks[0].warmup_steps, 1);
  EXPECT_EQ(table.tasks[0].warmup_ns, 400'000'000);
  EXPECT_EQ(table.tasks[0].step_median_ns, 55'000'000);  // of 50, 55, 60
  // The rules' median step is one of the others, never the warm-up.
  const StepGraph g = StepGraph::Build(c);
  const uint32_t m = g.MedianStep(0);
  ASSERT_NE(m, kNoIndex);
  EXPECT_EQ(g.steps()[m].end - g.steps()[m].start, 55'000'000);
}

TEST(StepWarmup, EvenStepsAndShortFirstStepsAreNoWarmup) {
  // Not > 3x the median of the rest, or too few other steps: kept.
  EXPECT_FALSE(WarmupSteps(Steps({150, 50, 60, 55}), 0)[0]);
  EXPECT_FALSE(WarmupSteps(Steps({400, 50}), 0)[0]);
  const TaskStatsTable table = ComputeTaskStats(Steps({150, 50, 60, 55}));
  EXPECT_EQ(table.tasks[0].warmup_steps, 0);
  EXPECT_EQ(table.tasks[0].step_median_ns, 57'500'000);  // mean of the middle two
}

}  // namespace
}  // namespace tfdiag
