// PS that share a node's NIC (analyzers/replay_ps_nodes.h; the convoy's node reading,
// analyzers/ps_links_convoy.h LinkConvoy::BusiestAfterNs; ps-colocation's fix model).
// gen2 report18 3826 (spent, tuned on): 2 PS on one node's 1 Gb/s NIC, 30 workers, a 325 KB dense
// kernel on ps:0. With each PS's NIC its own, a new PS count of 3 was predicted 131 ms against
// its twin's 240 ms (-45%: the busiest PS's link time / 3, while the node keeps two PS of three);
// read per node, the measured count is 4, 343.5 ms -> 182.7 ms against the twin's 174.7 ms (+5%),
// and `Fix first` is right; ps-colocation's spread is withheld, its two readings 338 ms and
// 178 ms apart (the twin: 342 ms). The harness gives tfdiag the job's pod list
// (generator_suite.py write_pods). Since session 58 gen2's PS-count twin re-partitions every
// variable, as the fix text says (it cut only kernels of 256 KB and more): the count named is 6,
// predicted 129.2 ms against its twin's 109.0 ms (+18%, `medium`), so the bound is the medium
// label's 25%. About a minute.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <cmath>
#include <string>
#include <vector>

#include "analyzers/ps_links_convoy.h"
#include "analyzers/replay.h"
#include "analyzers/replay_ps_nodes.h"
#include "tests/replay_util.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

Fix PsCount(int n) {
  Fix f;
  f.ps_count = n;
  return f;
}

Fix Spread() {
  Fix f;
  f.spread_ps = true;
  return f;
}

TEST(PsNodes, PlacesThePsAFixLeavesAndAdds) {
  const std::vector<int> nodes = {0, 0, 1};
  EXPECT_TRUE(PsPacked(nodes));
  EXPECT_FALSE(PsPacked({0, 1, 2}));
  EXPECT_FALSE(PsPacked({}));
  EXPECT_EQ(PsNodesAfter(nodes, Spread()), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(PsNodesAfter(nodes, PsCount(5)), (std::vector<int>{0, 0, 1, 2, 3}));
  EXPECT_EQ(PsNodesAfter(nodes, PsCount(2)), (std::vector<int>{0, 0}));
  EXPECT_EQ(PsNodesAfter(nodes, Fix{}), nodes);
  EXPECT_TRUE(PsNodesAfter({}, PsCount(4)).empty());
}

K8sPod PsPod(int index, const std::string& node) {
  K8sPod p;
  p.name = "job-ps-" + std::to_string(index);
  p.role = "ps";
  p.index = index;
  p.node = node;
  return p;
}

// The pod list's nodes joined to the capture's PS by the replica index: gen2 report18 3806's three
// PS, the pods listed out of order (a join by position would read {0, 0, 1}); a PS without a pod,
// or an index on two nodes (a list of two jobs), leaves them unknown.
TEST(PsNodes, JoinsThePodListsNodesToThePsTasks) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen2 needs it";
  TempDir dir;
  SimJob j;
  ASSERT_NO_FATAL_FAILURE(LoadSimJob("gen2", 3806, dir, &j));
  ASSERT_EQ(j.m.ps.size(), 3u);
  EXPECT_TRUE(j.m.ps_node.empty());  // no pod list: each PS on a node of its own
  K8sDeployment k8s;
  k8s.pods = {PsPod(2, "node-a"), PsPod(0, "node-a"), PsPod(1, "node-b")};
  auto nodes = [&] {
    const AnalysisInput in{j.c, j.stats, j.procs, j.traffic, j.sched, &k8s, j.graph.get()};
    return PsNodesOf(in, j.m);
  };
  EXPECT_EQ(nodes(), (std::vector<int>{0, 1, 0}));
  k8s.pods.erase(k8s.pods.begin());
  EXPECT_TRUE(nodes().empty());  // ps:2 has no pod
  k8s.pods = {PsPod(0, "node-a"), PsPod(1, "node-a"), PsPod(2, "node-b"), PsPod(1, "node-c")};
  EXPECT_TRUE(nodes().empty());  // ps:1 on two nodes
}

// Two PS on one node, ps:0 three times ps:1's link time each way: 6 ms and 2 ms both ways per
// worker step, the whole step on the links.
LinkConvoy TwoPsOneHot(std::vector<int> nodes) {
  LinkConvoy cv;
  cv.convoy = true;
  cv.link_share = 1;
  cv.wait_share = 1;
  cv.out_ns = {3e6, 1e6};
  cv.in_ns = {3e6, 1e6};
  cv.busiest_ns = 6e6;
  cv.sum_ns = 8e6;
  cv.ps_node = std::move(nodes);
  return cv;
}

