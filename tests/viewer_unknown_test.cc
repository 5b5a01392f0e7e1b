// Unknown figures in tfdiag-view (issue 30 item 6): a cluster bundle has no runnable threads, no
// context switches, no cpuset and no node CPU count (cAdvisor and kube-state-metrics do not say),
// and a pod may have no CPU limit. The viewer must show each as "-", never "-1/s", "limit 0
// CPUs" or any other number; checked on the figures its --dump-view says it wrote.
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "core/bundle.h"
#include "core/capture_builder.h"
#include "tests/viewer_util.h"

namespace tfdiag::test {
namespace {

// Two pods as analyze --prometheus saves them: ps:0 with no CPU limit, worker:0 with a 2-CPU
// limit, 64 threads and throttled in 60% of its periods; pid, runnable threads, context
// switches, cpuset and the node's CPUs unknown.
std::string WriteClusterBundle(const TempDir& dir) {
  CaptureBuilder b;
  b.meta().host = "1 node (Prometheus 2.42.0)";
  b.meta().interval_ms = 15000;
  b.meta().window_start = 1'000'000'000'000LL;
  b.meta().window_end = b.meta().window_start + 600'000'000'000LL;
  for (int k = 0; k < 2; ++k) {
    ProcessRow p;
    p.task = k == 0 ? b.AddTask("ps", 0, 0) : b.AddTask("worker", 0, 0);
    p.pod = b.Intern(k == 0 ? "job-ps-0" : "job-worker-0");
    p.node = b.Intern("node-7");
    p.cpu_limit = k == 0 ? 0 : 2;
    p.quota_us = k == 0 ? -1 : 200000;
    p.period_us = k == 0 ? 0 : 100000;
    p.first_ns = b.meta().window_start;
    p.last_ns = b.meta().window_end;
    const uint32_t proc = b.AddProcess(p);
    for (int i = 0; i <= 40; ++i) {
      ProcessSampleRow s;
      s.ts = b.meta().window_start + i * 15'000'000'000LL;
      s.process = proc;
      s.threads = k == 0 ? 30 : 64;
      s.runnable = -1;
      s.cpu_ns = i * 15'000'000'000LL * (k == 0 ? 1 : 2);
      if (k == 1) {
        s.nr_periods = i * 150;
        s.nr_throttled = i * 90;
      }
      b.AddProcessSample(s);
    }
  }
  const std::string path = dir.File("cluster.bundle.json");
  EXPECT_TRUE(WriteBundle(b.Finish(), path).ok());
  return path;
}

// The dump's "figures" after opening `bundle` with `args`.
std::vector<std::string> Figures(const TempDir& dir, const std::string& name,
                                 const std::string& args, const std::string& bundle) {
  const std::string json = dir.File(name + ".json");
  RunResult r = RunView("--size 1400x860 --dump-view '" + json + "' " + args + " '" + bundle + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  rapidjson::Document v = ParseJson(ReadFile(json));
  std::vector<std::string> out;
  if (!v.IsObject() || !v.HasMember("figures")) {
    ADD_FAILURE() << "the dump lists no figures";
    return out;
  }
  for (const auto& f : v["figures"].GetArray()) out.emplace_back(f.GetString());
  return out;
}

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += x + "\n";
  return s;
}

// No "-1", no negative number, no "limit 0" / "(0 CPUs)" anywhere.
void ExpectNoUnknownAsNumber(const std::vector<std::string>& figures) {
  static const std::regex negative(R"((^|[^\w.])-\d)");
  for (const std::string& f : figures) {
    EXPECT_FALSE(std::regex_search(f, negative)) << f;
    EXPECT_EQ(f.find("limit 0"), std::string::npos) << f;
    EXPECT_EQ(f.find(" 0 CPUs"), std::string::npos) << f;
    EXPECT_EQ(f.find("(0 CPUs)"), std::string::npos) << f;
  }
}

TEST(ViewerUnknown, CpuTabShowsDashesNotMinusOneOrZero) {
  std::string why = ViewerSkipReason();
  if (!why.empty()) GTEST_SKIP() << why;
  TempDir dir;
  const std::string bundle = WriteClusterBundle(dir);
  const std::vector<std::string> f = Figures(dir, "cpu", "--tab cpu", bundle);
  const std::string all = Join(f);
  ExpectNoUnknownAsNumber(f);
  // ps:0's line: no limit and the node's CPUs unknown; runnable, switches and cpuset unknown.
  EXPECT_NE(all.find("ps:0: no CPU limit (CPUs -), cpuset - | threads 30, runnable -, used 1.00 "
                     "CPUs | switches - vol, - invol | throttled -"),
            std::string::npos)
      << all;
  // worker:0's: its limit and throttling are known.
  EXPECT_NE(all.find("worker:0: limit 2.00 CPUs, cpuset - | threads 64, runnable -, used 2.00 "
                     "CPUs | switches - vol, - invol | throttled 60%"),
            std::string::npos)
      << all;
  // The chart scales: no switch scale, and no limit line for ps:0 (not "limit 0 CPUs").
  EXPECT_NE(all.find("switches -; limit - (no quota; the node's CPUs unknown)"), std::string::npos)
      << all;
  EXPECT_NE(all.find("switches -; limit CFS quota 2.00 CPUs"), std::string::npos) << all;
}

TEST(ViewerUnknown, FindingEvidenceAndNodesShowDashes) {
  std::string why = ViewerSkipReason();
  if (!why.empty()) GTEST_SKIP() << why;
  TempDir dir;
  const std::string bundle = WriteClusterBundle(dir);
  // Every finding's evidence, one selected at a time.
  RunResult list = RunTfdiag("analyze -f json '" + bundle + "'");
  ASSERT_EQ(list.exit_code, 0) << list.err;
  rapidjson::Document d = ParseJson(list.out);
  ASSERT_TRUE(d.IsObject());
  const size_t n = d["findings"].Size();
  ASSERT_GT(n, 0u) << "the bundle fires no rule to check evidence on";
  bool some_unknown = false;
  for (size_t i = 0; i < n; ++i) {
    const std::vector<std::string> f =
        Figures(dir, "f" + std::to_string(i), "--select " + std::to_string(i), bundle);
    ExpectNoUnknownAsNumber(f);
    for (const auto& e :
         d["findings"][static_cast<rapidjson::SizeType>(i)]["evidence"].GetArray()) {
      if (e["value"].GetDouble() >= 0) continue;
      some_unknown = true;
      const std::string want = std::string(e["label"].GetString()) + ": -";
      EXPECT_NE(Join(f).find(want), std::string::npos) << want << " in\n" << Join(f);
    }
  }
  // The Nodes tab: the PS's missing limit is said, not summed as 0; no request known reads "-".
  const std::vector<std::string> nodes = Figures(dir, "nodes", "--tab nodes", bundle);
  ExpectNoUnknownAsNumber(nodes);
  EXPECT_NE(Join(nodes).find("node-7: CPU used 3 of limits 2 CPUs (+1 pod with no limit) | "
                             "requests - | ps:0, worker:0"),
            std::string::npos)
      << Join(nodes);
  if (!some_unknown) GTEST_LOG_(INFO) << "no finding carried an unknown figure";
}

}  // namespace
}  // namespace tfdiag::test
