// slow-ps-link (issue 44, a bandwidth-limited link to one PS): the judge on per-PS figures, and
// row-built captures (3 PS timelines with sized variables, their processes' /proc samples) where
// the rule must fire on a PS whose ops are slow while it sleeps on its sockets, and not on a PS
// whose host is slow (slow-ps-host's case) nor on a balanced job. The live test with a real
// shaped link: SlowPsLinkLive below (3 psload PS, ps:1 in a network namespace of its own behind
// a veth pair shaped by tc tbf, recorded by the attach recorder beside their timelines).
#include "analyzers/slow_ps_link.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "analyzers/analysis.h"
#include "collectors/attach/recorder.h"
#include "core/bundle.h"
#include "core/capture_builder.h"
#include "tests/bpf_job.h"
#include "tests/ledger.h"
#include "tests/recorded_job.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

constexpr TimeNs kMs = 1000000;
constexpr TimeNs kSecond = 1000 * kMs;

TEST(SlowPsLinkJudge, FiresOnTheSlowPsThatSleepsMorePerOp) {
  // 200 ops/s on every PS; ps:1 2x slower and 3x the voluntary switches per op.
  const std::vector<PsLinkFigures> ps = {
      {"ps:0", 0, 300, 200, 30}, {"ps:1", 2.0, 900, 200, 60}, {"ps:2", 0, 320, 200, 30}};
  std::vector<double> ratio;
  const std::vector<size_t> fire = JudgeSlowPsLink(ps, 3, 1.5, 1.5, &ratio);
  ASSERT_EQ(fire.size(), 1u);
  EXPECT_EQ(fire[0], 1u);
  EXPECT_NEAR(ratio[0], 900.0 / 320.0, 1e-9);  // against the other PS's upper median
}

TEST(SlowPsLinkJudge, SlowHostBalancedJobAndMissingFiguresDoNotFire) {
  std::vector<double> ratio;
  // A slow CPU host: its ops 2x slower, sleeping as often per op as the others.
  EXPECT_TRUE(
      JudgeSlowPsLink(
          {{"ps:0", 0, 300, 200, 30}, {"ps:1", 2.0, 330, 200, 60}, {"ps:2", 0, 320, 200, 30}}, 3,
          1.5, 1.5, &ratio)
          .empty());
  // Balanced: no slowdown, however often it sleeps.
  EXPECT_TRUE(
      JudgeSlowPsLink(
          {{"ps:0", 0, 300, 200, 30}, {"ps:1", 1.2, 900, 200, 30}, {"ps:2", 0, 320, 200, 30}}, 3,
          1.5, 1.5, &ratio)
          .empty());
  // No live figures of the other PS (one of two): too few to compare.
  EXPECT_TRUE(
      JudgeSlowPsLink(
          {{"ps:0", 0, -1, 200, 30}, {"ps:1", 2.0, 900, 200, 60}, {"ps:2", 0, 320, 200, 30}}, 3,
          1.5, 1.5, &ratio)
          .empty());
  // Its own switches unknown.
  EXPECT_TRUE(
      JudgeSlowPsLink(
          {{"ps:0", 0, 300, 200, 30}, {"ps:1", 2.0, -1, 200, 60}, {"ps:2", 0, 320, 200, 30}}, 3,
          1.5, 1.5, &ratio)
          .empty());
}

// One PS as a capture holds it: its gather and apply times per step and the voluntary context
// switches its process makes per second (-1: no process row).
struct Ps {
  double gather_ms = 1, apply_ms = 1;
  double voluntary_per_s = 400;
};