TEST(PsNodes, TheConvoyReadsTheBusiestNodesNic) {
  // Each PS on a NIC of its own: 4 PS share the 8 ms evenly, 2 ms on the busiest link.
  const LinkConvoy apart = TwoPsOneHot({});
  EXPECT_DOUBLE_EQ(apart.BusiestAfterNs(PsCount(4)), 2e6);
  EXPECT_NEAR(apart.SavingAt(4), 1 - 2.0 / 6, 1e-12);
  EXPECT_EQ(apart.SavingFor(Spread()), 0);  // nothing shared, nothing to spread
  // Both on one node: its NIC carries the 8 ms; at 4 PS it keeps 2 of them, 4 ms of the 8, so
  // the busiest PS's 6 ms becomes 3 ms (the node's share of it).
  const LinkConvoy packed = TwoPsOneHot({0, 0});
  EXPECT_DOUBLE_EQ(packed.BusiestAfterNs(PsCount(4)), 3e6);
  EXPECT_NEAR(packed.SavingAt(4), 0.5, 1e-12);
  // Spread: ps:0 alone on its NIC, 6 ms of the node's 8.
  EXPECT_DOUBLE_EQ(packed.BusiestAfterNs(Spread()), 4.5e6);
  EXPECT_NEAR(packed.SavingFor(Spread()), 0.25, 1e-12);
  // The other reading of the spread: each PS's link time as read is its half of the shared NIC,
  // so alone ps:0 takes 3 ms, not 6.
  EXPECT_DOUBLE_EQ(packed.BusiestAloneNs(), 3e6);
  EXPECT_EQ(apart.BusiestAloneNs(), 0);
  // Fewer PS than now: the PS kept stay where they are (both on the one node): its NIC keeps
  // every byte, no saving.
  EXPECT_DOUBLE_EQ(packed.BusiestAfterNs(PsCount(1)), 6e6);
  // One way (the NIC carries each direction apart): the busier direction summed over the node.
  LinkConvoy one_way = TwoPsOneHot({0, 0});
  one_way.in_ns = {1e6, 1e6};
  one_way.one_way = true;
  one_way.busiest_ns = 3e6;
  EXPECT_DOUBLE_EQ(one_way.BusiestAfterNs(Spread()), 3e6 * 3 / 4);  // out: 3 of the node's 4
  // The saving is at most what the workers wait on the links.
  LinkConvoy waits = packed;
  waits.wait_share = 0.2;
  EXPECT_NEAR(waits.SavingAt(4), 0.2, 1e-12);
}

// The spread's two readings compared either way: one node with a hot PS and a light one (the
// own-NIC reading saves a quarter, the shared-NIC one half), and a lone hot PS beside a node of
// two lighter ones of 9 ms each (own NIC: the busiest node's 18 ms falls to the lone PS's 10, a
// 44% saving; shared: the lone PS's 10 ms stays, none).
TEST(PsNodes, TheSpreadIsPredictedOnlyWhereItsTwoReadingsAgree) {
  double shared = 0, alone = 0;
  const LinkConvoy hot = TwoPsOneHot({0, 0});
  EXPECT_FALSE(hot.SpreadReadingsAgree(100e6, &shared, &alone));
  EXPECT_NEAR(shared, 75e6, 1);  // 6 of 8 ms: a quarter saved
  EXPECT_NEAR(alone, 50e6, 1);   // 3 of 6 ms: half saved
  LinkConvoy lone;
  lone.convoy = true;
  lone.link_share = lone.wait_share = 1;
  lone.out_ns = {10e6, 9e6, 9e6};
  lone.in_ns = {0, 0, 0};
  lone.busiest_ns = 10e6;  // the busiest PS's link time as read
  lone.sum_ns = 28e6;
  lone.ps_node = {0, 1, 1};
  EXPECT_FALSE(lone.SpreadReadingsAgree(100e6, &shared, &alone));
  EXPECT_LT(shared, alone);  // the own-NIC reading the faster: refused all the same
  // Two even PS on one node: both readings halve the NIC's time.
  LinkConvoy even = TwoPsOneHot({0, 0});
  even.out_ns = even.in_ns = {2e6, 2e6};
  even.busiest_ns = 4e6;
  EXPECT_TRUE(even.SpreadReadingsAgree(100e6, &shared, &alone));
  EXPECT_NEAR(shared, alone, 1);
  // Each worker's own NIC as a floor (LinkConvoy::MostSaving) under both readings: the hot node's
  // quarter and half saved are both cut to the 20% the floor leaves (1 - 30% compute - 50% the
  // worker's own transfers), so the two readings give one step and agree.
  LinkConvoy floored = TwoPsOneHot({0, 0});
  floored.worker_nics = true;
  floored.own_share = 0.3;
  floored.worker_share = 0.5;
  EXPECT_TRUE(floored.SpreadReadingsAgree(100e6, &shared, &alone));
  EXPECT_NEAR(shared, 80e6, 1);
  EXPECT_NEAR(alone, 80e6, 1);
  // A floor that cuts only the larger reading brings them within kMaxSpreadReadingsApart: the
  // quarter stays, the half becomes 30% (75 ms against 70 ms).
  floored.own_share = 0.2;
  EXPECT_TRUE(floored.SpreadReadingsAgree(100e6, &shared, &alone));
  EXPECT_NEAR(shared, 75e6, 1);
  EXPECT_NEAR(alone, 70e6, 1);
}

