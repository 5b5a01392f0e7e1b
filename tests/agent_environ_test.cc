// The agent as a DaemonSet pod (issue 30 item 7): SIGTERM stops it within a few seconds even in
// the middle of a scan of the node's processes, and a rescan does not read every process's
// environment again (a process's environment is fixed at exec: read once, cached).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "collectors/discovery/discovery.h"
#include "collectors/procfs/proc_reader.h"
#include "tests/bpf_job.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

// "name{labels}" or "name" -> value, from an HTTP response holding an exposition.
double MetricValue(const std::string& page, const std::string& series) {
  size_t at = page.find("\n" + series + " ");
  if (at == std::string::npos) return -1;
  return std::atof(page.c_str() + at + series.size() + 2);
}

double ProcessCpuSeconds(pid_t pid) {
  StatusOr<ProcStat> s = ReadProcStat(pid);
  return s.ok() ? (s->utime_ns + s->stime_ns) / 1e9 : -1;
}

// A process whose /proc/PID/environ is `bytes` long: its environment range set, with
// prctl(PR_SET_MM, PR_SET_MM_MAP) (the checkpoint/restore interface: no capability needed
// when the executable is left alone), to an untouched anonymous mapping, so the kernel serves
// zero pages and the test costs no memory. Any unprivileged workload can do this; the agent
// reads at most kEnvironMaxBytes of an environment (no TF_CONFIG here: the whole range is read).
// Returns the pid, or -1 with *why.
pid_t SpawnBigEnviron(size_t bytes, std::string* why) {
  // The child's address space is a copy of ours: our map, with the environment moved.
  const std::string stat = ReadFile("/proc/self/stat");
  std::vector<unsigned long long> f;  // fields after the comm, from field 3 (state) on
  {
    size_t at = stat.rfind(')') + 2;
    while (at < stat.size()) {
      size_t sp = stat.find(' ', at);
      if (sp == std::string::npos) sp = stat.size();
      f.push_back(std::strtoull(stat.c_str() + at, nullptr, 10));
      at = sp + 1;
    }
  }
  if (f.size() < 49) {
    *why = "/proc/self/stat lacks the memory map fields";
    return -1;
  }
  auto field = [&](int n) { return f[n - 3]; };  // proc(5) field numbers
  prctl_mm_map map{};
  map.start_code = field(26), map.end_code = field(27), map.start_stack = field(28);
  map.start_data = field(45), map.end_data = field(46), map.start_brk = field(47);
  map.arg_start = field(48), map.arg_end = field(49);
  map.brk = reinterpret_cast<unsigned long>(sbrk(0));
  map.exe_fd = static_cast<__u32>(-1);
  int fds[2];
  if (pipe(fds) != 0) return -1;
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    void* m = mmap(nullptr, bytes, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    map.env_start = reinterpret_cast<unsigned long>(m);
    map.env_end = map.env_start + bytes;
    int err = m == MAP_FAILED ? ENOMEM : 0;
    if (err == 0 && prctl(PR_SET_MM, PR_SET_MM_MAP, &map, sizeof map, 0) != 0) err = errno;
    (void)!write(fds[1], &err, sizeof err);
    close(fds[1]);
    if (err != 0) _exit(1);
    for (;;) pause();
  }
  close(fds[1]);
  int err = -1;
  (void)!read(fds[0], &err, sizeof err);
  close(fds[0]);
  if (err != 0) {
    *why = std::string("prctl(PR_SET_MM_MAP): ") + std::strerror(err);
    if (pid > 0) kill(pid, SIGKILL), waitpid(pid, nullptr, 0);
    return -1;
  }
  return pid;
}