// 3 PS, each holding one 4 MiB part of an embedding, 200 steps of 5 ms: per step each PS runs a
// GatherV2 and a SparseApplyAdagrad on its part; with process rows, 9 samples over 2 s.
Capture JobCapture(const std::vector<Ps>& ps, bool live = true) {
  CaptureBuilder b;
  b.meta().host = "node-a";
  b.meta().window_start = 0;
  b.meta().window_end = 2 * kSecond;
  for (size_t i = 0; i < ps.size(); ++i) {
    DeviceName d;
    d.job = "ps", d.task = int(i), d.type = "CPU";
    const uint32_t dev = b.AddDevice(d);
    const std::string var = "embedding/embedding_weights/part_" + std::to_string(i);
    b.AddTensor({b.Intern(var), dev, 4 << 20});
    const StrId gather_in[] = {b.Intern(var + "/read"),
                               b.Intern("embedding/embedding_lookup/DynamicPartition_S1")};
    const StrId apply_in[] = {b.Intern(var), b.Intern(var + "/Adagrad"),
                              b.Intern("gradients/Reshape_S101")};
    const StrId gather = b.Intern("embedding/embedding_lookup/GatherV2_" + std::to_string(i));
    const StrId apply = b.Intern("Adagrad/update_" + var + "/SparseApplyAdagrad");
    for (int s = 0; s < 200; ++s) {
      const TimeNs t = s * 5 * kMs;
      b.AddOp(t, TimeNs(ps[i].gather_ms * kMs), dev, 0, gather, b.Intern("GatherV2"), gather_in, 2);
      b.AddOp(t + 2 * kMs, TimeNs(ps[i].apply_ms * kMs), dev, 0, apply,
              b.Intern("SparseApplyAdagrad"), apply_in, 3);
    }
    if (!live) continue;
    ProcessRow p;
    p.task = b.AddTask("ps", 0, int(i));
    p.pid = 100 + int(i);
    p.host_cpus = 8;
    const uint32_t proc = b.AddProcess(p);
    for (int k = 0; k <= 8; ++k) {
      ProcessSampleRow r;
      r.ts = k * kSecond / 4;
      r.process = proc;
      r.threads = 2;
      r.runnable = 0;
      r.cpu_ns = k * kSecond / 16;
      r.voluntary = int64_t(ps[i].voluntary_per_s * k / 4);
      r.involuntary = 10 * k;
      b.AddProcessSample(r);
    }
  }
  return b.Finish();
}

AnalysisResult Job(const std::vector<Ps>& ps, bool live = true) {
  StatusOr<RuleSet> rules = DefaultRuleSet();
  EXPECT_TRUE(rules.ok());
  return Analyze(JobCapture(ps, live), *rules);
}

std::optional<Finding> Find(const AnalysisResult& r, const std::string& rule,
                            const std::string& subject) {
  for (const Finding& f : r.findings) {
    if (f.rule_id == rule && f.Covers(subject)) return f;
  }
  return std::nullopt;
}

TEST(SlowPsLink, FiresOnTheLinkBoundPsAndFoldsSlowPsHostIn) {
  // ps:1's ops take 2x the others' while its process sleeps 3x as often (per op: every PS runs
  // 400 ops/s).
  const AnalysisResult r = Job({{1, 1, 400}, {2, 2, 1200}, {1, 1, 400}});
  const std::optional<Finding> f = Find(r, "slow-ps-link", "ps:1");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->severity, Severity::kMedium);
  EXPECT_FALSE(Find(r, "slow-ps-host", "ps:1").has_value()) << "one finding per cause";
  EXPECT_FALSE(Find(r, "slow-ps-link", "ps:0").has_value());
  double slowdown = 0, blocking = 0, folded = 0;
  for (const Figure& x : f->evidence) {
    if (x.label == "slowdown") slowdown = x.value;
    if (x.label == "voluntary context switches per op, over the other PS's") blocking = x.value;
    if (x.label == "also: slow-ps-host: slowdown") folded = x.value;
  }
  EXPECT_NEAR(slowdown, 2.0, 0.05);
  EXPECT_NEAR(blocking, 3.0, 0.05);
  EXPECT_NEAR(folded, slowdown, 1e-9);
  EXPECT_NE(f->summary.find("network link"), std::string::npos) << f->summary;
  EXPECT_NE(f->summary.find("not measured"), std::string::npos) << f->summary;
  EXPECT_NE(f->fix.find("network link has the other PS's bandwidth"), std::string::npos) << f->fix;
}

