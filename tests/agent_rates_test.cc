// Issue 36 item 4: the agent's figures count from when it first sees a task. Row-built captures:
// a worker measured only for the last 10 s of a 40 s window has its bytes/s over those 10 s.
// Live: a 40 s psload job (1 PS, 1 worker) starts after the agent, which rescans at its default
// 30 s and is scraped every second by a real Prometheus: the agent finds the worker within 2.5 s
// of its start (it looks at new processes every sample), its log names each task it starts and
// stops recording (job, task, pid, address), and the worker's bytes/s to ps:0 read back through
// `analyze --prometheus` is within 2% of the rate psload counted itself (issue 36 item 4: -4.6%
// and -47% before; the byte counters now say when they started and the task when it exited).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <ctime>
#include <thread>
#include <vector>

#include "analyzers/traffic_stats.h"
#include "collectors/attach/process_watch.h"
#include "collectors/prometheus/prom_client.h"
#include "core/capture_builder.h"
#include "tests/bpf_job.h"
#include "tests/cluster_metrics.h"
#include "tests/ledger.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

double NowSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// One sample of worker process `proc` at `ts` (ns): its CPU grown by half a core since the last
// second, and `sent` bytes sent so far on its one socket to PS task `ps`.
void AddWorkerSample(CaptureBuilder* b, uint32_t proc, uint32_t ps, TimeNs ts, int64_t sent) {
  ProcessSampleRow s;
  s.ts = ts;
  s.process = proc;
  s.threads = 4;
  s.cpu_ns = ts / 2;
  b->AddProcessSample(s);
  TrafficRow t;
  t.ts = ts;
  t.process = proc;
  t.local = b->Intern("127.0.0.1:40000");
  t.peer = b->Intern("127.0.0.1:2222");
  t.peer_task = ps;
  t.bytes_sent = sent;
  b->AddTraffic(t);
}

// The bytes/s of worker `w` (a row whose task this adds) to ps:0 in a 40 s window, sampled every
// second from `from_s` to `to_s` s, sending 1 MB a second from `from_s` on.
double WorkerToPsPerS(ProcessRow w, int from_s, int to_s) {
  constexpr TimeNs kS = 1000000000;
  CaptureBuilder b;
  b.meta().window_start = 0;
  b.meta().window_end = 40 * kS;
  w.task = b.AddTask("worker", 0, 0);
  w.host_cpus = 2;
  const uint32_t proc = b.AddProcess(w);
  const uint32_t ps = b.AddTask("ps", 0, 0);
  for (int i = from_s; i <= to_s; ++i) {
    AddWorkerSample(&b, proc, ps, i * kS, int64_t(i - from_s) * 1000000);
  }
  const TrafficStats ts = ComputeTrafficStats(b.Finish());
  EXPECT_EQ(ts.matrix.size(), 1u);
  return ts.matrix.empty() ? 0 : ts.matrix[0].to_ps_per_s;
}

// A worker first sampled 30 s into a 40 s window, sending 1 MB/s to ps:0 from then on.
TEST(AgentRates, BytesPerSecondOverTheTimeTheWorkerWasMeasured) {
  EXPECT_NEAR(WorkerToPsPerS(ProcessRow{}, 30, 40), 1e6, 1)
      << "over 10 s measured, not the 40 s window";
}

// A worker that exited at 20 s, whose store kept samples only to 17 s (it missed the scrapes
// after the exit on a loaded machine): its 1 MB/s is over the 17 s its counters cover, not the
// 20 s to its exit (8.7% low through VictoriaMetrics once); where a sample at the exit holds its
// final counters, over the 20 s.
TEST(AgentRates, AnExitAfterTheLastCountersEndsTheSpanAtThem) {
  ProcessRow w;
  w.first_ns = 0;
  w.last_ns = 20000000000;  // exited at 20 s
  w.exited = true;
  for (const int last : {17, 20}) {
    EXPECT_NEAR(WorkerToPsPerS(w, 0, last), 1e6, 1) << "samples to " << last << " s, exit at 20 s";
  }
}

