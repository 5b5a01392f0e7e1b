// SharedLink (analyzers/replay_link.h): a link shared equally by the transfers crossing it,
// checked against completion times worked out by hand.
#include "analyzers/replay_link.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace tfdiag {
namespace {

// Runs `link` to idle; the completion time of each id (indexes `at`).
std::vector<double> Drain(SharedLink* link, size_t n) {
  std::vector<double> at(n, -1);
  std::vector<uint64_t> done;
  for (double t = link->NextDone(); std::isfinite(t); t = link->NextDone()) {
    done.clear();
    link->PopDone(t, &done);
    for (uint64_t id : done) at[id] = t;
  }
  return at;
}

TEST(SharedLink, OneTransferTakesItsBytesOverTheBandwidth) {
  SharedLink l(2.0);  // bytes/ns
  EXPECT_TRUE(std::isinf(l.NextDone()));
  l.Add(10, 100, 0);
  EXPECT_DOUBLE_EQ(Drain(&l, 1)[0], 60);
}

// 100 bytes at t=0 and 100 at t=50 on 1 byte/ns: the first runs alone for 50 ns (50 bytes),
// then both at 0.5 byte/ns: the first's last 50 bytes end at 150; the second has 50 left then
// and ends alone at 200.
TEST(SharedLink, TransfersInFlightShareTheBandwidthEqually) {
  SharedLink l(1.0);
  l.Add(0, 100, 0);
  std::vector<uint64_t> done;
  l.PopDone(50, &done);  // advance; nothing done yet
  EXPECT_TRUE(done.empty());
  l.Add(50, 100, 1);
  const std::vector<double> at = Drain(&l, 2);
  EXPECT_NEAR(at[0], 150, 1e-9);
  EXPECT_NEAR(at[1], 200, 1e-9);
}

// n equal transfers started together all end at n x the time of one: the link carries its
// bandwidth whatever the count (what makes workers that pull together finish together).
TEST(SharedLink, EqualTransfersStartedTogetherEndTogether) {
  SharedLink l(4.0);
  for (uint64_t i = 0; i < 8; ++i) l.Add(0, 40, i);
  for (double t : Drain(&l, 8)) EXPECT_NEAR(t, 80, 1e-9);
}

// Far from time 0 a tiny transfer's end is too close for the clock to move in floating point:
// it must still end (the replay of a RunMetadata capture once looped here for ever).
TEST(SharedLink, ATinyTransferLateInTheRunStillEnds) {
  SharedLink l(1e3);
  l.Add(1e12, 100, 0);
  l.Add(1e12, 1e-3, 1);  // 2e-6 ns on its own: under the clock's step at 1e12 ns
  const std::vector<double> at = Drain(&l, 2);
  EXPECT_GE(at[1], 1e12);
  EXPECT_GE(at[0], at[1]);
}

}  // namespace
}  // namespace tfdiag