// The link's transfers slow the other PS too (twins-live's slow-link shape: the worker's
// requests to them wait behind ps:1's transfers, and the kernel's work for the shaped link runs
// on their CPUs): the fix takes out the slowdown against the other PS the link slows least, the
// upper median of ps:1's bounds (3x against ps:0), not the "at least" the rule fires on (their
// lower median: 2x against ps:2, whose ops the link stretched 1.5x). On the old code the fix
// divided ps:1's op times by 2.
TEST(SlowPsLink, FixTakesOutTheSlowdownAgainstThePsTheLinkSlowsLeast) {
  const Capture c = JobCapture({{1, 1, 400}, {3, 3, 1200}, {1.5, 1.5, 400}});
  StatusOr<RuleSet> rules = DefaultRuleSet();
  ASSERT_TRUE(rules.ok());
  const AnalysisResult r = Analyze(c, *rules);
  const std::optional<Finding> f = Find(r, "slow-ps-link", "ps:1");
  ASSERT_TRUE(f.has_value());
  EXPECT_NEAR(FigureValue(f->evidence, "slowdown"), 2.0, 0.05) << "the rule's lower bound";
  EXPECT_NEAR(FigureValue(f->evidence, "slowdown its fix takes out (upper median of its bounds)"),
              3.0, 0.05);
  EXPECT_NEAR(FigureValue(f->evidence, "also: slow-ps-host: slowdown, upper median of its bounds"),
              3.0, 0.05);
  EXPECT_NE(f->summary.find("at least 2.0x slower"), std::string::npos) << f->summary;
  EXPECT_NE(f->fix.find("its ops take 3.0x theirs"), std::string::npos) << f->fix;
  EXPECT_NE(f->fix.find("about 67% of its op time waiting on the link"), std::string::npos)
      << f->fix;
  const TaskStatsTable stats = ComputeTaskStats(c);
  const std::vector<ProcessStats> procs;
  const TrafficStats traffic;
  const std::vector<SchedStats> sched;
  const AnalysisInput in{c, stats, procs, traffic, sched};
  const FixPlan plan = SlowPsLinkFix(in, ReplayModel{}, *f, Rule{});
  ASSERT_EQ(plan.fix.host_speedup.size(), 1u) << plan.why;
  EXPECT_EQ(c.TaskLabelOf(plan.fix.host_speedup[0].first), "ps:1");
  EXPECT_NEAR(plan.fix.host_speedup[0].second, 3.0, 0.05);
  EXPECT_NE(plan.what.find("ps:1 (3.0x slower)"), std::string::npos) << plan.what;
}

// Findings as Analyze() groups them: one slow-ps-host finding whose objects are `subjects`.
Finding Grouped(const std::string& rule, const std::vector<std::string>& subjects) {
  Finding f;
  f.rule_id = rule;
  f.subject = subjects.size() == 1 ? subjects[0] : fmt::format("{} PS", subjects.size());
  for (const std::string& s : subjects) {
    FindingObject o;
    o.subject = s;
    o.summary = s + " runs its ops slower";
    o.evidence = {{"slowdown", 2.0, "x"}};
    f.objects.push_back(o);
  }
  if (subjects.size() == 1) f.evidence = f.objects[0].evidence, f.summary = f.objects[0].summary;
  return f;
}

