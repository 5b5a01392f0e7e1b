// Issue 46 item 6: a node's memory. 1,000 tenant processes, each a TF task of its own cluster
// with a TF_CONFIG at the kernel's limit for one environment string (MAX_ARG_STRLEN, 32 pages:
// 131,072 bytes with "TF_CONFIG=" and its NUL; execve(2)), beside one agent at its DaemonSet
// settings but a 3 s rescan: the agent's peak RSS (VmHWM) stays under the DaemonSet's 256 Mi
// (before: 320 tenants with 106 KiB took it to 283 MB, every tracked task holding parsed copies
// of its spec and the eBPF sampler learning every address of every spec); a rescan parses 32 MiB
// of them (about 256), the next ones go on where it stopped, so all 1,000 are on the page within
// a few rescans (before: the same first 256 at every rescan once 512 were tracked); what waited
// is counted once per process and logged once.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "collectors/discovery/discovery.h"
#include "tests/agent_util.h"
#include "tests/bpf_job.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

// A TF_CONFIG of tenant `i`: ps:0 of a cluster of its own whose worker list fills the value to
// `bytes` (addresses 10.<i>.<k>:<port>, unique per tenant).
std::string TenantConfig(int i, size_t bytes) {
  std::string workers;
  for (int k = 0;; ++k) {
    const std::string a =
        fmt::format("\"10.{}.{}.{}:{}\"", (i >> 8) & 255, i & 255, k % 250, 2000 + k / 250);
    if (workers.size() + a.size() + 80 > bytes) break;
    workers += (workers.empty() ? "" : ",") + a;
  }
  return fmt::format(R"({{"cluster":{{"ps":["10.{}.{}.254:2222"],"worker":[{}]}},)"
                     R"("task":{{"type":"ps","index":0}}}})",
                     (i >> 8) & 255, i & 255, workers);
}

long StatusKb(pid_t pid, const char* key) {
  const std::string s = ReadFile(fmt::format("/proc/{}/status", pid));
  const size_t at = s.find(key);
  return at == std::string::npos ? -1 : std::strtol(s.c_str() + at + std::strlen(key), nullptr, 10);
}

double Counter(const std::string& page, const std::string& name) {
  const size_t at = page.find("\n" + name + "{");
  if (at == std::string::npos) return -1;
  const size_t end = page.find('\n', at + 1);
  return std::strtod(page.c_str() + page.rfind(' ', end) + 1, nullptr);
}