// The agent's look at new processes between rescans: a process started since the last look is
// offered on its first kLooks looks (so one seen between fork and exec is looked at again), never
// when skipped; its exit is stamped by its pidfd to the poll, before any sample could see it.
TEST(AgentRates, NewProcessesAreOfferedOnTheirFirstLooksAndTheirExitIsStamped) {
  NewPidWatch watch;
  EXPECT_TRUE(watch.Next({}).empty()) << "the first look only records what runs";
  int fd_a = -1, fd_b = -1;
  const pid_t a = SpawnWaitingShell({}, {"PATH=/usr/bin:/bin"}, &fd_a);
  const pid_t b = SpawnWaitingShell({}, {"PATH=/usr/bin:/bin"}, &fd_b);
  ASSERT_GT(a, 0);
  ASSERT_GT(b, 0);
  auto has = [](const std::vector<pid_t>& v, pid_t p) {
    return std::find(v.begin(), v.end(), p) != v.end();
  };
  for (int look = 0; look < NewPidWatch::kLooks; ++look) {
    const std::vector<pid_t> got = watch.Next({b});
    if (!has(got, a) && watch.capped() > 0) {
      kill(a, SIGKILL), kill(b, SIGKILL), waitpid(a, nullptr, 0), waitpid(b, nullptr, 0);
      GTEST_SKIP() << "more than " << NewPidWatch::kMaxPerSample
                   << " processes started beside this test within one look";
    }
    EXPECT_TRUE(has(got, a)) << "look " << look;
    EXPECT_FALSE(has(got, b)) << "look " << look;
  }
  EXPECT_FALSE(has(watch.Next({}), a)) << "past its first looks";
  ExitWatch exits;
  ASSERT_TRUE(exits.Add(a));
  EXPECT_EQ(exits.TakeExit(a), 0);
  const double before = NowSeconds();
  kill(a, SIGKILL);
  for (int i = 0; i < 50 && exits.watching() > 0; ++i) exits.Poll(20);
  const double after = NowSeconds();
  const TimeNs at = exits.TakeExit(a);
  EXPECT_GE(at / 1e9, before - 0.01);
  EXPECT_LE(at / 1e9, after + 0.01);
  EXPECT_EQ(exits.watching(), 0u);
  waitpid(a, nullptr, 0);
  kill(b, SIGKILL);
  waitpid(b, nullptr, 0);
  close(fd_a);
  close(fd_b);
}

// How late this process wakes from 10 ms sleeps while it runs (the machine's load, measured in
// the same run as the job): the 99th percentile lateness, ms.
class WakeupLateness {
 public:
  WakeupLateness()
      : t_([this] {
          while (!stop_) {
            const auto a = std::chrono::steady_clock::now();
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
            late_.push_back(
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a)
                    .count() -
                10);
          }
        }) {}
  ~WakeupLateness() { Stop(); }
  double Stop() {
    if (t_.joinable()) {
      stop_ = true;
      t_.join();
    }
    return Percentile99(late_);
  }

 private:
  std::atomic<bool> stop_{false};
  std::vector<double> late_;
  std::thread t_;
};