// One finding per cause when several PS are grouped: slow-ps-host's objects that slow-ps-link
// names join the link finding (their figures under "also: slow-ps-host"), the rest stay; a
// group left with one PS becomes that PS's finding.
TEST(SlowPsLink, GroupedSlowHostsFoldPerPs) {
  std::vector<Finding> f = {Grouped("slow-ps-link", {"ps:1", "ps:2"}),
                            Grouped("slow-ps-host", {"ps:1", "ps:2"})};
  FoldSlowHostIntoLink(&f);
  ASSERT_EQ(f.size(), 1u) << "both PS's slow-ps-host objects fold into the link finding";
  EXPECT_EQ(f[0].rule_id, "slow-ps-link");
  for (const FindingObject& o : f[0].objects) {
    EXPECT_NE(o.summary.find("slow-ps-host on " + o.subject + " folded in"), std::string::npos)
        << o.summary;
    EXPECT_TRUE(std::any_of(o.evidence.begin(), o.evidence.end(), [](const Figure& x) {
      return x.label == "also: slow-ps-host: slowdown";
    })) << o.subject;
  }
  f = {Grouped("slow-ps-host", {"ps:1", "ps:3"}), Grouped("slow-ps-link", {"ps:1"})};
  FoldSlowHostIntoLink(&f);
  ASSERT_EQ(f.size(), 2u);
  const auto host = std::find_if(f.begin(), f.end(),
                                 [](const Finding& x) { return x.rule_id == "slow-ps-host"; });
  ASSERT_NE(host, f.end());
  EXPECT_EQ(host->subject, "ps:3") << "ps:3's slow host is a cause of its own";
  EXPECT_FALSE(host->Covers("ps:1"));
  const auto link = std::find_if(f.begin(), f.end(),
                                 [](const Finding& x) { return x.rule_id == "slow-ps-link"; });
  ASSERT_NE(link, f.end());
  EXPECT_NE(link->summary.find("slow-ps-host on ps:1 folded in"), std::string::npos);
}

TEST(SlowPsLink, NotOnASlowCpuHostNorABalancedJobNorWithoutLiveFigures) {
  // A slow CPU host: its ops 2x slower, its process sleeping per op as the others' do.
  const AnalysisResult host = Job({{1, 1, 400}, {2, 2, 420}, {1, 1, 400}});
  EXPECT_FALSE(Find(host, "slow-ps-link", "ps:1").has_value());
  EXPECT_TRUE(Find(host, "slow-ps-host", "ps:1").has_value());
  // Balanced: no PS slower, one sleeping more (a PS blocking on its sockets at the others'
  // speed is not what paces the job).
  const AnalysisResult balanced = Job({{1, 1, 400}, {1, 1, 1200}, {1, 1, 400}});
  EXPECT_FALSE(Find(balanced, "slow-ps-link", "ps:1").has_value());
  EXPECT_FALSE(Find(balanced, "slow-ps-host", "ps:1").has_value());
  // The timelines alone: a link cannot be told from a host; slow-ps-host stays and the rule
  // says why it could not judge.
  const AnalysisResult timelines = Job({{1, 1, 400}, {2, 2, 1200}, {1, 1, 400}}, false);
  EXPECT_FALSE(Find(timelines, "slow-ps-link", "ps:1").has_value());
  EXPECT_TRUE(Find(timelines, "slow-ps-host", "ps:1").has_value());
  bool said = false;
  for (const auto& [id, why] : timelines.rules_not_applicable) {
    said = said || (id == "slow-ps-link" && why.find("tfdiag attach") != std::string::npos);
  }
  EXPECT_TRUE(said);
}

// --- live: a real psload PS behind a shaped link -------------------------------------------------