TEST(AgentTenants, AThousandTenantsWithTfConfigsAtTheKernelsLimitStayUnderTheDaemonSetLimit) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (the agent reads other processes' environ)";
  constexpr int kTenants = 1000;
  // MAX_ARG_STRLEN (PAGE_SIZE * 32) bounds "TF_CONFIG=<value>\0".
  constexpr size_t kValue = 131072 - sizeof("TF_CONFIG=");
  std::vector<pid_t> tenants;
  for (int i = 0; i < kTenants; ++i) {
    std::string env = "TF_CONFIG=" + TenantConfig(i, kValue);
    char* envp[] = {env.data(), nullptr};
    char sleep_bin[] = "/bin/sleep", arg[] = "600";
    char* argv[] = {sleep_bin, arg, nullptr};
    pid_t p = -1;
    if (posix_spawn(&p, argv[0], nullptr, nullptr, argv, envp) != 0) break;
    tenants.push_back(p);
  }
  auto kill_all = [&] {
    for (pid_t p : tenants) kill(p, SIGKILL);
    for (pid_t p : tenants) waitpid(p, nullptr, 0);
  };
  if (tenants.size() < kTenants) {
    kill_all();
    GTEST_SKIP() << "only " << tenants.size() << " tenant processes could be started";
  }
  TempDir tmp;
  const int port = FreePorts(1)[0];
  std::vector<std::string> args = {"attach",
                                   "--interval",
                                   "1s",
                                   "--rescan",
                                   "3s",
                                   "--serve",
                                   "127.0.0.1:" + std::to_string(port)};
  const bool bpf = BpfSkipReason().empty();
  if (!bpf) args.push_back("--no-bpf");
  const pid_t agent = SpawnTfdiagChild(args, tmp.File("agent.err"));
  ASSERT_GT(agent, 0);
  // Rescans every 3 s, 32 MiB of TF_CONFIG each (about 256 tenants): all 1,000 within 4 after
  // the first scan at start; 60 s leaves room for a loaded machine's slow reads.
  const auto start = std::chrono::steady_clock::now();
  std::string page;  // the last page served (a busy node may let a scrape time out)
  // This test's tenants on the page, by their job's name (each names a job of its own by its PS
  // address, UnnamedJobName): TF tasks of other tests beside it are not counted.
  std::set<std::string> ours;
  for (int i = 0; i < kTenants; ++i) {
    ClusterSpec c;
    c.jobs["ps"] = JobTasks({fmt::format("10.{}.{}.254:2222", (i >> 8) & 255, i & 255)});
    ours.insert(fmt::format("tf_job=\"{}\"", UnnamedJobName(c)));
  }
  auto count_up = [&](const std::string& p) {
    size_t n = 0;
    for (size_t at = 0; (at = p.find("\ntfdiag_task_up{", at)) != std::string::npos; ++at) {
      const std::string line = p.substr(at + 1, p.find('\n', at + 1) - at - 1);
      const size_t job = line.find("tf_job=\"");
      if (job != std::string::npos &&
          ours.count(line.substr(job, line.find('"', job + 8) + 1 - job))) {
        ++n;
      }
    }
    return n;
  };
  size_t up = 0;
  double all_up_s = -1;
  while (std::chrono::steady_clock::now() - start < std::chrono::seconds(14) ||
         (up < kTenants && std::chrono::steady_clock::now() - start < std::chrono::seconds(60))) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    const std::string got = HttpGet(port, "/metrics");
    if (got.find("tfdiag_task_up{") == std::string::npos) continue;
    page = got;
    up = count_up(page);
    if (up >= kTenants && all_up_s < 0) {
      all_up_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
  }
  const long hwm_kb = StatusKb(agent, "VmHWM:"), rss_kb = StatusKb(agent, "VmRSS:");
  kill(agent, SIGTERM);
  waitpid(agent, nullptr, 0);
  kill_all();
  const std::string log = ReadFile(tmp.File("agent.err"));
  auto lines_with = [&](const std::string& what) {
    size_t n = 0;
    for (size_t at = 0; (at = log.find(what, at)) != std::string::npos; ++at) ++n;
    return n;
  };
  const double tasks_dropped = Counter(page, "tfdiag_agent_tasks_dropped_total");
  const double environ_dropped = Counter(page, "tfdiag_agent_environ_dropped_total");
  const double spec_dropped = Counter(page, "tfdiag_agent_spec_addresses_dropped_total");
  std::printf(
      "[ measured ] %d tenants with %zu-byte TF_CONFIGs%s: agent peak RSS %.1f MiB (now %.1f), "
      "%zu of its tasks on the page (all after %.1f s), tasks dropped %.0f, environments left for "
      "later %.0f, spec addresses not learned %.0f\n",
      kTenants, kValue, bpf ? ", eBPF on" : "", hwm_kb / 1024.0, rss_kb / 1024.0, up, all_up_s,
      tasks_dropped, environ_dropped, spec_dropped);
  ASSERT_GT(hwm_kb, 0);
  EXPECT_LT(hwm_kb, 256 * 1024) << "over deploy/daemonset.yaml's memory limit, 256Mi";
  EXPECT_EQ(up, size_t{kTenants}) << "not every tenant was discovered\n" << log;
  // What waited is counted on its page, each process once (a rescan parses about 256 of them,
  // so at least the other 744 waited once; counted at every rescan it was 1,900 and more).
  EXPECT_GE(environ_dropped, 500) << page.substr(0, 2000);
  EXPECT_LE(environ_dropped, kTenants) << "counted more than once per process";
  EXPECT_EQ(tasks_dropped, 0);
  EXPECT_EQ(lines_with("tfdiag_agent_environ_dropped_total counts them"), 1u) << log;
}

}  // namespace
}  // namespace tfdiag::test
