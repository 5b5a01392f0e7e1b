// Issue 46 item 3: a new task is found within one sample interval of its start, also under a
// flood of short-lived processes (before: with 100 new processes a second a real task waited for
// the next full rescan, 9.2 s, up to 30 s at the defaults). The agent at its defaults (--interval
// 1s, --rescan 30s) is timed from a task's spawn to the first /metrics page that shows it: first
// beside a quiet node (the baseline, in the same run), then while this test starts 100 processes
// a second that live about a second each (about 100 new pids at every sample: at 64 looks a
// sample, NewPidWatch::kMaxPerSample before, a task among them could wait a sample more).
// Load-gated: the judgement needs this process to wake up on time and the flood to reach its rate.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <string>
#include <thread>
#include <vector>

#include "collectors/attach/process_watch.h"
#include "tests/agent_util.h"
#include "tests/bpf_job.h"
#include "tests/ledger.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Starts `per_s` processes a second (/bin/sleep 1), each reaped as it exits, until stopped; the
// rate reached and this thread's wake-up lateness (p99, ms) come back from Stop().
class ProcessFlood {
 public:
  explicit ProcessFlood(int per_s)
      : t_([this, per_s] {
          const auto start = Clock::now();
          std::deque<pid_t> alive;
          char bin[] = "/bin/sleep", arg[] = "1";
          char* argv[] = {bin, arg, nullptr};
          char* envp[] = {nullptr};
          for (int n = 0; !stop_; ++n) {
            const auto due = start + std::chrono::microseconds(1000000LL * n / per_s);
            std::this_thread::sleep_until(due);
            late_.push_back(std::chrono::duration<double, std::milli>(Clock::now() - due).count());
            pid_t p = -1;
            if (posix_spawn(&p, bin, nullptr, nullptr, argv, envp) == 0) alive.push_back(p), ++n_;
            while (!alive.empty() && waitpid(alive.front(), nullptr, WNOHANG) != 0) {
              alive.pop_front();
            }
          }
          for (pid_t p : alive) kill(p, SIGKILL), waitpid(p, nullptr, 0);
          wall_s_ = Since(start);
        }) {}
  ~ProcessFlood() { Stop(); }
  void Stop() {
    if (!t_.joinable()) return;
    stop_ = true;
    t_.join();
  }
  double rate() const { return wall_s_ > 0 ? n_ / wall_s_ : 0; }
  double late_p99_ms() const { return Percentile99(late_); }

 private:
  std::atomic<bool> stop_{false};
  std::vector<double> late_;
  int64_t n_ = 0;
  double wall_s_ = 0;
  std::thread t_;
};

// Spawns a TF task (a waiting shell with TF_CONFIG and its own TFDIAG_JOB) and returns the
// seconds until the agent's /metrics shows it, polled every 20 ms; -1 after 40 s.
double SecondsToFind(int port, const std::string& job, int tf_port) {
  int fd = -1;
  const auto t0 = Clock::now();
  const pid_t task = SpawnWaitingShell(
      {},
      {"PATH=/usr/bin:/bin", "TFDIAG_JOB=" + job,
       fmt::format(R"(TF_CONFIG={{"cluster":{{"ps":["127.0.0.1:{}"]}},"task":{{"type":"ps",)"
                   R"("index":0}}}})",
                   tf_port)},
      &fd);
  if (task <= 0) return -1;
  const std::string want = fmt::format("tf_job=\"{}\"", job);
  double found = -1;
  while (found < 0 && Since(t0) < 40) {
    const std::string page = HttpGet(port, "/metrics");
    for (size_t at = 0; (at = page.find("\ntfdiag_task_up{", at)) != std::string::npos; ++at) {
      const size_t end = page.find('\n', at + 1);
      if (page.substr(at, end - at).find(want) != std::string::npos) {
        found = Since(t0);
        break;
      }
    }
    if (found < 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  close(fd);
  waitpid(task, nullptr, 0);
  return found;
}

TEST(AgentFlood, ATaskStartedUnderAFloodOfProcessesIsFoundWithinOneSample) {
  TempDir tmp;
  const std::vector<int> ports = FreePorts(2);
  const pid_t agent = SpawnProcess(TFDIAG_BINARY,
                                   {"attach", "--no-bpf", "--node-name", "n", "--serve",
                                    "127.0.0.1:" + std::to_string(ports[0])},
                                   "PATH=/usr/bin:/bin", tmp.File("agent.err"));
  ASSERT_GT(agent, 0);
  for (int i = 0; i < 100 && HttpGet(ports[0], "/healthz").empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::this_thread::sleep_for(std::chrono::seconds(2));  // past its first scan
  constexpr int kTries = 3;
  const std::string job = fmt::format("flood{}", getpid());
  // The baseline: the same tasks on the node as it is, spawned at different phases of the
  // agent's 1 s samples.
  std::vector<double> quiet, flooded;
  for (int i = 0; i < kTries; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(330 * i));
    quiet.push_back(SecondsToFind(ports[0], fmt::format("{}q{}", job, i), ports[1]));
  }
  ProcessFlood flood(100);
  std::this_thread::sleep_for(std::chrono::seconds(3));  // the flood under way
  for (int i = 0; i < kTries; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(330 * i + 500));
    flooded.push_back(SecondsToFind(ports[0], fmt::format("{}f{}", job, i), ports[1]));
  }
  flood.Stop();
  kill(agent, SIGTERM);
  int st = -1;
  waitpid(agent, &st, 0);
  const double late = flood.late_p99_ms();
  const double worst_quiet = *std::max_element(quiet.begin(), quiet.end());
  const double worst_flooded = *std::max_element(flooded.begin(), flooded.end());
  std::printf(
      "[ measured ] found after (s): quiet %.2f %.2f %.2f, under %.0f new processes/s %.2f %.2f "
      "%.2f; flood's wake-up lateness p99 %.1f ms\n",
      quiet[0], quiet[1], quiet[2], flood.rate(), flooded[0], flooded[1], flooded[2], late);
  ASSERT_GT(*std::min_element(quiet.begin(), quiet.end()), 0) << ReadFile(tmp.File("agent.err"));
  ASSERT_GT(*std::min_element(flooded.begin(), flooded.end()), 0)
      << "a task under the flood was not found in 40 s\n"
      << ReadFile(tmp.File("agent.err"));
  // Judged unless the machine could not run the flood or the baseline on time, by those
  // measures alone.
  if (late > 100 || flood.rate() < 90 || worst_quiet > 1.5) {
    GTEST_SKIP() << kTooLoaded << " to judge: the flood reached " << flood.rate()
                 << " processes/s (at least 90), woke up to " << late
                 << " ms late (p99, at most 100); the quiet baseline took up to " << worst_quiet
                 << " s (at most 1.5)";
  }
  // Within one sample interval (1 s) of its start, plus what finding it took on the quiet node
  // beyond its wait for the sample (its page's publication and this test's 20 ms polls).
  EXPECT_LE(worst_flooded, std::max(1.5, worst_quiet + 0.25))
      << "a task waited past its first sample under the flood";
}

}  // namespace
}  // namespace tfdiag::test