// 150 processes with 16 MB environments: one scan of them reads 2.4 GB (several seconds on this
// 2-core VM). The agent is stopped with SIGTERM while it scans them at start: it must exit
// within 3 s. Before the fix it finished the scan first (and a rescan likewise).
TEST(AgentStop, SigtermMidScanStopsWithinThreeSeconds) {
  std::vector<pid_t> big;
  for (int i = 0; i < 150; ++i) {
    std::string why;
    const pid_t p = SpawnBigEnviron(kEnvironMaxBytes, &why);
    if (p < 0) {
      for (pid_t q : big) kill(q, SIGKILL), waitpid(q, nullptr, 0);
      GTEST_SKIP() << why;
    }
    big.push_back(p);
  }
  // How long one scan of them takes here, for the record (the agent's own is like it).
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 30; ++i) (void)ReadEnvVar(big[i], "TF_CONFIG");
  const double scan_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() * 5;
  TempDir tmp;
  const int port = FreePorts(1)[0];
  const pid_t agent = SpawnProcess(TFDIAG_BINARY,
                                   {"attach", "--no-bpf", "--interval", "1s", "--rescan", "1s",
                                    "--serve", "127.0.0.1:" + std::to_string(port)},
                                   "PATH=/usr/bin:/bin", tmp.File("agent.err"));
  ASSERT_GT(agent, 0);
  // It serves /metrics before its first scan; give the scan 0.5 s to be well under way.
  for (int i = 0; i < 100 && ReadFile(tmp.File("agent.err")).find("serving") == std::string::npos;
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const double cpu_before = ProcessCpuSeconds(agent);
  kill(agent, SIGTERM);
  const auto t1 = std::chrono::steady_clock::now();
  int st = -1;
  while (waitpid(agent, &st, WNOHANG) == 0 &&
         std::chrono::steady_clock::now() - t1 < std::chrono::seconds(30)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const double stop_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  kill(agent, SIGKILL);
  waitpid(agent, nullptr, WNOHANG);
  for (pid_t q : big) kill(q, SIGKILL);
  for (pid_t q : big) waitpid(q, nullptr, 0);
  std::printf(
      "[ measured ] a scan of 150 x 16 MB environments: ~%.1f s; agent (%.2f s CPU) "
      "stopped %.2f s after SIGTERM\n",
      scan_s, cpu_before, stop_s);
  EXPECT_LT(stop_s, 3.0) << ReadFile(tmp.File("agent.err"));
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << ReadFile(tmp.File("agent.err"));
}

// A process with a 1 MB environment (real: nine 120 KB variables through execve) beside a TF
// task, the agent rescanning every 200 ms: over 3 s (about 15 rescans) it reads environments of
// new processes only (tfdiag_agent_environ_reads_total), not every process at every rescan.
TEST(AgentEnviron, RescansReadOnlyNewProcessesEnvironments) {
  std::vector<std::string> env = {"PATH=/usr/bin:/bin"};
  for (int i = 0; i < 9; ++i)
    env.push_back("BIG" + std::to_string(i) + "=" + std::string(120000, 'x'));
  int big_fd = -1, task_fd = -1;
  const pid_t big = SpawnWaitingShell({}, env, &big_fd);
  ASSERT_GT(big, 0);
  const pid_t task = SpawnWaitingShell(
      {},
      {"PATH=/usr/bin:/bin",
       "TF_CONFIG={\"cluster\":{\"ps\":[\"127.0.0.1:29517\"]},\"task\":{\"type\":\"ps\","
       "\"index\":0}}"},
      &task_fd);
  ASSERT_GT(task, 0);
  TempDir tmp;
  const int port = FreePorts(1)[0];
  const pid_t agent =
      SpawnProcess(TFDIAG_BINARY,
                   {"attach", "--no-bpf", "--interval", "200ms", "--rescan", "200ms", "--node-name",
                    "n", "--serve", "127.0.0.1:" + std::to_string(port)},
                   "PATH=/usr/bin:/bin", tmp.File("agent.err"));
  ASSERT_GT(agent, 0);
  const std::string reads = "tfdiag_agent_environ_reads_total{node=\"n\"}";
  double first = -1;
  for (int i = 0; i < 100 && first < 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    first = MetricValue(HttpGet(port, "/metrics"), reads);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // past the first scan
  const std::string a = HttpGet(port, "/metrics");
  const double cpu0 = ProcessCpuSeconds(agent);
  const auto t0 = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::seconds(3));
  const std::string b = HttpGet(port, "/metrics");
  const double cpu = ProcessCpuSeconds(agent) - cpu0;
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const StatusOr<std::vector<pid_t>> pids = ListPids("/");
  const size_t processes = pids.ok() ? pids->size() : 0;
  kill(agent, SIGTERM);
  waitpid(agent, nullptr, 0);
  close(big_fd), close(task_fd);
  waitpid(big, nullptr, 0), waitpid(task, nullptr, 0);
  const double r0 = MetricValue(a, reads), r1 = MetricValue(b, reads);
  ASSERT_GE(r0, 0) << a << ReadFile(tmp.File("agent.err"));
  const double rescans = wall / 0.2;
  std::printf(
      "[ measured ] %zu processes, %.0f rescans in %.1f s: %.0f environ reads (%.1f per "
      "rescan), agent CPU %.1f%% of a core\n",
      processes, rescans, wall, r1 - r0, (r1 - r0) / rescans, 100 * cpu / wall);
  // New processes on this busy machine (compilers of parallel builds) are read once each; every
  // process at every rescan would be `processes` per rescan.
  EXPECT_LT((r1 - r0) / rescans, 0.25 * processes);
  EXPECT_NE(b.find("replica_type=\"ps\""), std::string::npos);
}

// The cache's key: a process that execs (same pid, same start time) with TF_CONFIG is read again
// and found; a process seen before is not read again; the counts are exact for one pid.
TEST(AgentEnviron, AnExecIsReadAgainAndNothingElseIs) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[0], 0);
    close(fds[0]), close(fds[1]);
    const char* env[] = {"PATH=/usr/bin:/bin", nullptr};
    execle("/bin/sh", "sh", "-c",
           "read x; exec env 'TF_CONFIG={\"cluster\":{\"ps\":[\"127.0.0.1:29518\"]},"
           "\"task\":{\"type\":\"ps\",\"index\":0}}' sh -c 'read y'",
           static_cast<char*>(nullptr), env);
    _exit(127);
  }
  ASSERT_GT(pid, 0);
  close(fds[0]);
  EnvironCache cache;
  DiscoveryOptions o;
  o.pids = {pid};
  o.cache = &cache;
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  StatusOr<DiscoveryResult> before = DiscoverTfTasks(o);
  ASSERT_TRUE(before.ok());
  EXPECT_TRUE(before->tasks.empty());
  EXPECT_EQ(before->environ_reads, 1);
  StatusOr<DiscoveryResult> again = DiscoverTfTasks(o);
  EXPECT_EQ(again->environ_reads, 0);    // the same process: cached
  ASSERT_EQ(write(fds[1], "\n", 1), 1);  // the shell execs env, which execs sh with TF_CONFIG
  bool found = false;
  int reads = 0;
  for (int i = 0; i < 50 && !found; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    StatusOr<DiscoveryResult> after = DiscoverTfTasks(o);
    ASSERT_TRUE(after.ok());
    reads += after->environ_reads;
    found = after->tasks.size() == 1 && after->tasks[0].pid == pid;
  }
  EXPECT_TRUE(found) << "an exec with TF_CONFIG under the same pid was not read again";
  EXPECT_LE(reads, 4);  // env's exec and sh's: TF_CONFIG each, TFDIAG_JOB once
  StatusOr<DiscoveryResult> last = DiscoverTfTasks(o);
  EXPECT_EQ(last->environ_reads, 0);
  EXPECT_EQ(last->tasks.size(), 1u);
  close(fds[1]);
  waitpid(pid, nullptr, 0);
}

}  // namespace
}  // namespace tfdiag::test
