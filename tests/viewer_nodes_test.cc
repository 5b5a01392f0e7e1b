// tfdiag-view's Nodes tab (issue 30 item 8) on a real cluster bundle: a job's series backfilled
// into a real Prometheus (Debian's prometheus) as cAdvisor and kube-state-metrics export them,
// read by `tfdiag analyze --prometheus --save`, then opened in the viewer. Its --dump-view must
// say which PS and workers share each node and each node's CPU used against its pods' limits,
// as the series were written.
#include <gtest/gtest.h>

#include <cmath>
#include <ctime>
#include <map>
#include <string>
#include <vector>

#include "core/bundle.h"
#include "core/capture_builder.h"
#include "tests/cluster_metrics.h"
#include "tests/viewer_util.h"

namespace tfdiag::test {
namespace {

TEST(ViewerNodes, ClusterBundleShowsWhichPodsShareANodeAndItsCpuAgainstLimits) {
  std::string why = ViewerSkipReason();
  if (why.empty()) why = PromServer::SkipReason();
  if (!why.empty()) GTEST_SKIP() << why;
  // 3 PS and 6 workers on 3 nodes: ps:i on node-i except ps:2, moved beside ps:1 on node-1;
  // worker:w on node-(w % 3). Every pod has a 4-CPU limit (and request); ps:0 uses 3.6 CPUs,
  // the other PS 0.25, workers 2.0.
  ClusterJobSpec spec;
  spec.name = "nodes-job";
  spec.ps = 3;
  spec.workers = 6;
  spec.nodes = 3;
  spec.shared_ps = 2;
  spec.throttled_node = -1;
  // 30 minutes ending at the last full hour but one (inside the retention, outside the head).
  const double end = std::floor(std::time(nullptr) / 3600.0) * 3600 - 3600, start = end - 1800;
  std::string om;
  AppendClusterJob(spec, start, end, 15, &om);
  PromServer prom;
  std::string error;
  ASSERT_TRUE(prom.Start(om, "", &error)) << error;
  TempDir dir;
  const std::string bundle = dir.File("nodes-job.bundle.json");
  RunResult a = RunTfdiag("analyze --prometheus " + prom.url() + " --job nodes-job --start " +
                          std::to_string(static_cast<int64_t>(start)) + " --end " +
                          std::to_string(static_cast<int64_t>(end)) + " --save '" + bundle + "'");
  ASSERT_EQ(a.exit_code, 0) << a.err;

  const std::string json = dir.File("view.json");
  Shot shot =
      Screenshot(dir, "nodes.png", "--size 1400x860 --dump-view '" + json + "' '" + bundle + "'");
  ASSERT_EQ(shot.run.exit_code, 0) << shot.run.err;
  rapidjson::Document v = ParseJson(ReadFile(json));
  ASSERT_TRUE(v.IsObject());
  EXPECT_STREQ(v["tab"].GetString(), "nodes") << "a cluster bundle opens on its nodes";
  ASSERT_TRUE(v.HasMember("nodes") && v["nodes"].IsArray()) << "the viewer shows no nodes";
  struct Want {
    std::vector<std::string> tasks;
    int ps, workers;
    double used, limit;
  };
  const std::map<std::string, Want> want = {
      {"node-0", {{"ps:0", "worker:0", "worker:3"}, 1, 2, 3.6 + 2 * 2.0, 12}},
      {"node-1", {{"ps:1", "ps:2", "worker:1", "worker:4"}, 2, 2, 2 * 0.25 + 2 * 2.0, 16}},
      {"node-2", {{"worker:2", "worker:5"}, 0, 2, 2 * 2.0, 8}},
  };
  ASSERT_EQ(v["nodes"].Size(), want.size());
  for (const auto& n : v["nodes"].GetArray()) {
    const std::string name = n["node"].GetString();
    SCOPED_TRACE(name);
    ASSERT_EQ(want.count(name), 1u);
    const Want& w = want.at(name);
    std::vector<std::string> tasks;
    for (const auto& t : n["tasks"].GetArray()) tasks.emplace_back(t.GetString());
    EXPECT_EQ(tasks, w.tasks) << "PS first, then workers";
    EXPECT_EQ(n["ps"].GetInt(), w.ps);
    EXPECT_EQ(n["workers"].GetInt(), w.workers);
    EXPECT_NEAR(n["cpu_used"].GetDouble(), w.used, 0.05 * w.used);
    EXPECT_DOUBLE_EQ(n["cpu_limit"].GetDouble(), w.limit);
    EXPECT_DOUBLE_EQ(n["cpu_request"].GetDouble(), w.limit);
    EXPECT_EQ(n["unlimited"].GetInt(), 0);
    ASSERT_TRUE(n["bar"].IsArray()) << "drawn in the Nodes tab";
    EXPECT_GT(n["bar"][2].GetDouble(), 100);
  }
  EXPECT_EQ(v["overflow"].Size(), 0u);
  // The hot PS's segment is drawn in the hot colour, in the details panel.
  ASSERT_EQ(shot.panels.count("details"), 1u);
  EXPECT_GT(CountColour(shot.image, shot.panels["details"], kHotR, kHotG, kHotB), 500);
}

TEST(ViewerNodes, PodsWithoutALimitOrANodeAreNotCountedAsZero) {
  std::string why = ViewerSkipReason();
  if (!why.empty()) GTEST_SKIP() << why;
  // node-a: ps:0 with a 2-CPU limit and worker:0 with none; worker:1 Pending (no node).
  CaptureBuilder b;
  b.meta().interval_ms = 15000;
  for (int k = 0; k < 3; ++k) {
    ProcessRow p;
    p.task = b.AddTask(k == 0 ? "ps" : "worker", 0, k == 0 ? 0 : k - 1);
    p.pod = b.Intern(k == 0 ? "j-ps-0" : "j-worker-" + std::to_string(k - 1));
    if (k < 2) p.node = b.Intern("node-a");
    p.cpu_limit = k == 0 ? 2 : 0;
    p.quota_us = k == 0 ? 200000 : -1;
    const uint32_t proc = b.AddProcess(p);
    for (int i = 0; i <= 8; ++i) {
      ProcessSampleRow s;
      s.ts = 1'000'000'000'000LL + i * 15'000'000'000LL;
      s.process = proc;
      s.threads = 10;
      s.runnable = -1;
      s.cpu_ns = i * 15'000'000'000LL;  // 1 CPU
      b.AddProcessSample(s);
    }
  }
  TempDir dir;
  const std::string bundle = dir.File("partial.bundle.json");
  ASSERT_TRUE(WriteBundle(b.Finish(), bundle).ok());
  const std::string json = dir.File("view.json");
  Shot shot =
      Screenshot(dir, "partial.png", "--size 1400x860 --dump-view '" + json + "' '" + bundle + "'");
  ASSERT_EQ(shot.run.exit_code, 0) << shot.run.err;
  rapidjson::Document v = ParseJson(ReadFile(json));
  ASSERT_TRUE(v.IsObject() && v.HasMember("nodes"));
  ASSERT_EQ(v["nodes"].Size(), 2u);
  const auto& a = v["nodes"][0];
  EXPECT_STREQ(a["node"].GetString(), "node-a");
  EXPECT_NEAR(a["cpu_used"].GetDouble(), 2.0, 0.01);
  EXPECT_DOUBLE_EQ(a["cpu_limit"].GetDouble(), 2) << "the one limit known";
  EXPECT_EQ(a["unlimited"].GetInt(), 1);
  EXPECT_DOUBLE_EQ(a["cpu_request"].GetDouble(), -1) << "no request known: unknown, not 0";
  EXPECT_STREQ(v["nodes"][1]["node"].GetString(), "") << "the Pending pod, last";
  EXPECT_EQ(v["nodes"][1]["tasks"][0], "worker:1");
  EXPECT_DOUBLE_EQ(v["nodes"][1]["cpu_limit"].GetDouble(), -1);
}

}  // namespace
}  // namespace tfdiag::test
