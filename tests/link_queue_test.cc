// The PS links' queueing at a fix's load (analyzers/link_queue.h): the step it solves against
// the M/G/1 processor-sharing mean it states, checked here by a discrete-event simulation of one
// processor-sharing link written apart from it, and the saturation bound.
#include "analyzers/link_queue.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace tfdiag {
namespace {

// The mean time (ns) of transfers of `t_ns` each (on an idle link) arriving as a Poisson stream
// at `per_ns` per ns on one link shared equally by those in flight, simulated event by event.
double SimulatedSharedLinkMean(double t_ns, double per_ns, int transfers, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> gap(per_ns);
  std::vector<double> left, started;  // work left (ns at full rate), arrival time
  double now = 0, next = gap(rng), total = 0;
  int arrived = 0, done = 0;
  while (done < transfers) {
    const double n = double(left.size());
    // The next completion at the shared rate, if any.
    double first = 1e300;
    size_t at = 0;
    for (size_t i = 0; i < left.size(); ++i) {
      if (left[i] < first) first = left[i], at = i;
    }
    const double t_done = left.empty() ? 1e300 : now + first * n;
    if (arrived < transfers && next < t_done) {
      for (double& l : left) l -= (next - now) / std::max(1.0, n);
      now = next;
      left.push_back(t_ns);
      started.push_back(now);
      ++arrived;
      next = now + gap(rng);
    } else {
      for (double& l : left) l -= first;
      now = t_done;
      total += now - started[at];
      left.erase(left.begin() + long(at));
      started.erase(started.begin() + long(at));
      ++done;
    }
  }
  return total / transfers;
}

TEST(LinkQueue, MeanMatchesASimulatedSharedLink) {
  // One PS answering 20 workers 1 MB per worker step over a 10 Gb/s link: 0.8 ms a transfer.
  const double bytes = 1e6, rate = 1.25e9, t_ns = bytes / rate * 1e9;
  const int workers = 20;
  // The measured step 40 ms (load 0.4); the replay's step after the fix 25 ms.
  const LinkQueueStep q = QueueOnLinks({{bytes, 0, true}}, workers, rate, 40e6, 25e6);
  ASSERT_FALSE(q.saturated);
  EXPECT_NEAR(q.rho_now, workers * t_ns / 40e6, 1e-9);
  EXPECT_NEAR(q.rho, workers * t_ns / q.step_ns, 1e-9);
  ASSERT_GT(q.step_ns, 25e6);
  // The step it solves is the replay's plus what each transfer waits longer on the link at the
  // new load, each mean taken from the simulated link at that load.
  const double at_now = SimulatedSharedLinkMean(t_ns, workers / 40e6, 200000, 1);
  const double at_new = SimulatedSharedLinkMean(t_ns, workers / q.step_ns, 200000, 2);
  EXPECT_NEAR(q.step_ns, 25e6 + (at_new - at_now), 0.05 * (q.step_ns - 25e6))
      << "simulated means " << at_now << " and " << at_new << " ns";
}

TEST(LinkQueue, SaturatedWhereTheLinkCannotCarryTheShorterStep) {
  // 20 workers x 1 MB on 10 Gb/s is 16 ms of link time per worker step: a 17 ms step needs the
  // link 94% of the time.
  const LinkQueueStep q = QueueOnLinks({{1e6, 3, false}}, 20, 1.25e9, 40e6, 10e6);
  EXPECT_TRUE(q.saturated);
  EXPECT_EQ(q.ps, 3);
  EXPECT_FALSE(q.out);
  EXPECT_GE(q.step_ns, 16e6 / kMaxLinkLoad * 0.999);
}

TEST(LinkQueue, NothingChangesWithoutLoadOrASpeedUp) {
  EXPECT_EQ(QueueOnLinks({}, 20, 1.25e9, 40e6, 25e6).step_ns, 25e6);
  EXPECT_EQ(QueueOnLinks({{1e6, 0, true}}, 20, 1.25e9, 40e6, 45e6).step_ns, 45e6);
  // A lightly loaded link (0.1% busy) adds almost nothing.
  const LinkQueueStep q = QueueOnLinks({{1e3, 0, true}}, 20, 1.25e9, 40e6, 25e6);
  EXPECT_LT(q.step_ns, 25e6 * 1.001);
  EXPECT_FALSE(q.saturated);
}

}  // namespace
}  // namespace tfdiag
