// The input-bound rule's live path on bundles built row by row (the live tests in
// bpf_rules_test.cc run it on real jobs): a flat HDFS rate fires only while the worker's CPU
// demand is low. Demand comes from the eBPF sched rows (on-CPU + run-queue time), so a worker
// that uses little CPU because it is starved on a busy node is not called input-bound; without
// sched rows, CPU used (/proc) stands in. Expectations follow from the rows and the thresholds
// in rules/default.rules.json (flat: stddev/mean <= 0.1; waits: demand <= 50% of its CPUs).
#include <gtest/gtest.h>

#include <optional>

#include "analyzers/analysis.h"
#include "core/capture_builder.h"

namespace tfdiag {
namespace {

constexpr TimeNs kSecond = 1000000000;

struct Worker {
  double mb_per_s = 5;     // HDFS read rate, 10^6 bytes/s
  double rate_wobble = 0;  // +- this share on alternate intervals
  double cpu_used = 0.3;   // CPUs used (/proc CPU time per second)
  double runq = 0.02;      // CPUs' worth of run-queue wait per second (eBPF)
  bool sched_rows = true;  // the eBPF sched probe ran
  int samples = 8;         // 1 s apart
};

// One worker (host of 2 CPUs, no limit) recorded per `w`; the input-bound finding, if any.
std::optional<Finding> Plateau(const Worker& w) {
  CaptureBuilder b;
  ProcessRow p;
  p.task = b.AddTask("worker", 0, 0);
  p.pid = 100;
  p.host_cpus = 2;
  const uint32_t proc = b.AddProcess(p);
  const uint32_t hdfs = b.AddTask("hdfs", 0, 0);
  b.meta().window_start = kSecond;
  b.meta().window_end = kSecond * (w.samples + 1);
  int64_t bytes = 0;
  for (int i = 0; i < w.samples; ++i) {
    const TimeNs ts = kSecond * (i + 1);
    ProcessSampleRow s;
    s.ts = ts;
    s.process = proc;
    s.threads = 4;
    s.cpu_ns = static_cast<int64_t>(w.cpu_used * i * kSecond);
    b.AddProcessSample(s);
    TrafficRow t;
    t.ts = ts;
    t.process = proc;
    t.local = b.Intern("127.0.0.1:40000");
    t.peer = b.Intern("127.0.0.1:9866");
    t.peer_task = hdfs;
    t.hdfs = true;
    t.bytes_received = bytes;
    b.AddTraffic(t);
    bytes +=
        static_cast<int64_t>(w.mb_per_s * 1e6 * (1 + (i % 2 ? w.rate_wobble : -w.rate_wobble)));
    if (!w.sched_rows) continue;
    SchedRow r;
    r.ts = ts;
    r.process = proc;
    r.oncpu_ns = static_cast<int64_t>(w.cpu_used * i * kSecond);
    r.runq_wait_ns = static_cast<int64_t>(w.runq * i * kSecond);
    r.runq_waits = 100 * i;
    b.AddSched(r);
  }
  StatusOr<RuleSet> rules = DefaultRuleSet();
  EXPECT_TRUE(rules.ok());
  AnalysisResult r = Analyze(b.Finish(), *rules);
  for (const Finding& f : r.findings) {
    if (f.rule_id == "input-bound") return f;
  }
  return std::nullopt;
}

double Evidence(const Finding& f, const std::string& label) {
  for (const Figure& e : f.evidence) {
    if (e.label == label) return e.value;
  }
  ADD_FAILURE() << "no evidence " << label;
  return -1;
}

TEST(InputBoundLive, FlatRateWithLowDemandFires) {
  std::optional<Finding> f = Plateau(Worker{});
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->subject, "worker:0");
  EXPECT_NEAR(Evidence(*f, "HDFS input rate (measured, eBPF)"), 5e6, 1);
  EXPECT_NEAR(Evidence(*f, "CPU demand share of its CPUs"), 100 * (0.3 + 0.02) / 2, 1e-6);
  EXPECT_NE(f->summary.find("on-CPU + run-queue time, eBPF"), std::string::npos) << f->summary;
}

TEST(InputBoundLive, StarvedWorkerIsNotInputBound) {
  // Uses 0.3 CPU but waits 1.5 CPUs' worth on the run queue: it wants 90% of its 2 CPUs.
  Worker w;
  w.runq = 1.5;
  EXPECT_FALSE(Plateau(w).has_value());
  // The same CPU use without sched rows: only /proc's CPU used is known, and it is low.
  w.sched_rows = false;
  std::optional<Finding> f = Plateau(w);
  ASSERT_TRUE(f.has_value());
  EXPECT_NE(f->summary.find("CPU used, /proc"), std::string::npos) << f->summary;
}

TEST(InputBoundLive, UnevenRateOrBusyOrTrickleDoesNotFire) {
  Worker uneven;
  uneven.rate_wobble = 0.2;  // stddev / mean 0.2 > 0.1
  EXPECT_FALSE(Plateau(uneven).has_value());
  Worker busy;
  busy.cpu_used = 1.2;  // 60% of 2 CPUs
  busy.runq = 0;
  EXPECT_FALSE(Plateau(busy).has_value());
  Worker trickle;
  trickle.mb_per_s = 0.5;  // under hdfs_min_mb_per_s
  EXPECT_FALSE(Plateau(trickle).has_value());
  Worker short_window;
  short_window.samples = 4;  // 3 intervals, 1 after dropping the first and last
  EXPECT_FALSE(Plateau(short_window).has_value());
}

}  // namespace
}  // namespace tfdiag
