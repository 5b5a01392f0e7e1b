// Issue 37 item 7: the agent soaked beside churning TF tasks with hostile environments (bytes that
// are not UTF-8 in the task type, 120 KB TF_CONFIGs) and hostile HTTP clients (trickled request
// headers, readers that never read), while a scraper checks every page with promtool and the
// agent's RSS and series against their budgets (deploy/daemonset.yaml: 256 MiB; the page's
// 50,000 series). The short version runs in `make test` (TFDIAG_SOAK_SECONDS, default 40;
// TFDIAG_SOAK_TASKS live tasks, default 60); `make soak` runs it for 10 minutes beside 1,000.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <deque>
#include <random>
#include <set>
#include <thread>

#include "collectors/discovery/discovery.h"
#include "tests/agent_util.h"
#include "tests/test_util.h"

extern char** environ;

namespace tfdiag::test {
namespace {

using Clock = std::chrono::steady_clock;

int EnvInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && std::atoi(v) > 0 ? std::atoi(v) : fallback;
}

int64_t StatusKb(pid_t pid, const char* field) {
  const std::string text = ReadFile(fmt::format("/proc/{}/status", pid));
  const size_t at = text.find(std::string(field) + ":");
  return at == std::string::npos ? -1 : std::atoll(text.c_str() + at + std::strlen(field) + 1);
}

// The TF_CONFIG of churned task `n`: mostly plain, some hostile.
std::string ChurnConfig(uint64_t n) {
  const int index = static_cast<int>(n % 5000);
  std::string type = "worker", pad;
  if (n % 10 == 3) type = "w\xff\xfe";                 // not UTF-8
  if (n % 20 == 7) pad = std::string(120 << 10, ' ');  // 120 KB: one variable is < 128 KiB
  return fmt::format(
      "TF_CONFIG={{{}\"cluster\":{{\"{}\":[\"127.0.0.1:{}\"]}},\"task\":{{\"type\":\"{}\","
      "\"index\":0}}}}",
      pad, type, 20000 + index, type);
}

TEST(AgentSoak, ChurningHostileTasksAndSlowClientsStayWithinBudgets) {
  if (::access("/usr/bin/promtool", X_OK) != 0) GTEST_SKIP() << "no promtool (Debian prometheus)";
  const int seconds = EnvInt("TFDIAG_SOAK_SECONDS", 40);
  const int live = EnvInt("TFDIAG_SOAK_TASKS", 60);
  const int port = FreePorts(1)[0];
  TempDir dir;
  const pid_t agent =
      SpawnTfdiagChild({"attach", "--no-bpf", "--interval", "1s", "--rescan", "2s", "--node-name",
                        "soak", "--serve", fmt::format("127.0.0.1:{}", port)},
                       dir.File("agent.err"));
  ASSERT_GT(agent, 0);
  std::atomic<bool> stop{false};
  // The soak's own tasks by their job's name (named by their one address, UnnamedJobName; a
  // shared TFDIAG_JOB would fold their label sets together); other TF tasks on the node (other
  // tests' beside this one) are counted apart: the agent tracks them too, and its memory with
  // them.
  std::set<std::string> own;
  for (int index = 0; index < 5000; ++index) {
    ClusterSpec c;
    c.jobs["worker"] = JobTasks({fmt::format("127.0.0.1:{}", 20000 + index)});
    own.insert(fmt::format("tf_job=\"{}\"", UnnamedJobName(c)));
  }
  size_t max_foreign = 0;
  // Churn: `live` tasks, each living 2-8 s (short version) or 5-30 s (long runs).
  std::thread churn([&] {
    struct Task {
      pid_t pid;
      int fd;
      Clock::time_point end;
    };
    std::deque<Task> tasks;
    std::mt19937_64 rng(37);
    const int max_life_ms = seconds > 120 ? 30000 : 8000;
    uint64_t n = 0;
    while (!stop.load()) {
      const auto now = Clock::now();
      for (auto it = tasks.begin(); it != tasks.end();) {
        if (it->end > now) {
          ++it;
          continue;
        }
        // SIGKILL, not EOF: shells spawned later hold copies of this one's pipe.
        ::kill(it->pid, SIGKILL);
        ::close(it->fd);
        ::waitpid(it->pid, nullptr, 0);
        it = tasks.erase(it);
      }
      while (static_cast<int>(tasks.size()) < live && !stop.load()) {
        int fd = -1;
        const pid_t p = SpawnWaitingShell({}, {"PATH=/usr/bin:/bin", ChurnConfig(n++)}, &fd);
        if (p <= 0) break;
        const int life = 2000 + static_cast<int>(rng() % uint64_t(max_life_ms - 1000));
        tasks.push_back({p, fd, now + std::chrono::milliseconds(life)});
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    for (Task& t : tasks) ::kill(t.pid, SIGKILL), ::close(t.fd), ::waitpid(t.pid, nullptr, 0);
  });
  // Hostile clients: 20 trickling request headers, 10 asking for the page and never reading.
  std::thread clients([&] {
    std::vector<int> fds;
    while (!stop.load()) {
      for (int fd : fds) ::close(fd);
      fds.clear();
      for (int i = 0; i < 30; ++i) {
        const int fd = ConnectLoopback(port);
        if (fd < 0) continue;
        if (i >= 20) {
          const int small = 4096;
          ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
          (void)!::send(fd, "GET /metrics HTTP/1.0\r\n\r\n", 25, MSG_NOSIGNAL);
        }
        fds.push_back(fd);
      }
      for (int t = 0; t < 10 && !stop.load(); ++t) {
        for (size_t i = 0; i < 20 && i < fds.size(); ++i) {
          (void)!::send(fds[i], "G", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
      }
    }
    for (int fd : fds) ::close(fd);
  });
  int scrapes = 0, invalid = 0, failed = 0;
  size_t max_series = 0;
  int64_t max_rss_kb = 0;
  std::string first_problem;
  const auto end = Clock::now() + std::chrono::seconds(seconds);
  while (Clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::seconds(2));
    const std::string reply = HttpGet(port, "/metrics");
    ++scrapes;
    const size_t body_at = reply.find("\r\n\r\n");
    if (reply.rfind("HTTP/1.1 200", 0) != 0 || body_at == std::string::npos) {
      ++failed;
      if (first_problem.empty()) first_problem = "scrape failed: " + reply.substr(0, 200);
      continue;
    }
    const std::string page = reply.substr(body_at + 4);
    WriteFile(dir.File("page.prom"), page);
    RunResult check = RunShell("promtool check metrics < " + dir.File("page.prom"));
    if (check.exit_code != 0) {
      ++invalid;
      if (first_problem.empty()) first_problem = "promtool: " + check.out + check.err;
    }
    size_t series = 0, foreign = 0;
    for (size_t at = 0; at < page.size();) {
      const size_t nl = page.find('\n', at);
      if (page[at] != '#') ++series;
      const std::string_view line(page.data() + at,
                                  (nl == std::string::npos ? page.size() : nl) - at);
      const size_t job = line.find("tf_job=\"");
      if (line.rfind("tfdiag_task_up{", 0) == 0 &&
          (job == std::string_view::npos ||
           !own.count(std::string(line.substr(job, line.find('"', job + 8) + 1 - job))))) {
        ++foreign;
      }
      at = nl == std::string::npos ? page.size() : nl + 1;
    }
    max_foreign = std::max(max_foreign, foreign);
    max_series = std::max(max_series, series);
    max_rss_kb = std::max(max_rss_kb, StatusKb(agent, "VmRSS"));
  }
  stop.store(true);
  churn.join();
  clients.join();
  // The tasks are gone: after two rescans the agent's memory is back under its budget.
  std::this_thread::sleep_for(std::chrono::seconds(5));
  const int64_t after_kb = StatusKb(agent, "VmRSS");
  const int64_t hwm_kb = StatusKb(agent, "VmHWM");
  const std::string tail = ReadFile(dir.File("agent.err")).substr(0, 1500);
  ::kill(agent, SIGTERM);
  int status = 0;
  ::waitpid(agent, &status, 0);
  std::printf(
      "[ measured ] soak %d s beside %d churning tasks: %d scrapes (%d failed, %d invalid), "
      "max %zu series, RSS max %.1f MiB (peak %.1f), %.1f MiB after the tasks left; at most %zu "
      "TF tasks of others on the node\n",
      seconds, live, scrapes, failed, invalid, max_series, max_rss_kb / 1024.0, hwm_kb / 1024.0,
      after_kb / 1024.0, max_foreign);
  const std::string others = fmt::format(
      "(the agent also tracked up to {} TF tasks of other processes on the node)", max_foreign);
  EXPECT_EQ(failed, 0) << first_problem << "\n" << tail;
  EXPECT_EQ(invalid, 0) << first_problem;
  EXPECT_LE(max_series, 50000u);
  EXPECT_LT(hwm_kb, 256 * 1024) << "over the DaemonSet's 256 Mi limit " << others;
  EXPECT_LT(after_kb, 128 * 1024) << others;
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << tail;
}

}  // namespace
}  // namespace tfdiag::test
