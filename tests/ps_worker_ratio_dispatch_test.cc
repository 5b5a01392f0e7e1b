// The dispatch-cost copy of a replay model (analyzers/replay_dispatch.h), which ps-worker-ratio's
// measured count (analyzers/ps_worker_ratio_measured.cc) and ComputeImpacts' part-op
// sensitivity check replay a PS-count fix again at: every PS's fixed cost per op at least TF's
// executor dispatch (kPartOpDispatchNs), nothing else moved.
#include <gtest/gtest.h>

#include "analyzers/replay_dispatch.h"

namespace tfdiag {
namespace {

TEST(PsWorkerRatioDispatch, RaisesEachPsOpFloorToTheDispatchCostOnly) {
  ReplayModel m;
  m.ps.resize(2);
  m.ps[0].op_floor_ns = 3e3;   // a NoOp of 3 us: raised
  m.ps[1].op_floor_ns = 45e3;  // dearer than the dispatch already: kept
  m.ps[0].pull_ns = 1e6;
  m.workers.resize(3);
  m.measured_step_ns = 5e7;
  const ReplayModel dear = AtDispatchCost(m);
  ASSERT_EQ(dear.ps.size(), 2u);
  EXPECT_EQ(dear.ps[0].op_floor_ns, kPartOpDispatchNs);
  EXPECT_EQ(dear.ps[1].op_floor_ns, 45e3);
  EXPECT_EQ(dear.ps[0].pull_ns, 1e6);
  EXPECT_EQ(dear.workers.size(), 3u);
  EXPECT_EQ(dear.measured_step_ns, 5e7);
  EXPECT_EQ(m.ps[0].op_floor_ns, 3e3);  // the model itself is left as it was
}

}  // namespace
}  // namespace tfdiag
