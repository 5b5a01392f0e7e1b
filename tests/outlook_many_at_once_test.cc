// The scaling outlook's link readings of session 32 (issue 44 item 3): a convoy of many
// receives at once (RecvLinkCap, kManyAtOnceMin) and the NIC's least bandwidth from the PS
// receives' busy time (ReceiveBusyFloor). Each failed on the code before them: the convoy bound
// was off below kConvoyMinStretch whatever the concurrency (gen3 report9 2320: +50%/+44% at
// 2x/4x), and a NIC estimate under the carried rate was raised to that rate only (gen2 report10
// 2213: a 25 Gb/s link read 0.068 Gb/s, -50%/-75%).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "analyzers/outlook_links.h"
#include "analyzers/outlook_nic_worst.h"

namespace tfdiag {
namespace {

// An asynchronous model of `ps` PS and `workers` workers, as RecvLinkCap reads it.
ReplayModel AsyncModel(int ps, int workers) {
  ReplayModel m;
  m.ps.resize(size_t(ps));
  m.workers.resize(size_t(workers));
  return m;
}

// 2320's shape: 4 PS of 16 workers, ps:0 receiving a third of the capture with 10 receives in
// flight at once, stretched 0.73 (under kConvoyMinStretch's 0.8, so no job-wide convoy), the
// others 0.23. At 2x and 4x the workers its convoy holds the job at k / (1 + 2 r (k - 1)) of the
// captured throughput (r = 0.33: 1.21x and 1.34x; simulated 1.23x and 1.29x), where the 60%
// share let it reach 1.82x.
TEST(OutlookManyAtOnce, ManyReceivesAtOnceBoundAsAConvoy) {
  std::vector<PsLinkEvidence> ev(4);
  for (size_t p = 0; p < ev.size(); ++p) {
    ev[p].recv_share = p == 0 ? 0.33 : 0.23;
    ev[p].recv_load = p == 0 ? 4.8 : 3.7;
    ev[p].recv_stretch = 0.73;
    ev[p].recv_concurrency = p == 0 ? 10.0 : 11.1;
  }
  const ReplayModel m = AsyncModel(4, 16);
  for (const int k : {2, 4}) {
    int ps = -2;
    double share = -1;
    bool convoy = false;
    const double cap =
        RecvLinkCap(m, ev, Fix{}, 16 * k, 16, 200.0, 200.0, false, &ps, &share, &convoy);
    EXPECT_NEAR(cap, 200.0 * k / (1 + 2 * 0.33 * (k - 1)), 1e-6) << k;
    EXPECT_EQ(ps, 0);
    EXPECT_TRUE(convoy);
  }
}

// The same links with receives mostly alone (2 at once: gen3 report8 2104, report9 2321 scale
// past the convoy) keep the 60% share: 0.6 / 0.33 of the captured throughput.
TEST(OutlookManyAtOnce, FewReceivesAtOnceKeepTheShareBound) {
  // 4 PS loaded alike (none dominant: kDominantLinkLoad), 2 receives at once on each.
  std::vector<PsLinkEvidence> ev(4);
  for (PsLinkEvidence& e : ev) {
    e.recv_share = 0.33, e.recv_load = 4, e.recv_stretch = 0.73, e.recv_concurrency = 2.0;
  }
  const ReplayModel m = AsyncModel(4, 16);
  int ps = -2;
  double share = -1;
  bool convoy = true;
  const double cap = RecvLinkCap(m, ev, Fix{}, 32, 16, 200.0, 200.0, false, &ps, &share, &convoy);
  EXPECT_NEAR(cap, 200.0 * kRecvLinkAsyncMax / 0.33, 1e-6);
  EXPECT_FALSE(convoy);
  // And a link receiving half the capture or more is not read as a convoy (1 / (2 x share)
  // would put it under the captured throughput): its share bounds it as captured.
  for (PsLinkEvidence& e : ev) e.recv_share = 0.55, e.recv_concurrency = 12.0;
  const double busy = RecvLinkCap(m, ev, Fix{}, 32, 16, 200.0, 200.0, false, &ps, &share, &convoy);
  EXPECT_NEAR(busy, 200.0 * 0.6 / 0.55, 1e-6);
  EXPECT_FALSE(convoy);
}

// 2213's links: 61 KB gradients per worker step on ps:0 at 140 steps/s, in flight 0.3% of the
// capture: moved at 61e3 x 140 / 0.003 = 2.8 GB/s (23 Gb/s; the links are 25) while in flight.
// The least over the PS that receive counts; a PS without receives or sizes gives none.
TEST(OutlookManyAtOnce, ReceiveBusyFloorIsTheLeastRateWhileInFlight) {
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