// Namespace tfdsl<pid> with veth tfdsl<pid>h (here, 10.230.<pid % 256>.1/30) and tfdsl<pid>n
// (inside, .2/30), as make twins-live's (bench/twins_live/host.py; another /16 so both can run
// at once); Shape(mbit) puts a tc tbf of that rate on both ends (0: none). Removed on
// destruction: the namespace, and with it the pair.
class ShapedNetns {
 public:
  ShapedNetns() {
    const std::string tag = "tfdsl" + std::to_string(getpid());
    ns_ = tag, host_if_ = tag + "h", ns_if_ = tag + "n";
    const std::string net = "10.230." + std::to_string(getpid() % 256);
    ip_ = net + ".2";
    created_ = Sh("ip netns add " + ns_);
    ok_ = created_ && Sh(fmt::format("ip link add {} type veth peer name {}", host_if_, ns_if_)) &&
          Sh(fmt::format("ip link set {} netns {}", ns_if_, ns_)) &&
          Sh(fmt::format("ip addr add {}.1/30 dev {} && ip link set {} up", net, host_if_,
                         host_if_)) &&
          Sh(fmt::format("ip netns exec {} sh -c 'ip addr add {}/30 dev {} && ip link set {} up "
                         "&& ip link set lo up'",
                         ns_, ip_, ns_if_, ns_if_));
  }
  ~ShapedNetns() {
    if (!created_) return;
    Sh("ip netns del " + ns_);
    Sh("ip link del " + host_if_ + " 2>/dev/null; true");  // if the namespace kept it
  }
  bool ok() const { return ok_; }
  const std::string& ns() const { return ns_; }
  const std::string& ip() const { return ip_; }
  // burst 64 KiB (a GSO segment), a queue of 50 ms, as make twins-live's.
  bool Shape(int mbit) const {
    Sh(fmt::format("tc qdisc del dev {} root 2>/dev/null", host_if_));
    Sh(fmt::format("ip netns exec {} tc qdisc del dev {} root 2>/dev/null", ns_, ns_if_));
    if (mbit <= 0) return true;
    const std::string tbf = fmt::format("root tbf rate {}mbit burst 64kb latency 50ms", mbit);
    return Sh(fmt::format("tc qdisc add dev {} {}", host_if_, tbf)) &&
           Sh(fmt::format("ip netns exec {} tc qdisc add dev {} {}", ns_, ns_if_, tbf));
  }

 private:
  static bool Sh(const std::string& cmd) { return RunShell(cmd).exit_code == 0; }
  std::string ns_, host_if_, ns_if_, ip_;
  bool created_ = false, ok_ = false;
};

// 3 PS (ps:1 inside `net`, listening on its address) and 1 worker, the samples/psload job of
// make twins-live's slow-link shape (balanced, --show-memory for the variables' sizes), recorded
// beside its timelines (tests/recorded_job.h).
RecordedRun RunLinkJob(const TempDir& dir, const std::string& tag, const ShapedNetns& net,
                       const std::string& ip_bin) {
  RecordedJob job;
  job.ps_ips = {"127.0.0.1", net.ip(), "127.0.0.1"};
  job.extra_args = {"--show-memory=true"};
  job.spawn_ps = [&](int i, const std::vector<std::string>& args, const std::string& log) {
    if (i != 1) return SpawnProcess(PSLOAD_BINARY, args, "", log);
    // `ip netns exec` execs psload in place: the pid is the PS's.
    std::vector<std::string> a = {"netns", "exec", net.ns(), PSLOAD_BINARY};
    a.insert(a.end(), args.begin(), args.end());
    return SpawnProcess(ip_bin, a, "", log);
  };
  return RunRecordedJob(dir, tag, job);
}

// Load-gated (tests/CMakeLists.txt's live list: run serially, again when too loaded): with other
// work on this 2-core VM's CPUs the PS's ops stretch for the CPU they wait for, which is not the
// link's; a run is judged when other work used at most 0.3 cores.
class SlowPsLinkLive : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root for a network namespace and tc";
    const RunResult ip = RunShell("command -v tc >/dev/null && command -v ip");
    if (ip.exit_code != 0) GTEST_SKIP() << "needs ip and tc (iproute2) for a shaped link";
    ip_bin_ = ip.out.substr(0, ip.out.find('\n'));
    net_.emplace();
    if (!net_->ok()) GTEST_SKIP() << "cannot make a network namespace with a veth pair here";
  }
  RecordedRun Run(const TempDir& dir, const std::string& tag, int mbit) {
    if (!net_->Shape(mbit)) {
      RecordedRun r;
      r.why = fmt::format("cannot shape the veth pair to {} Mbit/s with tc tbf", mbit);
      return r;
    }
    return RunLinkJob(dir, tag, *net_, ip_bin_);
  }
  std::optional<ShapedNetns> net_;
  std::string ip_bin_;
};