TEST(AgentRates, NewTasksAreLoggedAndTheirRateIsMeasured) {
  std::string skip = PromServer::SkipReason();
  if (skip.empty()) skip = BpfSkipReason();  // bytes come from the eBPF traffic probe
  if (!skip.empty()) GTEST_SKIP() << skip;
  TempDir tmp;
  const int port = FreePorts(1)[0];
  const pid_t agent =
      SpawnProcess(TFDIAG_BINARY,
                   {"attach", "--interval", "1s", "--node-name", "node-r", "--tf-job", "ratejob",
                    "--serve", "127.0.0.1:" + std::to_string(port)},
                   "PATH=/usr/bin:/bin", tmp.File("agent.err"));
  ASSERT_GT(agent, 0);
  PromServer prom;
  std::string error;
  std::unique_ptr<PromClient> client = StartAgentScrape(&prom, port, &error);
  ASSERT_NE(client, nullptr) << error;
  const double t0 = std::floor(static_cast<double>(std::time(nullptr)));
  const std::vector<int> ports = FreePorts(2);
  const std::string cluster = fmt::format(
      R"({{"cluster":{{"ps":["127.0.0.1:{}"],"worker":["127.0.0.1:{}"]}},)", ports[0], ports[1]);
  // The job's own name (TFDIAG_JOB wins over --tf-job): TF tasks of other tests running beside
  // this one are recorded by the agent too, under --tf-job's name, and must not mix in.
  const std::string job = fmt::format("ratejob{}", getpid());
  WakeupLateness load;
  const pid_t ps = SpawnProcess(
      PSLOAD_BINARY, {"--summary=" + tmp.File("ps.json")},
      {"TF_CONFIG=" + cluster + R"("task":{"type":"ps","index":0}})", "TFDIAG_JOB=" + job},
      tmp.File("ps.log"));
  const pid_t worker = SpawnProcess(
      PSLOAD_BINARY, {"--duration=40", "--compute-us=2000", "--summary=" + tmp.File("w.json")},
      {"TF_CONFIG=" + cluster + R"("task":{"type":"worker","index":0}})", "TFDIAG_JOB=" + job},
      tmp.File("w.log"));
  const double worker_started = NowSeconds();
  int st = 0;
  waitpid(worker, &st, 0);
  ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << ReadFile(tmp.File("w.log"));
  const double late_ms = load.Stop();
  std::this_thread::sleep_for(std::chrono::seconds(3));  // the last scrapes
  kill(ps, SIGTERM);
  waitpid(ps, nullptr, 0);
  const double t1 = std::floor(static_cast<double>(std::time(nullptr)));
  const std::string bundle = tmp.File("ratejob.bundle.json");
  RunResult r = RunTfdiag(fmt::format(
      "analyze --prometheus {} --job {} --start {:.0f} --end {:.0f} --step 1s -f json --save {}",
      prom.url(), job, t0 - 2, t1, bundle));
  // When the agent's byte counters of the worker started: it found the worker then.
  auto since = client->Query(
      fmt::format("max_over_time(tfdiag_task_traffic_since_seconds{{tf_job=\"{}\",replica_type="
                  "\"worker\"}}[5m])",
                  job),
      t1);
  kill(agent, SIGTERM);
  waitpid(agent, nullptr, 0);
  ASSERT_EQ(r.exit_code, 0) << r.err << ReadFile(tmp.File("agent.err"));
  ASSERT_TRUE(since.ok() && since->size() == 1 && !(*since)[0].points.empty())
      << (since.ok() ? fmt::format("{} tfdiag_task_traffic_since_seconds series", since->size())
                     : since.status().message());
  const double found_after = (*since)[0].points[0].second - worker_started;
  // What psload counted: bytes to ps:0 over its own wall time.
  rapidjson::Document s = Json(ReadFile(tmp.File("w.json")));
  ASSERT_TRUE(s.IsObject());
  double sent = -1;
  for (const auto& p : s["peers"].GetArray()) {
    if (std::string(p["task"].GetString()) == "ps:0") sent = p["bytes_sent"].GetDouble();
  }
  ASSERT_GT(sent, 0);
  const double counted = sent / s["wall_time_s"].GetDouble();
  // What the agent measured, as the rules read it.
  const Capture c = LoadOrDie({bundle});
  const TrafficStats ts = ComputeTrafficStats(c);
  ASSERT_EQ(ts.matrix.size(), 1u) << r.out.substr(0, 2000);
  const double measured = ts.matrix[0].to_ps_per_s;
  const double rel = measured / counted - 1;
  std::printf(
      "[ measured ] worker:0 -> ps:0: psload %.0f bytes/s, agent via Prometheus %.0f "
      "bytes/s (%+.2f%%), found %.2f s after its start, window %.0f s, wake-up lateness p99 "
      "%.1f ms\n",
      counted, measured, 100 * rel, found_after, t1 - t0 + 2, late_ms);
  // Judged unless the machine was loaded while the job ran, by that measure alone (before,
  // the test skipped only when its assertions would have failed, so it could never fail).
  if (late_ms > 200) {
    GTEST_SKIP() << kTooLoaded << " to judge: this process woke up to " << late_ms
                 << " ms late (p99, at most 200)";
  }
  // Found by the look at new processes each sample (1 s), not by the 30 s rescan; the agent's
  // counters and the worker's exit time make its bytes/s within 2% of psload's own.
  EXPECT_GE(found_after, -0.5);
  EXPECT_LE(found_after, 2.5);
  EXPECT_LE(std::fabs(rel), 0.02) << "agent " << measured << " bytes/s, psload " << counted;
  // The agent's log: each task it started and stopped recording.
  const std::string log = ReadFile(tmp.File("agent.err"));
  EXPECT_NE(log.find(fmt::format("recording job '{}' task worker:0 (pid {}, 127.0.0.1:{})", job,
                                 worker, ports[1])),
            std::string::npos)
      << log;
  EXPECT_NE(log.find(fmt::format("stopped recording job '{}' task worker:0 (pid {}, "
                                 "127.0.0.1:{}): it exited",
                                 job, worker, ports[1])),
            std::string::npos)
      << log;
}

}  // namespace
}  // namespace tfdiag::test
