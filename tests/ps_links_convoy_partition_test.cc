// A partition predicted from the PS links in a convoy (analyzers/ps_links_convoy.h
// LinkConvoy::PartitionedNs): the hot variables' share of their PS's link time spread evenly over
// every PS, on hand-made convoys and on spent gen2 jobs against their partitioned twins.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <cmath>
#include <string>

#include "analyzers/ps_links_convoy.h"
#include "tests/replay_util.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

// 3 PS (tasks 5, 6, 7), ps 5 hot: 30 ms out and 30 ms in per worker step, the others 10 and 10.
LinkConvoy ThreePsOneHot(std::vector<int> nodes) {
  LinkConvoy cv;
  cv.convoy = true;
  cv.link_share = 1;
  cv.wait_share = 1;
  cv.out_ns = {30e6, 10e6, 10e6};
  cv.in_ns = {30e6, 10e6, 10e6};
  cv.ps_task = {5, 6, 7};
  cv.busiest_ns = 60e6;
  cv.sum_ns = 100e6;
  cv.ps_node = std::move(nodes);
  return cv;
}

Fix Partition(uint32_t task, double op_share, double byte_share = -1) {
  Fix f;
  f.partition = {{task, op_share}};
  if (byte_share >= 0) f.partition_bytes = {{task, byte_share}};
  return f;
}

TEST(ConvoyPartition, TheHotShareOfTheLinkSpreadsOverEveryPs) {
  const LinkConvoy cv = ThreePsOneHot({});
  // Half of ps 5's bytes (its answers and gradients) leave it, 15 + 15 ms spread over the 3 PS:
  // it keeps 15 + 5 each way, 40 ms; the others 30 ms.
  EXPECT_DOUBLE_EQ(cv.PartitionedNs(Partition(5, 0.9, 0.5)), 40e6);
  EXPECT_DOUBLE_EQ(cv.BusiestAfterNs(Partition(5, 0.9, 0.5)), 40e6);
  // No byte share: the op time share moves the bytes, as the replay moves them.
  EXPECT_DOUBLE_EQ(cv.PartitionedNs(Partition(5, 0.5)), 40e6);
  // All of it: every PS (60 + 20 + 20) / 3 + the others' own.
  EXPECT_NEAR(cv.PartitionedNs(Partition(5, 1, 1)), 40e6, 1);
  // Saving: the convoy's share x (1 - after / busiest), within the waits.
  EXPECT_NEAR(cv.SavingFor(Partition(5, 0.9, 0.5)), 1 - 40.0 / 60.0, 1e-12);
  // A partition of a PS with no link time of its own moves none.
  EXPECT_DOUBLE_EQ(cv.PartitionedNs(Partition(9, 1, 1)), 0);
  // A PS-count change is not a partition: the whole sum spread over the new count.
  Fix count;
  count.ps_count = 4;
  count.partition = {{5, 0.5}};
  EXPECT_DOUBLE_EQ(cv.BusiestAfterNs(count), 25e6);
}

TEST(ConvoyPartition, OneWayReadsTheBusierDirection) {
  LinkConvoy cv = ThreePsOneHot({});
  cv.one_way = true;
  cv.in_ns = {6e6, 2e6, 2e6};
  cv.busiest_ns = 30e6;
  // Out: 15 + 5 = 20 on ps 5, 15 elsewhere; in: 3 + 1 = 4, 3: the busier direction, 20 ms.
  EXPECT_DOUBLE_EQ(cv.PartitionedNs(Partition(5, 0.5, 0.5)), 20e6);
}

TEST(ConvoyPartition, PackedPsReadTheBusiestNodesNic) {
  // ps 5 and 6 on node 0 (80 ms a worker step now), ps 7 alone: moved half of ps 5's 60 ms,
  // node 0 keeps 20 + 20 + 15 + 15 = 70 of its 80, scaled onto the capture's busiest figure.
  const LinkConvoy cv = ThreePsOneHot({0, 0, 1});
  EXPECT_NEAR(cv.PartitionedNs(Partition(5, 0.5, 0.5)), 60e6 * 70.0 / 80.0, 1);
}

// gen2 report22 4620 (spent): ps:3's dense kernel carries a convoy of 24 workers on its link;
// partitioned, the twin saves 69%, and the FIFO replay (transfers held fixed, 16% of the step)
// withheld it. gen2 report18 3826 (spent): 2 PS on one node, a convoy on the node's NIC, whose
// partition buys nothing (the NIC carries both PS's bytes either way); the FIFO replay promised
// 14% (-14% off the twin). Both fail on the code before (withheld; -14%).
TEST(ConvoyPartition, Gen2PartitionsAgainstTheirTwins) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen2 needs it";
  for (const int seed : {4620, 3826}) {
    rapidjson::Document d;
    std::string out;
    const rapidjson::Value* hot = nullptr;
    ASSERT_NO_FATAL_FAILURE(RunBenchRow("gen2/run_gen2.py", seed, "hot-ps", true, &d, &out, &hot));
    const double pred = (*hot)["pred_ms"].GetDouble(), twin = (*hot)["twin_ms"].GetDouble();
    const std::string why = (*hot)["why"].GetString();
    EXPECT_LE(std::abs(pred - twin) / twin, 0.10) << seed << ": " << why;
    EXPECT_NE(why.find("the PS links in a convoy"), std::string::npos) << seed << ": " << why;
  }
}

}  // namespace
}  // namespace tfdiag::test
