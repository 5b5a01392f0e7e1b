// The PS cores fit (analyzers/replay_cores.h) on a row-built PS: one core, a node seen alone and
// with three other ops at once (4x its time alone), and receives waiting beside them. The fit
// finds the core; where the PS's demand leaves its receives out (TaskStats::recv_busy_ns > 0),
// the work/op ratio that scales that demand is taken over its other ops alone.
#include "analyzers/replay_cores.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analyzers/task_stats.h"
#include "core/capture_builder.h"

namespace tfdiag {
namespace {

constexpr TimeNs kUs = 1000;

Capture OneCorePs() {
  CaptureBuilder b;
  StatusOr<DeviceName> d = ParseDeviceName("/job:ps/replica:0/task:0/device:CPU:0");
  EXPECT_TRUE(d.ok());
  const uint32_t dev = b.AddDevice(*d);
  auto op = [&](TimeNs start, TimeNs dur, const std::string& name, const std::string& type) {
    b.AddOp(start, dur, dev, 0, b.Intern(name), b.Intern(type), nullptr, 0);
  };
  for (int k = 0; k < 8; ++k) {
    const TimeNs t = k * 10000 * kUs;
    op(t, 100 * kUs, "emb/Gather", "GatherV2");  // alone: its work
    for (const char* n : {"emb/Gather", "a/Read", "b/Read", "c/Read"}) {
      op(t + 1000 * kUs, 400 * kUs, n, n[0] == 'e' ? "GatherV2" : "Identity");  // 4 at once
    }
    // Two gradients arriving together, 2 ms each, away from the ops.
    op(t + 3000 * kUs, 2000 * kUs, "recv_a", "RecvTensor");
    op(t + 3000 * kUs, 2000 * kUs, "recv_b", "RecvTensor");
  }
  return b.Finish();
}

TEST(ReplayCores, ReceivesLeftOutOfTheDemandAreLeftOutOfItsScale) {
  const Capture c = OneCorePs();
  const TaskStatsTable st = ComputeTaskStats(c);
  const TaskStats* ps = st.Find("ps:0");
  ASSERT_NE(ps, nullptr);
  TaskStats waits = *ps, work = *ps;
  waits.recv_busy_ns = 1;  // receives are waits: out of the demand
  work.recv_busy_ns = 0;   // receives held the threads: part of the demand
  const PsOpLoad a = FitPsCores(c, waits), b = FitPsCores(c, work);
  EXPECT_EQ(a.cores, 1);
  EXPECT_EQ(b.cores, 1);
  // Per k: 100 us alone + 4 x 400 us at level 4 = 1.7 ms of ops, 0.5 ms of work on one core.
  EXPECT_NEAR(a.op_ns, 8 * 1700.0 * kUs, 1);
  EXPECT_NEAR(a.work_ns, 8 * 500.0 * kUs, 1);
  EXPECT_NEAR(a.work_ns / a.op_ns, 500.0 / 1700, 1e-9);
  // Counted as work, the receives (2 x 2 ms at level 2: 2 ms of work) join both sums.
  EXPECT_NEAR(b.op_ns, 8 * 5700.0 * kUs, 1);
  EXPECT_NEAR(b.work_ns, 8 * 2500.0 * kUs, 1);
}

// A PS whose ops run `at_once` at a time `stretch` times as long as alone (each node seen alone
// too, with +-5% of noise between steps).
Capture PsAtOnce(int at_once, double stretch) {
  CaptureBuilder b;
  StatusOr<DeviceName> d = ParseDeviceName("/job:ps/replica:0/task:0/device:CPU:0");
  EXPECT_TRUE(d.ok());
  const uint32_t dev = b.AddDevice(*d);
  for (int k = 0; k < 8; ++k) {
    const TimeNs t = k * 10000 * kUs;
    const double noise = 1 + 0.05 * ((k % 3) - 1);
    for (int n = 0; n < at_once; ++n) {
      const uint32_t name = b.Intern("v" + std::to_string(n) + "/Read");
      b.AddOp(t + n * 200 * kUs, TimeNs(100 * kUs * noise), dev, 0, name, b.Intern("Identity"),
              nullptr, 0);
      b.AddOp(t + 2000 * kUs, TimeNs(100 * kUs * noise * stretch), dev, 0, name,
              b.Intern("Identity"), nullptr, 0);
    }
  }
  return b.Finish();
}

// FitPsCores on ps:0 of `c` into `*fit` (a fatal failure without ps:0).
void FitPs0(const Capture& c, PsOpLoad* fit) {
  const TaskStatsTable st = ComputeTaskStats(c);
  const TaskStats* ps = st.Find("ps:0");
  ASSERT_NE(ps, nullptr);
  *fit = FitPsCores(c, *ps);
}

// Ops as fast 4 at once as alone fit no cores (no slowdown to fit), but rule out fewer than 4:
// at 3 cores or fewer they would have run 4/3x or more as long (ReplayModel::ps_min_cores,
// which lets a fix adding PS be replayed on the PS queues: gen2 report24 5201, spent).
TEST(ReplayCores, OpsAsFastAtOnceAsAloneShowTheirThreadsCores) {
  PsOpLoad fit;
  ASSERT_NO_FATAL_FAILURE(FitPs0(PsAtOnce(4, 1.0), &fit));
  EXPECT_EQ(fit.cores, 0);
  EXPECT_EQ(fit.min_cores, 4);
}

// Ops twice as long 4 at once: 2 cores, fitted; min_cores is left 0 (ps_cores says it).
TEST(ReplayCores, OpsSlowedAtOnceFitTheirCores) {
  PsOpLoad fit;
  ASSERT_NO_FATAL_FAILURE(FitPs0(PsAtOnce(4, 2.0), &fit));
  EXPECT_EQ(fit.cores, 2);
  EXPECT_EQ(fit.min_cores, 0);
}

}  // namespace
}  // namespace tfdiag
