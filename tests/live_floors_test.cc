// hot-ps's live floor and ps-colocation's advice (issue 36 item 2), on cluster-shaped captures
// built row by row (the agents' figures as analyze --prometheus builds them: per-pod network
// bytes with no peer, CPU time, the node of each task): a hot PS far from every limit is not
// HIGH and the summary says why; one near its CPUs stays HIGH; PS processes packed on a bare
// host are told to spread over hosts (named), PS pods to use podAntiAffinity.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <optional>

#include "analyzers/analysis.h"
#include "core/capture_builder.h"

namespace tfdiag {
namespace {

constexpr TimeNs kSecond = 1000000000;

struct Job {
  double ps0_cpus = 0.01;  // CPU used by ps:0
  double ps0_mb_s = 2.5;   // ps:0's bytes/s each way, 10^6
  bool pods = false;       // the tasks run in pods (else bare processes)
  std::string ps1_node = "node-a";
};

AnalysisResult Analyzed(const Job& j) {
  CaptureBuilder b;
  b.meta().probes = "prometheus";
  b.meta().window_start = kSecond;
  b.meta().window_end = 11 * kSecond;
  struct T {
    const char* job;
    int index;
    std::string node;
    double cpus, mb_s;
  };
  for (const T& t :
       {T{"ps", 0, "node-a", j.ps0_cpus, j.ps0_mb_s}, T{"ps", 1, j.ps1_node, 0.002, 0.05},
        T{"worker", 0, "node-b", 0.3, 1.2}, T{"worker", 1, "node-c", 0.3, 1.2}}) {
    ProcessRow p;
    p.task = b.AddTask(t.job, 0, t.index);
    p.host_cpus = 2;
    p.node = b.Intern(t.node);
    if (j.pods) p.pod = b.Intern(fmt::format("mnist-{}-{}", t.job, t.index));
    const uint32_t proc = b.AddProcess(p);
    for (int i = 0; i <= 10; ++i) {
      ProcessSampleRow s;
      s.ts = kSecond * (i + 1);
      s.process = proc;
      s.threads = 8;
      s.runnable = -1;
      s.cpu_ns = static_cast<int64_t>(t.cpus * i * kSecond);
      b.AddProcessSample(s);
      TrafficRow r;
      r.ts = s.ts;
      r.process = proc;
      r.bytes_received = r.bytes_sent = static_cast<int64_t>(t.mb_s * 1e6 * i);
      b.AddTraffic(r);
    }
  }
  StatusOr<RuleSet> rules = DefaultRuleSet();
  EXPECT_TRUE(rules.ok());
  return Analyze(b.Finish(), *rules);
}

std::optional<Finding> Of(const AnalysisResult& r, const std::string& rule) {
  for (const Finding& f : r.findings) {
    if (f.rule_id == rule) return f;
  }
  return std::nullopt;
}

// ps:0 also uses 250x the CPU of ps:1: ps-cpu-imbalance folds into hot-ps, its figures headed
// "also: ps-cpu-imbalance: ", each CPU figure named for what it is (issue 39: two figures, both
// labelled as use, one of them demand).
TEST(HotPsFloor, FoldedEvidenceIsHeadedAlso) {
  Job j;
  j.ps0_cpus = 0.5;
  const AnalysisResult r = Analyzed(j);
  EXPECT_FALSE(Of(r, "ps-cpu-imbalance").has_value()) << "folded into hot-ps";
  std::optional<Finding> hot = Of(r, "hot-ps");
  ASSERT_TRUE(hot.has_value());
  bool used = false, also = false;
  for (const Figure& e : hot->evidence) {
    used |= e.label == "CPU used by ps:0 against the CPUs it may use";
    also |= e.label == "also: ps-cpu-imbalance: CPU used against the CPUs it may use";
    EXPECT_NE(e.label.rfind("ps-cpu-imbalance: ", 0), 0u) << e.label;
  }
  EXPECT_TRUE(used) << hot->summary;
  EXPECT_TRUE(also) << hot->summary;
}

TEST(HotPsFloor, IdlePsFarFromEveryLimitIsNotHighAndSaysWhy) {
  std::optional<Finding> f = Of(Analyzed(Job{}), "hot-ps");
  ASSERT_TRUE(f.has_value()) << "ps:0 moves 98% of the PS bytes: still hot";
  EXPECT_EQ(f->subject, "ps:0");
  EXPECT_LE(f->severity, Severity::kMedium) << f->summary;
  EXPECT_NE(f->summary.find("not high"), std::string::npos) << f->summary;
  EXPECT_NE(f->summary.find("uses 0.01 of the 2 CPUs"), std::string::npos) << f->summary;
  EXPECT_NE(f->summary.find("2.5 MB/s"), std::string::npos) << f->summary;
}

TEST(HotPsFloor, SeverityFollowsClosenessToALimit) {
  Job half;
  half.ps0_cpus = 0.8;  // 40% of 2 CPUs
  std::optional<Finding> f = Of(Analyzed(half), "hot-ps");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->severity, Severity::kMedium) << f->summary;
  Job busy;
  busy.ps0_cpus = 1.8;  // 90%
  f = Of(Analyzed(busy), "hot-ps");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->severity, Severity::kHigh) << f->summary;
  EXPECT_EQ(f->summary.find("not high"), std::string::npos) << f->summary;
  Job nic;
  nic.ps0_mb_s = 1000;  // 8 Gbit/s of a 10 Gbit/s NIC
  f = Of(Analyzed(nic), "hot-ps");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->severity, Severity::kHigh) << f->summary;
}

TEST(PsColocation, BareHostProcessesAreToldToSpreadOverNamedHosts) {
  std::optional<Finding> f = Of(Analyzed(Job{}), "ps-colocation");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->subject, "node-a");
  EXPECT_NE(f->fix.find("Spread the PS over hosts"), std::string::npos) << f->fix;
  EXPECT_NE(f->fix.find("node-b, node-c"), std::string::npos) << f->fix;
  EXPECT_EQ(f->fix.find("podAntiAffinity:"), std::string::npos) << f->fix;
  Job pods;
  pods.pods = true;
  f = Of(Analyzed(pods), "ps-colocation");
  ASSERT_TRUE(f.has_value());
  EXPECT_NE(f->fix.find("podAntiAffinity:"), std::string::npos) << f->fix;
  Job apart;
  apart.ps1_node = "node-d";
  EXPECT_FALSE(Of(Analyzed(apart), "ps-colocation").has_value());
}

}  // namespace
}  // namespace tfdiag
