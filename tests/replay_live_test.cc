// The what-if replay on a live job (issue 29): a psload PS/worker job (2 PS, 1 worker) with hot
// placement (every embedding row on ps:0) recorded by psload's own TF1 timelines (--timeline),
// analyzed; hot-ps's predicted step after partitioning is compared with the measured step of the
// partitioned twin (balanced placement: the embedding cut into one part per PS), run right after
// on this machine. One worker, so that the twin's two busy PS threads fit this 2-core machine:
// the replay serves each PS on its own threads and has no shared CPU in it. Each job runs twice,
// alternating: the baseline taken in the same test is how far two runs of one job differ here;
// the prediction must land within 20% of the twin (the mean of its runs) plus that noise.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "analyzers/analysis.h"
#include "rules/rule_set.h"
#include "tests/bpf_job.h"
#include "tests/ledger.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

constexpr double kWorkerS = 2;  // worker run time, s
// Other work's CPU during a run above which its timings are not judged, cores. A quiet run here
// shows under 0.1; two spinning processes, 1.5 and more. The replay of a capture made while
// two spinners ran missed its own step by up to 30% (the timelines' medians no longer add up
// to the step's), against at most 3% on a quiet machine (2026-11-28, this 2-core VM).
constexpr double kMaxForeignCores = 0.3;

// One psload job run; its timelines, or a reason it failed.
struct LiveRun {
  std::vector<std::string> timelines;
  double step_ns = 0;        // median worker step of its timelines
  double foreign_cores = 0;  // other work's CPU while it ran, cores (ForeignCores, steal included)
  double steal_cores = 0;    // the part of foreign_cores the hypervisor stole, cores
  std::string why;
};

