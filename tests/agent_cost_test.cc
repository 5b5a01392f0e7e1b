// The node agent's own cost (issue 46 item 3: under 0.5% of a core at its defaults). Its CPU
// time depends on the machine's load (bench/agent_cost.sh measures it side by side); what made it
// cost does not: how often it wakes up. Sleeping to the next sample in 20 ms polls woke the
// agent about 60 times a second (a fifth of its CPU: each wake-up is two context switches and a
// poll over every task's pidfd). Its voluntary context switches (/proc/PID/task/*/status, the
// kernel's count of each time a thread blocked) are a load-independent measure of that.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "collectors/procfs/proc_reader.h"
#include "tests/bpf_job.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

// The voluntary context switches of every thread of `pid`, summed; -1 when unreadable.
int64_t VoluntarySwitches(pid_t pid) {
  StatusOr<std::vector<ThreadInfo>> threads = ReadThreads(pid, "/", ThreadReads::kLean);
  if (!threads.ok()) return -1;
  int64_t sum = 0;
  for (const ThreadInfo& t : *threads) sum += std::max<int64_t>(t.voluntary_switches, 0);
  return sum;
}

// One TF task, the agent at its defaults (--interval 1s, --rescan 30s; /proc only, so the test
// needs no privileges), unscraped for 5 s: it wakes up about five times a second (a look at its
// stop flag every 250 ms, its sample, the HTTP thread's idle second), not sixty.
TEST(AgentCost, TheAgentWakesAFewTimesASecondNotSixty) {
  int task_fd = -1;
  const pid_t task = SpawnWaitingShell(
      {},
      {"PATH=/usr/bin:/bin",
       "TF_CONFIG={\"cluster\":{\"ps\":[\"127.0.0.1:29531\"]},\"task\":{\"type\":\"ps\","
       "\"index\":0}}"},
      &task_fd);
  ASSERT_GT(task, 0);
  TempDir tmp;
  const int port = FreePorts(1)[0];
  const pid_t agent = SpawnProcess(
      TFDIAG_BINARY,
      {"attach", "--no-bpf", "--node-name", "n", "--serve", "127.0.0.1:" + std::to_string(port)},
      "PATH=/usr/bin:/bin", tmp.File("agent.err"));
  ASSERT_GT(agent, 0);
  bool found = false;
  for (int i = 0; i < 100 && !found; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    found = HttpGet(port, "/metrics").find("replica_type=\"ps\"") != std::string::npos;
  }
  std::this_thread::sleep_for(std::chrono::seconds(1));  // past the first scan
  const int64_t s0 = VoluntarySwitches(agent);
  const auto t0 = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::seconds(5));
  const int64_t s1 = VoluntarySwitches(agent);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  kill(agent, SIGTERM);
  int st = -1;
  waitpid(agent, &st, 0);
  close(task_fd);
  waitpid(task, nullptr, 0);
  ASSERT_TRUE(found) << ReadFile(tmp.File("agent.err"));
  ASSERT_GE(s0, 0);
  const double per_s = (s1 - s0) / wall;
  std::printf("[ measured ] agent at its defaults, one task, unscraped: %.1f wake-ups a second\n",
              per_s);
  EXPECT_LE(per_s, 12) << "the agent sleeps in short steps again (it was 59 a second)";
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << ReadFile(tmp.File("agent.err"));
}

}  // namespace
}  // namespace tfdiag::test
