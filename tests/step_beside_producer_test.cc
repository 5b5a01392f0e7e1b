// A prefetching tf.data producer runs beside the steps (tf.data guide, "Prefetching":
// https://www.tensorflow.org/guide/data_performance#prefetching): its ops (MapDataset, ...)
// neither start nor end a step. Before, a producer op started late in a step and as long as one
// ended that step a step later, and worker steps of 25 ms read about 50 ms (spent held-out seed
// indep report20 28004: both its predictions 36-50% off their twins). Fixture: a capture built
// here whose steps are known from their _SOURCE ops.
#include <gtest/gtest.h>

#include "analyzers/step_graph.h"
#include "analyzers/task_stats.h"
#include "core/capture_builder.h"

namespace tfdiag {
namespace {

constexpr TimeNs kMs = 1'000'000;

// Task worker:0 and its CPU device in `b`; returns the device.
uint32_t AddWorker(CaptureBuilder* b) {
  DeviceName dn;
  dn.job = "worker";
  dn.type = "CPU";
  const uint32_t d = b->AddDevice(dn);
  b->AddTask("worker", 0, 0);
  return d;
}

// One worker: a _SOURCE every `step_ms`, 20 ms of MatMul after it and its train_op 0.1 ms before
// the next _SOURCE; on another lane a MapDataset op of `produce_ms` starting 0.3 ms before each
// _SOURCE (the first one before the first _SOURCE).
Capture Prefetched(int steps, TimeNs step_ms, TimeNs produce_ms) {
  CaptureBuilder b;
  const uint32_t d = AddWorker(&b);
  const StrId source = b.Intern("_SOURCE"), noop = b.Intern("NoOp");
  const StrId mm = b.Intern("dense/MatMul"), matmul = b.Intern("MatMul");
  const StrId train_op = b.Intern("train_op");
  const StrId map = b.Intern("IteratorV2/ParallelMapDataset/MapFn");
  const StrId map_type = b.Intern("MapDataset");
  for (int i = 0; i < steps; ++i) {
    const TimeNs at = 1 * kMs + TimeNs{i} * step_ms * kMs;
    b.AddOp(at - 300'000, produce_ms * kMs, d, 50, map, map_type, nullptr, 0);
    b.AddOp(at, 3'000, d, 0, source, noop, nullptr, 0);
    b.AddOp(at + 10'000, 20 * kMs, d, 0, mm, matmul, nullptr, 0);
    b.AddOp(at + step_ms * kMs - 100'000, 3'000, d, 0, train_op, noop, nullptr, 0);
  }
  return b.Finish();
}

TEST(StepBesideProducer, AProducerOpBoundsNoStep) {
  const Capture c = Prefetched(8, 25, 27);
  const TaskStatsTable table = ComputeTaskStats(c);
  ASSERT_EQ(table.tasks.size(), 1u);
  EXPECT_EQ(table.tasks[0].steps, 8);
  // Each step runs from its _SOURCE to its train_op's end: 24.903 ms (about 51.7 ms when the
  // producer op started 0.3 ms before the next _SOURCE ended it).
  constexpr TimeNs kStep = 25 * kMs - 100'000 + 3'000;
  EXPECT_EQ(table.tasks[0].step_median_ns, kStep);
  const StepRange steps = c.TaskSteps(0);
  ASSERT_EQ(steps.size(), 8u);
  // The first step starts at its _SOURCE, not at the producer op 0.3 ms before it.
  EXPECT_EQ(steps[0].start, 1 * kMs);
  for (size_t i = 0; i < steps.size(); ++i) {
    EXPECT_EQ(steps[i].end - steps[i].start, kStep) << "step " << i;
  }
  const StepGraph g = StepGraph::Build(c);
  const uint32_t m = g.MedianStep(0);
  ASSERT_NE(m, kNoIndex);
  EXPECT_EQ(g.steps()[m].end - g.steps()[m].start, kStep);
}

TEST(StepBesideProducer, ATaskOfProducerOpsOnlyStillHasItsStep) {
  // No _SOURCE and nothing but producer ops (an input host's lane): its one step spans them, as
  // it did before, rather than none.
  CaptureBuilder b;
  const uint32_t d = AddWorker(&b);
  const StrId map = b.Intern("IteratorV2/MapDataset"), map_type = b.Intern("MapDataset");
  b.AddOp(2 * kMs, 5 * kMs, d, 0, map, map_type, nullptr, 0);
  b.AddOp(9 * kMs, 5 * kMs, d, 0, map, map_type, nullptr, 0);
  const Capture c = b.Finish();
  const StepRange steps = c.TaskSteps(0);
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].start, 2 * kMs);
  EXPECT_EQ(steps[0].end, 14 * kMs);
}

}  // namespace
}  // namespace tfdiag
