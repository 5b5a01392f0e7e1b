// The latency taken off each PS receive op before its link's busy time is read
// (analyzers/replay_nic_bytes.h ReceiveLatency): the shortest receive op of any PS, at most
// kMaxReceiveLatencyNs. Where every tensor is large the shortest receive is a transfer, not a
// latency: on a job of the third independent generator (bench/twins/gen3, written apart from
// tfdiag), gen3 report14 3326 (spent), 7 PS for 6 workers of a dense model on 1 Gb/s PS NICs
// (13 MB parts, its shortest receive 52 ms), taking it off every receive left the links under
// half busy, no rate was read, and ps-worker-ratio said nothing while 14 PS buy 49% of the step
// and 21 buy 65%. A few seconds (the simulation).
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "analyzers/analysis.h"
#include "analyzers/nic_rate.h"
#include "analyzers/replay_nic_bytes.h"
#include "tests/replay_util.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

TEST(RecvLatency, AReceiveOverTheCapIsBytes) {
  // The shortest receive of any PS (ns intervals per PS), at most the cap.
  EXPECT_EQ(ReceiveLatency({{{0, 10'000}, {0, 50'000'000}}, {}}), 10'000);
  EXPECT_EQ(ReceiveLatency({{{0, kMaxReceiveLatencyNs}}}), kMaxReceiveLatencyNs);
  EXPECT_EQ(ReceiveLatency({{{0, 52'000'000}}, {{5, 60'000'005}}}), kMaxReceiveLatencyNs);
  EXPECT_EQ(ReceiveLatency({{}, {}}), -1);  // no receive op
}

TEST(RecvLatency, LongReceivesReadTheirRate) {
  // Two PS, each receiving 50 ms transfers on a 1 Gb/s link, busy 60% of their span: the
  // shortest receive (50 ms) taken off each would leave nothing busy.
  constexpr double kRate = 1.25e8;  // bytes/s
  std::vector<std::vector<std::pair<TimeNs, TimeNs>>> recv(2);
  std::vector<double> bytes(2, 0);
  for (int p = 0; p < 2; ++p) {
    for (int k = 0; k < 6; ++k) {
      const TimeNs start = TimeNs(k) * 83'333'333;  // 6 x 50 ms over 500 ms
      recv[size_t(p)].emplace_back(start, start + 50'000'000);
      bytes[size_t(p)] += kRate * 0.05;
    }
  }
  const RecvLinkRead r = RecvLinkRateOf(recv, bytes, 1);
  EXPECT_EQ(r.refused, "");
  // The 1 ms latency taken off each receive: 2% over the rate.
  EXPECT_NEAR(r.bytes_per_s, kRate, 0.03 * kRate) << r.refused;
}

TEST(RecvLatency, Gen3DenseJobOnSlowLinksGetsMorePs) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen3 needs it";
  TempDir dir;
  SimJob j;
  ASSERT_NO_FATAL_FAILURE(LoadSimJob("gen3", 3326, dir, &j));
  const AnalysisInput in = j.In();
  // The receive links read the simulated 1 Gb/s.
  std::string why;
  const double rate = ReceiveLinkRate(in, j.m, PsNicBytesBesideControl(in, j.m), &why).bytes_per_s;
  EXPECT_NEAR(rate, 1.25e8, 0.15 * 1.25e8) << why;
  // ps-worker-ratio names more PS (its twins: 14 PS buy 49%, 21 PS 65%) and predicts them.
  const AnalysisResult r = Analyze(j.c, Rules());
  const Finding* f = nullptr;
  for (const Finding& x : r.findings) {
    if (x.rule_id == "ps-worker-ratio") f = &x;
  }
  ASSERT_NE(f, nullptr) << "no ps-worker-ratio finding";
  EXPECT_NE(f->fix.find("instead of 7"), std::string::npos) << f->fix;
  ASSERT_EQ(f->impact.withheld, "");
  EXPECT_LT(f->impact.step_ns_after_fix, 0.6 * f->impact.step_ns) << f->impact.why;
}

// gen3 report14 3327 (spent): 3 PS packed on one node's 10 Gb/s NIC; the estimate from the last
// answer of each worker's median step reads past any NIC, and the job's rate is then none
// (kMaxNicBytesPerS), as the links in time or an assumed NIC take its place.
TEST(RecvLatency, AnEstimateOverAnyNicIsNone) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen3 needs it";
  TempDir dir;
  SimJob j;
  ASSERT_NO_FATAL_FAILURE(LoadSimJob("gen3", 3327, dir, &j));
  const AnalysisInput in = j.In();
  const NicDemand d = PsNicBytesBesideControl(in, j.m);
  ASSERT_TRUE(d.known);
  ASSERT_GT(EstimateJobNicRate(in, j.m, d).bytes_per_s, kMaxNicBytesPerS);
  EXPECT_EQ(JobNicRate(in, j.m, d).bytes_per_s, 0);
}

}  // namespace
}  // namespace tfdiag::test
