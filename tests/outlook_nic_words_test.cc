// The scaling outlook's NIC sentences (analyzers/outlook_nic_words.h). Review of o66 item 4: gen2
// report10 2213's first sentence printed the raised 8.8 Gb/s as "estimated from the last PS
// answer" where the estimate was 0.06 Gb/s, and the raised sentence's "that rate" referred to
// nothing: the estimate prints its own figure, the raised one names the figures and PS it came
// from.
#include "analyzers/outlook_nic_words.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tfdiag {
namespace {

// 2213's shape: estimated 0.06 Gb/s, ps:0's NIC carried 0.068 Gb/s, ps:1's receives moved bytes
// at 8.8 Gb/s while in flight.
NicAssumed Raised2213() {
  NicAssumed a;
  a.known = true;
  a.mirrored = true;
  a.estimated = true;
  a.est.bytes_per_s = 0.06e9 / 8;
  a.est.workers = 5;
  a.bytes_per_s = 8.8e9 / 8;
  a.floored = true;
  a.busy_floor = true;
  a.carried_bytes_per_s = 0.068e9 / 8;
  a.carried_task = "ps:0";
  a.floor_task = "ps:1";
  return a;
}

TEST(OutlookNicWords, TheEstimatePrintsItsOwnFigureAndTheRaiseItsSources) {
  std::vector<std::string> out;
  AppendNicAssumptions(Raised2213(), &out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].rfind("PS NICs: 0.06 Gb/s each way, estimated from the last PS answer", 0), 0u)
      << out[0];
  EXPECT_NE(out[1].find("raised to 8.8 Gb/s (the estimate 0.06 Gb/s, under the 0.068 Gb/s "
                        "ps:0's NIC carried in the capture), the rate ps:1's sized receives"),
            std::string::npos)
      << out[1];
  EXPECT_NE(out[1].find("not a bound"), std::string::npos) << out[1];
  EXPECT_EQ(out[1].find("that rate"), std::string::npos) << out[1];
}

// Raised to the carried rate only: the estimate's figure and the PS that carried it.
TEST(OutlookNicWords, RaisedToTheCarriedRateNamesTheEstimateAndThePs) {
  NicAssumed a = Raised2213();
  a.busy_floor = false;
  a.floor_task.clear();
  a.bytes_per_s = a.carried_bytes_per_s;
  std::vector<std::string> out;
  AppendNicAssumptions(a, &out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_NE(out[0].find("0.06 Gb/s each way"), std::string::npos) << out[0];
  EXPECT_EQ(out[1],
            "PS NICs: raised to 0.068 Gb/s, the bytes ps:0's NIC carried per second in the "
            "capture (the estimate 0.06 Gb/s was under it; a link carries no more than its "
            "bandwidth)");
}

}  // namespace
}  // namespace tfdiag