// `max_steps` > 0: each worker stops after that many steps (else after kWorkerS seconds).
LiveRun RunJob(const TempDir& dir, const std::string& tag, const std::string& placement,
               int max_steps = 0) {
  LiveRun run;
  const std::vector<int> ports = FreePorts(3);
  const std::string ps_hosts = fmt::format("127.0.0.1:{},127.0.0.1:{}", ports[0], ports[1]);
  const std::string worker_hosts = fmt::format("127.0.0.1:{}", ports[2]);
  // ps:0 the bottleneck, not the workers' CPU (samples/psload/README.md).
  auto args = [&](const std::string& job, int i) {
    std::vector<std::string> a = {
        "--job_name=" + job,
        fmt::format("--task_index={}", i),
        "--ps_hosts=" + ps_hosts,
        "--worker_hosts=" + worker_hosts,
        "--placement=" + placement,
        "--ps-threads=1",
        "--compute-us=100",
        "--rows-per-step=8192",
        "--ps-cpu-ns-per-row=200",  // ps:0 CPU-bound: 1.6 ms a request
        "--timeline=" + dir.File(fmt::format("{}-{}{}.json", tag, job, i))};
    if (job == "worker") {
      a.push_back(max_steps > 0 ? fmt::format("--steps={}", max_steps)
                                : fmt::format("--duration={}", kWorkerS));
      a.push_back("--parallel-rpcs=true");  // requests to the PS concurrently, as TF's
    }
    return a;
  };
  const CpuClock started = ReadCpuClock();
  std::vector<pid_t> ps, ws;
  for (int i = 0; i < 2; ++i) {
    ps.push_back(SpawnProcess(PSLOAD_BINARY, args("ps", i), "",
                              dir.File(fmt::format("{}-ps{}.log", tag, i))));
  }
  ws.push_back(SpawnProcess(PSLOAD_BINARY, args("worker", 0), "", dir.File(tag + "-worker0.log")));
  int failed = 0;
  for (pid_t p : ws) {
    int status = 0;
    waitpid(p, &status, 0);
    failed += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  for (pid_t p : ps) kill(p, SIGTERM);
  for (pid_t p : ps) {
    int status = 0;
    waitpid(p, &status, 0);
    failed += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  const CpuClock ended = ReadCpuClock();
  run.foreign_cores = ForeignCores(started, ended);
  if (ended.wall_s > started.wall_s) {
    run.steal_cores = (ended.steal_s - started.steal_s) / (ended.wall_s - started.wall_s);
  }
  if (failed > 0) {
    run.why = fmt::format("{} psload task(s) of the {} run failed: {}", failed, tag,
                          ReadFile(dir.File(tag + "-worker0.log")));
    return run;
  }
  for (const char* t : {"ps0", "ps1", "worker0"}) {
    run.timelines.push_back(dir.File(fmt::format("{}-{}.json", tag, t)));
  }
  const Capture c = LoadOrDie(run.timelines);
  run.step_ns = MedianWorkerStepNs(c);
  if (run.step_ns <= 0) {
    run.why = tag + ": no worker steps in the timelines";
    return run;
  }
  return run;
}

// The hot-ps finding of `run`'s timelines analyzed with the default rules; none when no rule
// fired on a PS.
std::optional<Finding> HotPsFinding(const LiveRun& run) {
  StatusOr<RuleSet> rules = DefaultRuleSet();
  EXPECT_TRUE(rules.ok());
  if (!rules.ok()) return std::nullopt;
  const AnalysisResult r = Analyze(LoadOrDie(run.timelines), *rules);
  for (const Finding& f : r.findings) {
    if (f.rule_id == "hot-ps") return f;
  }
  return std::nullopt;
}

// The timelines say what the tasks did, whatever the machine's load: the worker's 25 steps
// (from its `_SOURCE` ops), and on ps:0 one gather and one apply per step of the hot embedding,
// which tfdiag names as the hot PS's variable.
TEST(ReplayLive, PsloadTimelinesShowEveryStepAndRequest) {
  TempDir dir;
  const LiveRun hot = RunJob(dir, "hot", "hot", 25);
  ASSERT_TRUE(hot.why.empty()) << hot.why;
  const Capture c = LoadOrDie(hot.timelines);
  int64_t gathers = 0, applies = 0, reads = 0;
  for (uint32_t t = 0; t < c.tasks.size(); ++t) {
    const std::string label(c.Str(c.tasks[t].label));
    if (c.tasks[t].kind == JobKind::kWorker) {
      EXPECT_EQ(c.TaskSteps(t).size(), 25u) << label;
    }
  }
  c.ops.ForEach([&](const OpRow& op) {
    const std::string_view type = c.Str(c.OpType(op));
    gathers += type == "GatherV2";
    applies += type == "SparseApplyAdagrad";
    reads += type == "ReadVariableOp";
    return true;
  });
  EXPECT_EQ(gathers, 25);
  EXPECT_EQ(applies, 25);
  EXPECT_EQ(reads, 25);  // the dense pull from ps:1, once per step
  StatusOr<RuleSet> rules = DefaultRuleSet();
  ASSERT_TRUE(rules.ok());
  const AnalysisResult r = Analyze(c, *rules);
  bool hot_ps = false;
  for (const Finding& f : r.findings) {
    if (f.rule_id != "hot-ps") continue;
    hot_ps = true;
    EXPECT_EQ(f.subject, "ps:0");
    EXPECT_NE(f.summary.find("embedding/embedding_weights"), std::string::npos) << f.summary;
  }
  EXPECT_TRUE(hot_ps);
}

// The replay of the hot capture as it is gives its measured step: the worker's control _Recv
// spans the wait for ps:0's apply, which the replay must not count twice (it replayed 9.2 ms
// against a measured 6.3 ms, 46%, and every prediction on psload was withheld). Timing-sensitive:
// other work and the hypervisor's steal stretch the 25 steps unevenly, so both are measured and
// a disturbed run is made again. CI saw 12.8% on a run with 0.5 cores of other work, and 11.1% on
// one with 0.24 cores of other work and steal together (2026-11-30); quiet runs miss by 3% or less.
constexpr double kMaxOtherCoresAsIs = 0.2;  // other work during the as-is run, cores
// Steal during the as-is run, cores: it comes in spells of 10-40 s here and a loopback job loses
// far more than the CPU stolen (ScalingLive's kMaxStealBaseline).
constexpr double kMaxStealAsIs = 0.1;
constexpr int kAsIsTries = 10;  // runs of about 0.5 s each ...
constexpr int kAsIsWaitS = 3;   // ... this far apart, before the test is not judged

TEST(ReplayLive, ReplayOfTheHotCaptureAsItIsGivesItsStep) {
  TempDir dir;
  LiveRun hot;
  for (int k = 1;; ++k) {
    hot = RunJob(dir, "hot" + std::to_string(k), "hot", 25);
    ASSERT_TRUE(hot.why.empty()) << hot.why;
    const double other = std::max(0.0, hot.foreign_cores - hot.steal_cores);
    if (other <= kMaxOtherCoresAsIs && hot.steal_cores <= kMaxStealAsIs) break;
    if (k == kAsIsTries) {
      GTEST_SKIP() << fmt::format(
          "{} to judge a replay against its run: on each of {} runs other work or steal was "
          "over its bar (the last: other work {:.2f} cores, at most {:.2f}; steal {:.2f} cores, "
          "at most {:.2f})",
          kTooLoaded, kAsIsTries, other, kMaxOtherCoresAsIs, hot.steal_cores, kMaxStealAsIs);
    }
    std::printf("[ attempt  ] %d of %d not judged: other work %.2f cores, steal %.2f cores\n", k,
                kAsIsTries, other, hot.steal_cores);
    std::this_thread::sleep_for(std::chrono::seconds(kAsIsWaitS));
  }
  const std::optional<Finding> f = HotPsFinding(hot);
  ASSERT_TRUE(f.has_value()) << "the hot run shows no hot PS";
  std::printf(
      "[ measured ] replay as it is misses the hot run's step by %+.1f%%; other work and steal "
      "%.2f cores (steal %.2f)\n",
      f->impact.baseline_miss_pct, hot.foreign_cores, hot.steal_cores);
  EXPECT_LT(std::abs(f->impact.baseline_miss_pct), 10.0) << f->impact.why;
}

// The share of a core each of `n` threads gets now: each spins 100 ms of its own CPU time
// (CLOCK_THREAD_CPUTIME_ID) and divides it by the wall time that took; the smallest share.
double CoreShare(int n) {
  std::vector<double> share(n);
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) {
    threads.emplace_back([&share, i] {
      timespec c0{}, c1{}, w0{}, w1{};
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
      clock_gettime(CLOCK_MONOTONIC, &w0);
      volatile double x = 1;
      do {
        for (int k = 0; k < 10000; ++k) x = x * 0.999999 + 1e-9;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
      } while ((c1.tv_sec - c0.tv_sec) * 1e9 + (c1.tv_nsec - c0.tv_nsec) < 100e6);
      clock_gettime(CLOCK_MONOTONIC, &w1);
      share[i] = ((c1.tv_sec - c0.tv_sec) * 1e9 + (c1.tv_nsec - c0.tv_nsec)) /
                 ((w1.tv_sec - w0.tv_sec) * 1e9 + (w1.tv_nsec - w0.tv_nsec));
    });
  }
  for (std::thread& t : threads) t.join();
  return *std::min_element(share.begin(), share.end());
}

// One attempt of HotPsPredictionMatchesThePartitionedTwinRun: the hot and the partitioned job
// run alternately twice; `skip` says why the attempt cannot be judged ("" when it can).
struct TwinAttempt {
  LiveRun hot, twin, hot2, twin2;
  std::string skip;
  double noise = 0;
};

TwinAttempt RunTwinAttempt(const TempDir& dir, int k) {
  TwinAttempt a;
  const std::string n = std::to_string(k);
  a.hot = RunJob(dir, "hot" + n, "hot");
  a.twin = RunJob(dir, "balanced" + n, "balanced");
  a.hot2 = RunJob(dir, "hot" + n + "b", "hot");
  a.twin2 = RunJob(dir, "balanced" + n + "b", "balanced");
  for (const LiveRun* r : {&a.hot, &a.twin, &a.hot2, &a.twin2}) {
    if (!r->why.empty()) return a;  // the caller asserts on it
  }
  const double foreign = std::max(
      {a.hot.foreign_cores, a.twin.foreign_cores, a.hot2.foreign_cores, a.twin2.foreign_cores});
  if (foreign > kMaxForeignCores) {
    a.skip = fmt::format(
        "{} to judge a prediction: other work used {:.2f} cores during one of the runs (at "
        "most {:.2f})",
        kTooLoaded, foreign, kMaxForeignCores);
    return a;
  }
  a.noise = std::max(std::abs(a.hot.step_ns - a.hot2.step_ns) / a.hot.step_ns,
                     std::abs(a.twin.step_ns - a.twin2.step_ns) / a.twin.step_ns);
  if (a.noise > 0.15) {
    a.skip = fmt::format(
        "{} (noisy) to judge a prediction: two runs of the same job differ by {:.1f}% on this "
        "machine now (at most 15%)",
        kTooLoaded, 100 * a.noise);
  }
  return a;
}

TEST(ReplayLive, HotPsPredictionMatchesThePartitionedTwinRun) {
  // The twin's two PS threads each need a core of their own; other work on the machine takes
  // CPU the replay (one CPU per PS thread) does not know about.
  const double share = CoreShare(2);
  if (share < 0.8) {
    GTEST_SKIP() << kTooLoaded << " for a timing comparison: two spinning threads get "
                 << 100 * share << "% of a core each, the twin's two PS threads need a core each";
  }
  // A burst of other work (a compile on this shared 2-core VM) lasts seconds: an attempt it
  // spoils (foreign CPU or noise over the gates) is run again, up to kAttempts times, and the
  // first attempt that passes both gates is judged; the gates themselves are unchanged.
  constexpr int kAttempts = 3;
  TempDir dir;
  TwinAttempt a;
  for (int k = 0; k < kAttempts; ++k) {
    a = RunTwinAttempt(dir, k);
    for (const LiveRun* r : {&a.hot, &a.twin, &a.hot2, &a.twin2})
      ASSERT_TRUE(r->why.empty()) << r->why;
    if (a.skip.empty()) break;
    std::printf("[ attempt  ] %d of %d not judged: %s\n", k + 1, kAttempts, a.skip.c_str());
  }
  if (!a.skip.empty()) GTEST_SKIP() << a.skip << " (" << kAttempts << " attempts)";

  // The prediction from each hot run, averaged: each run's capture has its own noise, as each
  // twin run has (the twin side is averaged too).
  double predicted = 0;
  std::string why;
  for (const LiveRun* hot : {&a.hot, &a.hot2}) {
    const std::optional<Finding> f = HotPsFinding(*hot);
    ASSERT_TRUE(f.has_value()) << "the hot run shows no hot PS";
    EXPECT_EQ(f->subject, "ps:0");
    // Issue 35: on a machine quiet enough to get here, the replay of the hot run as it is gives
    // its step (ReplayOfTheHotCaptureAsItIsGivesItsStep checks that within 10%), so a prediction
    // is made: before the applies a control _Recv spans stopped being replayed twice, it was
    // always withheld here ("misses the measured step by 46%").
    ASSERT_EQ(f->impact.method, "replay") << f->impact.why;
    predicted += f->impact.step_ns_after_fix / 2;
    why = f->impact.why;
  }
  const double measured = (a.twin.step_ns + a.twin2.step_ns) / 2;
  const double err = (predicted - measured) / measured;
  std::printf(
      "[ measured ] hot step %.3f / %.3f ms, predicted after partitioning %.3f ms (mean of the "
      "two hot runs' predictions), partitioned twin %.3f / %.3f ms, error %+.1f%% (noise "
      "%.1f%%); two threads got %.0f%% of a core\n",
      a.hot.step_ns / 1e6, a.hot2.step_ns / 1e6, predicted / 1e6, a.twin.step_ns / 1e6,
      a.twin2.step_ns / 1e6, 100 * err, 100 * a.noise, 100 * share);
  // 15% as for the simulated twins, plus 5% for a bias the replay had here (a partitioned
  // lookup's round trip per PS, before the replay measured the answers' transfers: 11 quiet runs
  // -1.5% to -12.6%; 4 quiet runs on 2026-11-28: -4.4% to +5.1%), plus the noise.
  EXPECT_LT(std::abs(err), 0.20 + a.noise) << why;
}

}  // namespace
}  // namespace tfdiag::test
