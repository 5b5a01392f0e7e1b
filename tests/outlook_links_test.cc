// The scaling outlook's receive-link evidence (analyzers/outlook_links.h): RecvStretch compares a
// PS's receives per tensor, so a PS holding variables of different sizes shows no stretch
// without link sharing, and the synchronous convoy bound (RecvLinkCap) stays off; the receive-load
// gate is read at the worker count asked for; and WholeTableRead names only what the
// gather-on-worker rule found.
#include "analyzers/outlook_links.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace tfdiag {
namespace {

using Rows = std::vector<std::pair<std::string_view, TimeNs>>;

// One PS, `workers` workers, synchronous, as RecvLinkCap reads a model.
ReplayModel SyncModel(int workers) {
  ReplayModel m;
  m.sync = true;
  m.ps.resize(1);
  m.workers.resize(size_t(workers));
  return m;
}

// A PS holding a 4 MiB kernel and a 4 KiB bias, each received 8 times per capture at its own
// unshared time (1000 us and 20 us, jitter under 2%): the link is never shared. Compared over all
// receives (the quickest the bias's, the median the kernel's) the stretch read 0.98, and the
// convoy bound held a synchronous job at 2x the workers to +1% throughput.
TEST(OutlookLinks, MixedSizeReceivesWithoutSharingShowNoStretch) {
  Rows rows;
  for (int i = 0; i < 8; ++i) {
    rows.emplace_back("dense/kernel/_Recv", 1'000'000 + 10'000 * (i % 2));
    rows.emplace_back("dense/bias/_Recv", 20'000 + 300 * (i % 2));
  }
  const double stretch = RecvStretch(rows);
  EXPECT_LT(stretch, 0.02) << stretch;

  PsLinkEvidence e;
  e.recv_share = 0.5, e.recv_load = 1.0, e.recv_stretch = stretch;
  const ReplayModel m = SyncModel(8);
  for (const int k : {2, 4}) {
    int ps = -2;
    double share = -1;
    const double cap = RecvLinkCap(m, {e}, Fix{}, 8 * k, 8, 100.0, 100.0, true, &ps, &share);
    // Unbounded, or at least 95% of linear scaling (a stretch of 0.02 allows no less).
    EXPECT_TRUE(std::isinf(cap) || cap >= 0.95 * 100.0 * k) << k << "x: " << cap;
  }
}

// The same tensor's receives stretched by sharing (a lone one 250 us, the rest 2-3x as long) do
// bound the convoy: the per-tensor comparison keeps the evidence the bound is for.
TEST(OutlookLinks, OneTensorsStretchedReceivesStillBound) {
  Rows rows;
  rows.emplace_back("dense/kernel/_Recv", 250'000);
  for (int i = 0; i < 7; ++i) rows.emplace_back("dense/kernel/_Recv", 600'000 + 20'000 * i);
  rows.emplace_back("dense/bias/_Recv", 5'000);  // under kRecvStretchMinRows: left out
  const double stretch = RecvStretch(rows);
  EXPECT_NEAR(stretch, 1 - 250.0 / 660.0, 0.01);

  PsLinkEvidence e;
  e.recv_share = 0.5, e.recv_load = 1.0, e.recv_stretch = stretch;
  int ps = -2;
  double share = -1;
  const double cap = RecvLinkCap(SyncModel(8), {e}, Fix{}, 32, 8, 100.0, 100.0, true, &ps, &share);
  // X / X0 = k / (1 + 2 r (k - 1)), r = 0.5 x stretch, k = 4.
  EXPECT_NEAR(cap, 100.0 * 4 / (1 + 2 * 0.5 * stretch * 3), 1e-6);
  EXPECT_EQ(ps, 0);
  // A PS whose receives carry less than one worker's sends at that count (0.2 x 4 the workers)
  // does not bound (kRecvLoadMin).
  e.recv_load = 0.2;
  EXPECT_TRUE(
      std::isinf(RecvLinkCap(SyncModel(8), {e}, Fix{}, 32, 8, 100.0, 100.0, true, &ps, &share)));
}

// The receive-load gate is read at the worker count asked for: a PS link carrying 0.75 of a
// worker's sends at 6 workers carries 1.5 at 12 and 3 at 24, while each worker's own link stays
// as it was (gen3 report3 1119: 8 PS of 6 asynchronous workers, each PS receiving 32% of the
// capture; left out at every count, the outlook read +31% and +140% at 2x and 4x).
TEST(OutlookLinks, ReceiveLoadGateIsReadAtTheWorkersAsked) {
  ReplayModel m;
  m.ps.resize(1);
  m.workers.resize(6);
  PsLinkEvidence e;
  e.recv_share = 0.324, e.recv_load = 0.75, e.recv_stretch = 0.44;
  int ps = -2;
  double share = -1;
  // At the captured count the link carries less than a worker's: no bound.
  EXPECT_TRUE(std::isinf(RecvLinkCap(m, {e}, Fix{}, 6, 6, 100.0, 100.0, false, &ps, &share)));
  for (const int w : {12, 24}) {
    const double cap = RecvLinkCap(m, {e}, Fix{}, w, 6, 100.0, 100.0, false, &ps, &share);
    // Asynchronous: the link stops carrying more at kRecvLinkAsyncMax of the time.
    EXPECT_NEAR(cap, 100.0 * kRecvLinkAsyncMax / 0.324, 1e-6) << w;
    EXPECT_EQ(ps, 0);
  }
}

// A PS link whose receives were throttled at the workers' ends (kWorkerEndMaxConcurrency): gen2
// report7 1622's evidence, 16 PS of 21 asynchronous workers, each PS receiving 59% of the capture
// with 2.4 receives at once, stretched 0.99, every PS carrying a like share (recv_load 1.4, a
// worker's fan-out 16: 21 workers over the busiest PS's 21 / 16). Its link carried 2.4 / 16 of its
// bandwidth while receiving: the 60% share bound it at 1.02x the captured throughput (the simulated
// job: 1.91x and 2.70x at 2x and 4x); read as its own link's share it bounds at 0.6 / (0.59 x 2.4 /
// 16) = 6.8x. A PS with as many receives at once as the fan-out, or unstretched ones (gen3, whose
// workers have no link), keeps the captured share.
TEST(OutlookLinks, ReceivesThrottledAtTheWorkersEndsLoadThePsLinkLess) {
  ReplayModel m;
  m.ps.resize(16);
  m.workers.resize(21);
  m.link_bytes_per_ns = 0.45;  // the replay runs the links (1622: 3.6 Gb/s estimated): no convoy
  auto evidence = [](double concurrency, double stretch) {
    std::vector<PsLinkEvidence> ev(16);
    for (PsLinkEvidence& e : ev) {
      e.recv_share = 0.59, e.recv_load = 21.0 / 16, e.recv_stretch = stretch;
      e.recv_concurrency = concurrency;
    }
    return ev;
  };
  const double fan_out = 16;  // 21 workers over the busiest PS's 21 / 16
  int ps = -2;
  double share = -1;
  for (const int w : {42, 84}) {
    const double cap =
        RecvLinkCap(m, evidence(2.4, 0.99), Fix{}, w, 21, 100.0, 100.0, false, &ps, &share);
    EXPECT_NEAR(cap, 100.0 * kRecvLinkAsyncMax / (0.59 * 2.4 / fan_out), 1e-6) << w;
  }
  EXPECT_NEAR(RecvLinkCap(m, evidence(12.0, 0.99), Fix{}, 42, 21, 100.0, 100.0, false, &ps, &share),
              100.0 * kRecvLinkAsyncMax / 0.59, 1e-6);
  EXPECT_NEAR(RecvLinkCap(m, evidence(2.4, 0.13), Fix{}, 42, 21, 100.0, 100.0, false, &ps, &share),
              100.0 * kRecvLinkAsyncMax / 0.59, 1e-6);
  // A synchronous capture gone asynchronous: its stretch is the barrier's burst, the share kept.
  // (within 5%: the synchronous capture's share is read apart; the link's own share gave 6.8x)
  m.sync = true;
  EXPECT_NEAR(RecvLinkCap(m, evidence(2.4, 0.99), Fix{}, 42, 21, 100.0, 100.0, false, &ps, &share),
              100.0 * kRecvLinkAsyncMax / 0.59, 0.05 * 100.0 * kRecvLinkAsyncMax / 0.59);
}

// Weighted by time: a rarely received small tensor's stretch barely moves the PS's.
TEST(OutlookLinks, StretchIsWeightedByEachTensorsReceiveTime) {
  Rows rows;
  for (int i = 0; i < 8; ++i) rows.emplace_back("big/_Recv", 1'000'000);  // unshared
  for (int i = 0; i < 4; ++i) rows.emplace_back("small/_Recv", i == 0 ? 10'000 : 40'000);
  // small: stretch 0.75 on 130 us of 8130 us.
  EXPECT_NEAR(RecvStretch(rows), 0.75 * 130.0 / 8130.0, 1e-9);
  EXPECT_EQ(RecvStretch({}), 0);
}

// The whole-table withholding follows the gather-on-worker rule's findings (its detection and
// its rule-set thresholds), not a detection of its own.
TEST(OutlookLinks, WholeTableReadIsTheGatherOnWorkerFinding) {
  std::vector<Finding> findings(2);
  findings[0].rule_id = "hot-ps";
  findings[0].ops = {"emb/part_0"};
  EXPECT_EQ(WholeTableRead(findings), "");
  findings[1].rule_id = kGatherOnWorkerRule;
  findings[1].ops = {"emb0/embedding_weights", "emb0/embedding_weights/part_1"};
  EXPECT_EQ(WholeTableRead(findings), "emb0/embedding_weights");
  EXPECT_EQ(WholeTableRead({}), "");
}

}  // namespace
}  // namespace tfdiag
