// The asynchronous receive links of the scaling outlook (analyzers/outlook_links.h): workers in a
// convoy (every PS's receives stretched alike) pull and push in bursts k times as long at k times
// the workers, as under SyncReplicasOptimizer. On gen3 report4 (1300-1331, spent), before: 1306
// (1 PS, 2 workers, the PS receiving 27% of the capture, its receives 84% stretched) +54% and +31%
// at 2x and 4x the workers, 1312 +31% and +17%, 1314 +42% and +32%. After: 1306 +7% and -0%, 1312
// +2% and -5%, 1314 +8% and +8% (against gen3sim itself: tests/outlook_gen3_test.cc).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "analyzers/outlook_links.h"
#include "analyzers/outlook_nic_worst.h"

namespace tfdiag {
namespace {

// One PS, `workers` asynchronous workers, as RecvLinkCap reads a model.
ReplayModel AsyncModel(int workers, int ps) {
  ReplayModel m;
  m.ps.resize(size_t(ps));
  m.workers.resize(size_t(workers));
  return m;
}

// gen3 report4 1306's evidence: one PS of two workers, receiving 27% of the capture, its receives
// 84% stretched. The convoy: X / X0 = k / (1 + 2 r (k - 1)), r = 0.27 x 0.84; the 60% share
// (the old bound, 2.2x) let the job scale past what the simulated one did (1.29x, 1.70x).
TEST(OutlookConvoy, StretchedReceivesOfEveryPsBoundAnAsynchronousJobAsAConvoy) {
  PsLinkEvidence e;
  e.recv_share = 0.27, e.recv_load = 2.0, e.recv_stretch = 0.84;
  const ReplayModel m = AsyncModel(2, 1);
  for (const int k : {2, 4}) {
    int ps = -2;
    double share = -1;
    const double cap = RecvLinkCap(m, {e}, Fix{}, 2 * k, 2, 100.0, 100.0, false, &ps, &share);
    EXPECT_NEAR(cap, 100.0 * k / (1 + 2 * 0.27 * 0.84 * (k - 1)), 1e-6) << k << "x";
    EXPECT_EQ(ps, 0);
  }
  // Where the replay runs the links itself (sizes and a bandwidth), it shares them: no convoy,
  // the 60% share as before.
  int ps = -2;
  double share = -1;
  bool convoy = true;
  ReplayModel linked = m;
  linked.link_bytes_per_ns = 1.25;  // 10 Gb/s links
  const double replayed =
      RecvLinkCap(linked, {e}, Fix{}, 8, 2, 100.0, 100.0, false, &ps, &share, &convoy);
  EXPECT_NEAR(replayed, 100.0 * kRecvLinkAsyncMax / 0.27, 1e-6);
  EXPECT_FALSE(convoy);
  RecvLinkCap(m, {e}, Fix{}, 8, 2, 100.0, 100.0, false, &ps, &share, &convoy);
  EXPECT_TRUE(convoy);
}

// The convoy is the workers', so every PS shows it: a job where one PS's receives stretch and the
// others' do not (gen2 report4 1022: 0.97 on two PS of six, 0.67 or none on the rest; the
// simulated job scales 3.8x at 4x) is no convoy, and a small stretched share (under
// kConvoyMinShare) is not read as one either.
TEST(OutlookConvoy, NoConvoyWithoutEveryPsStretchedOrWithASmallStretchedShare) {
  std::vector<PsLinkEvidence> ev(3);
  ev[0].recv_share = 0.29, ev[0].recv_load = 2.3, ev[0].recv_stretch = 0.97;
  ev[1].recv_share = 0.26, ev[1].recv_load = 1.7, ev[1].recv_stretch = 0.0;
  ev[2].recv_share = 0.26, ev[2].recv_load = 1.7, ev[2].recv_stretch = 0.67;
  EXPECT_LT(ConvoyStretch(ev), kConvoyMinStretch);
  const ReplayModel m = AsyncModel(11, 3);
  int ps = -2;
  double share = -1;
  bool convoy = true;
  const double cap = RecvLinkCap(m, ev, Fix{}, 44, 11, 100.0, 100.0, false, &ps, &share, &convoy);
  EXPECT_FALSE(convoy);
  EXPECT_NEAR(cap, 100.0 * kRecvLinkAsyncMax / 0.29, 1e-6);

  PsLinkEvidence small;
  small.recv_share = 0.12, small.recv_load = 3.6, small.recv_stretch = 0.9;
  EXPECT_GE(ConvoyStretch({small}), kConvoyMinStretch);
  RecvLinkCap(AsyncModel(6, 1), {small}, Fix{}, 24, 6, 100.0, 100.0, false, &ps, &share, &convoy);
  EXPECT_FALSE(convoy);
}

// One dominant link (kDominantLinkLoad): gen3 report6 1708's evidence, ps:0 of 16 PS carrying
// 30.15 of 48 workers' receive time (63%), receiving 45.5% of the capture, 78% stretched; the
// other PS 1.19 each, unstretched, so the job's least stretch is no convoy's. The workers line up
// on ps:0's link: X / X0 = k / (1 + 2 r (k - 1)) with its whole share r (the simulated job: 1.00x
// and 1.10x at 2x and 4x; the 60% share gave 1.32x at both, +35% and +24%).
TEST(OutlookConvoy, OneDominantStretchedLinkBoundsAsAConvoy) {
  std::vector<PsLinkEvidence> ev(16);
  ev[0].recv_share = 0.455, ev[0].recv_load = 30.15, ev[0].recv_stretch = 0.78;
  for (size_t p = 1; p < ev.size(); ++p) {
    ev[p].recv_share = 0.207, ev[p].recv_load = 1.19, ev[p].recv_stretch = 0.003;
  }
  EXPECT_LT(ConvoyStretch(ev), kConvoyMinStretch);
  const ReplayModel m = AsyncModel(48, 16);
  for (const int k : {2, 4}) {
    int ps = -2;
    double share = -1;
    bool convoy = false;
    const double cap =
        RecvLinkCap(m, ev, Fix{}, 48 * k, 48, 100.0, 100.0, false, &ps, &share, &convoy);
    EXPECT_NEAR(cap, 100.0 * k / (1 + 2 * 0.455 * (k - 1)), 1e-6) << k;
    EXPECT_TRUE(convoy) << k;
    EXPECT_EQ(ps, 0);
    EXPECT_NEAR(share, 0.455, 1e-9);
  }
  // Where the replay runs the links itself, it shares them: no convoy of this kind either.
  ReplayModel linked = m;
  linked.link_bytes_per_ns = 1.25;
  int ps = -2;
  double share = -1;
  bool convoy = true;
  RecvLinkCap(linked, ev, Fix{}, 96, 48, 100.0, 100.0, false, &ps, &share, &convoy);
  EXPECT_FALSE(convoy);
}

// Not one dominant link: the busiest PS carrying half the receive time (gen3 report6 1714: 8.3
// of 16 workers', the simulated job 1.19x at 2x where the convoy would read 1.0x), or a link
// receiving little (report5 1513: 18% of the capture, 69% of the receive time; 1.97x at 2x, the
// convoy 1.47x), or its receives unstretched: the 60% share bounds as before.
TEST(OutlookConvoy, NoDominantLinkConvoyWithoutMostOfTheLoadAShareAndAStretch) {
  const ReplayModel m = AsyncModel(16, 4);
  auto check = [&](double share0, double load0, double stretch0) {
    std::vector<PsLinkEvidence> ev(4);
    ev[0].recv_share = share0, ev[0].recv_load = load0, ev[0].recv_stretch = stretch0;
    for (size_t p = 1; p < ev.size(); ++p) {
      ev[p].recv_share = 0.1, ev[p].recv_load = (16 - load0) / 3, ev[p].recv_stretch = 0.0;
    }
    int ps = -2;
    double share = -1;
    bool convoy = true;
    const double cap = RecvLinkCap(m, ev, Fix{}, 32, 16, 100.0, 100.0, false, &ps, &share, &convoy);
    EXPECT_FALSE(convoy) << share0 << " " << load0 << " " << stretch0;
    EXPECT_NEAR(cap, 100.0 * kRecvLinkAsyncMax / share0, 1e-6);
  };
  check(0.51, 8.3, 0.72);   // half the load
  check(0.18, 11.0, 0.87);  // a small share
  check(0.45, 12.0, 0.2);   // no stretch
}

// Half the PS stretched is no convoy: with two PS the stretched one alone read 0.97 as the job's
// stretch (an upper median), a convoy's bound of 146 steps/s at 4x where the 60% share gives 200.
TEST(OutlookConvoy, OnePsOfTwoStretchedIsNoConvoy) {
  std::vector<PsLinkEvidence> ev(2);
  ev[0].recv_share = 0.3, ev[0].recv_load = 2.0, ev[0].recv_stretch = 0.97;
  ev[1].recv_share = 0.3, ev[1].recv_load = 2.0, ev[1].recv_stretch = 0.0;
  EXPECT_LT(ConvoyStretch(ev), kConvoyMinStretch);
  int ps = -2;
  double share = -1;
  bool convoy = true;
  const double cap =
      RecvLinkCap(AsyncModel(4, 2), ev, Fix{}, 16, 4, 100.0, 100.0, false, &ps, &share, &convoy);
  EXPECT_FALSE(convoy);
  EXPECT_NEAR(cap, 100.0 * kRecvLinkAsyncMax / 0.3, 1e-6);
}

// A synchronous capture gone asynchronous (sync-replicas' fix) where the replay does not run the
// links: its stretch is the barrier's burst, not an asynchronous convoy, and its share is already
// the stretched part, so the 60% share bounds it (the convoy bound read share x stretch^2 there).
TEST(OutlookConvoy, ASynchronousCaptureGoneAsynchronousIsNoConvoy) {
  PsLinkEvidence e;
  e.recv_share = 0.5, e.recv_load = 2.0, e.recv_stretch = 0.9;
  ReplayModel m = AsyncModel(4, 1);
  m.sync = true;
  int ps = -2;
  double share = -1;
  bool convoy = true;
  const double cap = RecvLinkCap(m, {e}, Fix{}, 16, 4, 100.0, 100.0, false, &ps, &share, &convoy);
  EXPECT_FALSE(convoy);
  EXPECT_NEAR(cap, 100.0 * kRecvLinkAsyncMax / (0.5 * 0.9), 1e-6);
}

// A convoy of many workers at once (RecvLinkCap, kManyWorkersAtOnce; session 32) and the NIC's
// least bandwidth from the PS receives' busy time (ReceiveBusyFloor). Each failed on the code
// before them: the convoy bound was off below kConvoyMinStretch whatever the workers at once (gen3
// report9 2328: +19%/+29% at 2x/4x), and a NIC estimate under the carried rate was raised to that
// rate only (gen2 report10 2213: a 25 Gb/s link read 0.068 Gb/s, -50%/-75%).
// 2328's shape: 12 PS of 16 workers, each receiving 45% of the capture with 7.6 receives in
// flight at once, stretched 0.63 (under kConvoyMinStretch's 0.8, so no job-wide convoy); at 200
// steps/s it received 330 rows a second, 1.65 per worker step: 4.6 workers' pushes at once, over
// a quarter of the 16. At 2x and 4x the workers its convoy holds the job at k / (1 + 2 r (k - 1))
// of the captured throughput (r = 0.445), where the 60% share let it reach 1.35x.
constexpr double kRows2328 = 7.64 * 200 / 4.6;  // receive rows per second: 4.6 workers at once

std::vector<PsLinkEvidence> Links2328() {
  std::vector<PsLinkEvidence> ev(12);
  for (PsLinkEvidence& e : ev) {
    e.recv_share = 0.445, e.recv_load = 1.33, e.recv_stretch = 0.63;
    e.recv_concurrency = 7.64, e.recv_rows_per_s = kRows2328;
  }
  return ev;
}

// RecvLinkCap at `k` times 16 workers (captured 200 steps/s), `*convoy` whether the convoy bound.
double Cap2328(const ReplayModel& m, const std::vector<PsLinkEvidence>& ev, int k, bool* convoy,
               const Fix& fix = Fix{}, bool sync = false) {
  int ps = -2;
  double share = -1;
  *convoy = true;
  return RecvLinkCap(m, ev, fix, 16 * k, 16, 200.0, 200.0, sync, &ps, &share, convoy);
}

TEST(OutlookConvoy, ManyWorkersAtOnceBoundAsAConvoy) {
  const std::vector<PsLinkEvidence> ev = Links2328();
  EXPECT_NEAR(RecvWorkersAtOnce(ev[0], 200.0), 4.6, 1e-9);
  const ReplayModel m = AsyncModel(16, 12);
  for (const int k : {2, 4}) {
    bool convoy = false;
    EXPECT_NEAR(Cap2328(m, ev, k, &convoy), 200.0 * k / (1 + 2 * 0.445 * (k - 1)), 1e-6) << k;
    EXPECT_TRUE(convoy);
  }
}

// Many receives at once that are one worker's tensors (gen3 report9 2320: 10 at once on ps:0,
// each push 8 tensors there, 1.2 of 16 workers at once; it scales past the convoy, 1.8x at 2x as
// the 60% share says) are no convoy: the gate counted receives before (review of o66, item 1).
TEST(OutlookConvoy, ManyTensorsOfFewWorkersAtOnceKeepTheShareBound) {
  std::vector<PsLinkEvidence> ev = Links2328();
  for (PsLinkEvidence& e : ev) e.recv_rows_per_s = 7.64 * 200 / 1.2;
  bool convoy = true;
  EXPECT_NEAR(Cap2328(AsyncModel(16, 12), ev, 2, &convoy), 200.0 * kRecvLinkAsyncMax / 0.445, 1e-6);
  EXPECT_FALSE(convoy);
}

// Each of the gate's other conditions, one at a time, turns the convoy off: receives stretched
// under kDominantLinkMinStretch, a share under kDominantLinkMinShare or at kManyAtOnceMaxShare, a
// synchronous capture (its stretch is the barrier's burst), links the replay runs itself, and a
// fix that moves work between PS (the gates read the captured shares).
TEST(OutlookConvoy, ManyWorkersAtOnceNeedsEveryCondition) {
  const ReplayModel m = AsyncModel(16, 12);
  auto each = [](double share, double stretch) {
    std::vector<PsLinkEvidence> ev = Links2328();
    for (PsLinkEvidence& e : ev) e.recv_share = share, e.recv_stretch = stretch;
    return ev;
  };
  bool convoy = true;
  EXPECT_NEAR(Cap2328(m, each(0.445, 0.45), 2, &convoy), 200.0 * kRecvLinkAsyncMax / 0.445, 1e-6);
  EXPECT_FALSE(convoy) << "stretch 0.45";
  EXPECT_NEAR(Cap2328(m, each(0.25, 0.63), 2, &convoy), 200.0 * kRecvLinkAsyncMax / 0.25, 1e-6);
  EXPECT_FALSE(convoy) << "share 0.25";
  EXPECT_NEAR(Cap2328(m, each(0.60, 0.63), 2, &convoy), 200.0, 1e-6);
  EXPECT_FALSE(convoy) << "share 0.60: the 60% share holds it as captured";
  ReplayModel linked = m;
  linked.link_bytes_per_ns = 1.25;  // 10 Gb/s links the replay runs
  EXPECT_NEAR(Cap2328(linked, Links2328(), 2, &convoy), 200.0 * kRecvLinkAsyncMax / 0.445, 1e-6);
  EXPECT_FALSE(convoy) << "links replayed";
  ReplayModel sync = m;
  sync.sync = true;  // a synchronous capture gone asynchronous
  Fix to_async;
  to_async.to_async = true;
  Cap2328(sync, Links2328(), 2, &convoy, to_async, false);
  EXPECT_FALSE(convoy) << "synchronous capture";
}

// The bound falls as the share grows, through the ceiling (review of o66 item 6: a ceiling at
// 0.5 let a link at 0.50 reach 1.2x at 2x where one at 0.49 stopped at 1.01x): from 0.5 the
// convoy holds the link at the captured throughput, as the 60% share does from 0.6.
TEST(OutlookConvoy, ManyWorkersAtOnceBoundFallsWithTheShare) {
  const ReplayModel m = AsyncModel(16, 12);
  for (const int k : {2, 4}) {
    double last = INFINITY;
    for (double share = 0.30; share <= 0.70; share += 0.01) {
      std::vector<PsLinkEvidence> ev = Links2328();
      for (PsLinkEvidence& e : ev) e.recv_share = share;
      bool convoy = false;
      const double cap = Cap2328(m, ev, k, &convoy);
      EXPECT_LE(cap, last + 1e-9) << "share " << share << ", " << k << "x";
      EXPECT_GE(cap, 200.0 - 1e-9) << "share " << share << ", " << k << "x";
      last = cap;
    }
  }
  bool convoy = false;
  std::vector<PsLinkEvidence> ev = Links2328();
  for (PsLinkEvidence& e : ev) e.recv_share = 0.50;
  EXPECT_NEAR(Cap2328(m, ev, 2, &convoy), 200.0, 1e-6);
  EXPECT_TRUE(convoy) << "share 0.50";
}

// After a fix that moves work between PS the gate reads the captured links: the convoy holds
// where every receiving PS showed it (the workers arrive together, so at every link after the
// move: 2328's 12 PS spread over 24), not on one busy link whose work the fix moved away (review of
// o66, item 3: the bound then read the emptied link's share after the fix).
TEST(OutlookConvoy, ManyWorkersAtOnceAfterAFixThatMovesWork) {
  ReplayModel m = AsyncModel(16, 12);
  for (size_t p = 0; p < m.ps.size(); ++p) m.ps[p].task = uint32_t(p + 1);
  bool convoy = false;
  Fix more_ps;
  more_ps.ps_count = 24;
  Cap2328(m, Links2328(), 2, &convoy, more_ps);
  EXPECT_TRUE(convoy) << "every PS in the convoy";
  // ps:0 alone in it (the others receive a quarter of the capture): bound as captured, not
  // after its work is partitioned over the PS.
  std::vector<PsLinkEvidence> ev = Links2328();
  for (size_t p = 1; p < ev.size(); ++p) ev[p].recv_share = 0.25;
  Cap2328(m, ev, 2, &convoy);
  EXPECT_TRUE(convoy) << "as captured";
  Fix part;
  part.partition = {{1u, 0.9}};
  Cap2328(m, ev, 2, &convoy, part);
  EXPECT_FALSE(convoy) << "ps:0's work partitioned";
}

// 2213's links: 61 KB gradients per worker step on ps:0 at 140 steps/s, in flight 0.3% of the
// capture: moved at 61e3 x 140 / 0.003 = 2.8 GB/s (23 Gb/s; the links are 25) while in flight.
// The least over the PS that receive counts; a PS without receives or sizes gives none.
TEST(OutlookConvoy, ReceiveBusyFloorIsTheLeastRateWhileInFlight) {
  NicDemand d;
  d.known = true;
  d.in = {61e3, 27e3, 0};
  d.out = {61e3, 27e3, 0};
  std::vector<PsLinkEvidence> ev(3);
  ev[0].recv_share = 0.003;
  ev[1].recv_share = 0.0008;  // 27e3 x 140 / 0.0008 = 4.7 GB/s: not the least
  EXPECT_NEAR(ReceiveBusyFloor(d, ev, 140.0), 61e3 * 140 / 0.003, 1);
  d.known = false;
  EXPECT_EQ(ReceiveBusyFloor(d, ev, 140.0), 0);
  d.known = true;
  for (PsLinkEvidence& e : ev) e.recv_share = 0;  // receives counted as the PS's work
  EXPECT_EQ(ReceiveBusyFloor(d, ev, 140.0), 0);
}

}  // namespace
}  // namespace tfdiag