// The shaped link's rate (make twins-live's slow-link shape's). At 400 Mbit/s the PS's ops ran
// a lower bound of 1.5-2.2x slower than the loopback PS's here, at the rules' min_slowdown of 1.5,
// and one CI run fell under it; at 300 Mbit/s 2.4-2.8x (15 runs, this 2-core VM, quiet).
constexpr int kLinkMbit = 300;

TEST_F(SlowPsLinkLive, NamesTheShapedPsAndNothingOnTheUnshapedJob) {
  TempDir dir;
  const RecordedRun shaped = Run(dir, "shaped", kLinkMbit), free = Run(dir, "free", 0);
  for (const RecordedRun* r : {&shaped, &free}) ASSERT_TRUE(r->why.empty()) << r->why;
  const double foreign = std::max(shaped.foreign_cores, free.foreign_cores);
  if (foreign > 0.3) {
    GTEST_SKIP() << fmt::format("{}: other work used {:.2f} cores during a run (at most 0.30)",
                                kTooLoaded, foreign);
  }
  const AnalysisResult r = AnalyzeRecordedRun(shaped);
  const std::optional<Finding> f = Find(r, "slow-ps-link", "ps:1");
  ASSERT_TRUE(f.has_value()) << "no slow-ps-link finding on the PS behind the shaped link";
  EXPECT_FALSE(Find(r, "slow-ps-host", "ps:1").has_value()) << "one finding per cause";
  EXPECT_FALSE(Find(r, "slow-ps-link", "ps:0").has_value());
  EXPECT_FALSE(Find(r, "slow-ps-link", "ps:2").has_value());
  const AnalysisResult u = AnalyzeRecordedRun(free);
  for (const std::string ps : {"ps:0", "ps:1", "ps:2"}) {
    EXPECT_FALSE(Find(u, "slow-ps-link", ps).has_value()) << ps << " unshaped";
  }
  std::printf("[ measured ] %s; other work %.2f cores\n", f->summary.c_str(), foreign);
}

// The prediction (the link at the other PS's bandwidth) against the same job unshaped, run
// alternately twice; within 20% (issue 44's goal for make twins-live) plus the noise of two runs
// of one job, and closer to the unshaped job than the shaped step is.
TEST_F(SlowPsLinkLive, PredictionMatchesTheUnshapedTwin) {
  TempDir dir;
  RecordedRun a1 = Run(dir, "shaped1", kLinkMbit), t1 = Run(dir, "free1", 0);
  RecordedRun a2 = Run(dir, "shaped2", kLinkMbit), t2 = Run(dir, "free2", 0);
  for (const RecordedRun* r : {&a1, &t1, &a2, &t2}) ASSERT_TRUE(r->why.empty()) << r->why;
  const TwinCheck c = CheckAgainstTwin(a1, t1, a2, t2, 0.15, [](const AnalysisResult& r) {
    return Find(r, "slow-ps-link", "ps:1");
  });
  if (!c.skip.empty()) GTEST_SKIP() << c.skip;
  ASSERT_TRUE(c.failure.empty()) << c.failure;
  std::printf(
      "[ measured ] shaped %.2f / %.2f ms, predicted unshaped %.2f ms, run unshaped %.2f / "
      "%.2f ms: %+.1f%% (noise %.0f%%, other work %.2f cores)\n",
      a1.step_ns / 1e6, a2.step_ns / 1e6, c.predicted_ns / 1e6, t1.step_ns / 1e6, t2.step_ns / 1e6,
      100 * c.err, 100 * c.noise, c.foreign);
  EXPECT_LT(std::abs(c.err), 0.20 + c.noise);
  EXPECT_LT(std::abs(c.predicted_ns - c.twin_ns), std::abs(c.asis_ns - c.twin_ns))
      << "the prediction is no closer to the unshaped job than the shaped step";
}

}  // namespace
}  // namespace tfdiag::test