TEST(PsNodes, Gen2PackedPsCountAndSpreadAgainstTheirTwins) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen2 needs it";
  rapidjson::Document d;
  std::string out;
  ASSERT_NO_FATAL_FAILURE(
      RunBenchJobs("gen2/run_gen2.py", "--seeds 3826 --no-outlook", 1, &d, &out));
  const rapidjson::Value& job = d["jobs"][0];
  const rapidjson::Value* ratio = Row(job, "ps-worker-ratio");
  ASSERT_NE(ratio, nullptr) << out;
  ASSERT_TRUE(ratio->HasMember("pred_ms")) << (*ratio)["why"].GetString() << out;
  const double pred = (*ratio)["pred_ms"].GetDouble(), twin = (*ratio)["twin_ms"].GetDouble();
  EXPECT_LE(std::abs(pred - twin) / twin, 0.25) << out;
  EXPECT_NE(std::string((*ratio)["why"].GetString()).find("each PS added on a node of its own"),
            std::string::npos)
      << (*ratio)["why"].GetString();
  EXPECT_TRUE(job["fix_first_right"].GetBool()) << out;
  // ps-colocation: the spread read both ways from the same convoy, each PS's link rate as its
  // own NIC's (ps:0 keeps nearly all the node's bytes: no saving, as its twin) or as its share of
  // the NIC the node's two PS shared (half the time): too far apart to predict.
  const rapidjson::Value* spread = Row(job, "ps-colocation");
  ASSERT_NE(spread, nullptr) << out;
  EXPECT_FALSE(spread->HasMember("pred_ms")) << out;
  EXPECT_NE(std::string((*spread)["why"].GetString()).find("which no profile records"),
            std::string::npos)
      << (*spread)["why"].GetString();
}

// What spreading packed PS can buy is at most the workers' time on the network (the transfers the
// replay holds and the wait the PS queues do not explain): gen2 report21 4405 (spent) packs 2 PS
// on one node, with 0.9% of its step on the network; its spread's twin buys 1%, and the finding,
// medium on the pod list alone, is low with the ceiling said. gen2 report4 1026 (spent) packs 3 PS
// whose links carry most of its step: it stays medium, and its spread's twin buys 51%. Fails on
// the code before (4405 medium).
TEST(PsNodes, Gen2SpreadBuysAtMostTheNetworksShare) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen2 needs it";
  rapidjson::Document d;
  std::string out;
  ASSERT_NO_FATAL_FAILURE(
      RunBenchJobs("gen2/run_gen2.py", "--seeds 4405,1026 --no-outlook", 2, &d, &out));
  const rapidjson::Value* idle = Row(d["jobs"][0], "ps-colocation");
  const rapidjson::Value* busy = Row(d["jobs"][1], "ps-colocation");
  ASSERT_NE(idle, nullptr) << out;
  ASSERT_NE(busy, nullptr) << out;
  // The truth: the twins with every PS on a node of its own.
  EXPECT_LT((*idle)["twin_saving_pct"].GetDouble(), 5) << out;
  EXPECT_GT((*busy)["twin_saving_pct"].GetDouble(), 20) << out;
  EXPECT_STREQ((*idle)["severity"].GetString(), "low") << out;
  EXPECT_STREQ((*busy)["severity"].GetString(), "medium") << out;
  EXPECT_TRUE(d["jobs"][0]["severe_findings"].Empty()) << out;
}

}  // namespace
}  // namespace tfdiag::test
