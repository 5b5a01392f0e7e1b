#include "tests/test_util.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "collectors/load_inputs.h"

namespace tfdiag::test {

TempDir::TempDir() {
  char tmpl[] = "/tmp/tfdiag_test_XXXXXX";
  char* p = ::mkdtemp(tmpl);
  path_ = p != nullptr ? p : "/tmp";
}

TempDir::~TempDir() {
  if (path_.rfind("/tmp/tfdiag_test_", 0) == 0) {
    std::string cmd = "rm -rf '" + path_ + "'";
    [[maybe_unused]] int rc = std::system(cmd.c_str());
  }
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteFile(const std::string& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary);
  out << contents;
}

RunResult RunTfdiag(const std::string& args) {
  return RunShell(std::string(TFDIAG_BINARY) + " " + args);
}

RunResult RunShell(const std::string& command) {
  TempDir dir;
  std::string cmd = command + " >'" + dir.File("out") + "' 2>'" + dir.File("err") + "' </dev/null";
  int rc = std::system(cmd.c_str());
  RunResult r;
  r.exit_code = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  r.out = ReadFile(dir.File("out"));
  r.err = ReadFile(dir.File("err"));
  return r;
}

bool HavePython3() { return std::system("python3 -c 'import json' >/dev/null 2>&1") == 0; }

std::string RunIndepBench(const std::string& script, const std::string& spec_flag,
                          const std::string& spec_json, const TempDir& dir) {
  if (!HavePython3()) {
    return "python3 is not installed: the independent simulator (bench/twins/indep) needs it";
  }
  WriteFile(dir.File("spec.json"), spec_json);
  const std::string cmd = std::string("python3 ") + SourceDir() + "/" + script + " " +
                          BuiltTfdiag() + " " + spec_flag + " " + dir.File("spec.json") +
                          " --work " + dir.path() + " --json " + dir.File("out.json") + " >" +
                          dir.File("out.txt") + " 2>&1";
  const int rc = std::system(cmd.c_str());
  if (rc == 0) return "";
  return script + " exited " + std::to_string(WIFEXITED(rc) ? WEXITSTATUS(rc) : -1) + ": " +
         ReadFile(dir.File("out.txt"));
}

std::vector<int> FreePorts(int n) {
  std::vector<int> fds, ports;
  for (int i = 0; i < n; ++i) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(a);
    EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    ports.push_back(ntohs(a.sin_port));
    fds.push_back(fd);
  }
  for (int fd : fds) close(fd);
  return ports;
}

std::string SharedTrace(const std::string& name) {
  return std::string(TFDIAG_SHARED_DIR) + "/traces/" + name;
}

pid_t SpawnWaitingShell(const std::vector<std::string>& extra, const std::vector<std::string>& env,
                        int* stdin_fd) {
  *stdin_fd = -1;
  int p[2], ready[2];
  if (::pipe(p) != 0) return -1;
  if (::pipe2(ready, O_CLOEXEC) != 0) return ::close(p[0]), ::close(p[1]), -1;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, p[0], 0);
  posix_spawn_file_actions_addclose(&fa, p[1]);
  posix_spawn_file_actions_adddup2(&fa, ready[1], 1);
  // The shell says it runs (one line on stdout, then stdout closed) before it blocks: its exec
  // is over then, so /proc shows its final comm, argv and environment. posix_spawn returns
  // while the exec is still under way (the new program's environment not yet in place).
  std::vector<std::string> args = {"sh", "-c", "echo; exec >&-; read x"};
  args.insert(args.end(), extra.begin(), extra.end());
  std::vector<std::string> envs = env;
  std::vector<char*> argv, envp;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : envs) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = -1;
  if (posix_spawn(&pid, "/bin/sh", &fa, nullptr, argv.data(), envp.data()) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&fa);
  ::close(p[0]);
  ::close(ready[1]);
  // Bounded: a shell that never starts (10 s) is killed and reported as a failed spawn.
  pollfd pf{ready[0], POLLIN, 0};
  char c = 0;
  const bool started = pid > 0 && ::poll(&pf, 1, 10000) == 1 && ::read(ready[0], &c, 1) == 1;
  ::close(ready[0]);
  if (!started) {
    if (pid > 0) ::kill(pid, SIGKILL), ::waitpid(pid, nullptr, 0);
    ::close(p[1]);
    return -1;
  }
  *stdin_fd = p[1];
  return pid;
}

std::string SharedRealworld(const std::string& name) {
  return std::string(TFDIAG_SHARED_DIR) + "/realworld/" + name;
}

bool SharedRealworldAvailable(const std::string& dir) {
  struct stat st;
  return ::stat(SharedRealworld(dir).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool SharedAvailable() {
  struct stat st;
  return ::stat((std::string(TFDIAG_SHARED_DIR) + "/traces").c_str(), &st) == 0;
}

Capture LoadOrDie(const std::vector<std::string>& paths) {
  StatusOr<Capture> c = LoadInputs(paths, {});
  EXPECT_TRUE(c.ok()) << c.status().message();
  if (!c.ok()) return Capture{};
  return std::move(*c);
}

double MedianWorkerStepNs(const Capture& c) {
  std::vector<double> steps;
  for (uint32_t t = 0; t < c.tasks.size(); ++t) {
    if (c.tasks[t].kind != JobKind::kWorker) continue;
    for (const StepRow& s : c.TaskSteps(t)) steps.push_back(double(s.end - s.start));
  }
  if (steps.empty()) return 0;
  std::nth_element(steps.begin(), steps.begin() + steps.size() / 2, steps.end());
  return steps[steps.size() / 2];
}

bool WriteControlFile(const std::string& path, const std::string& value) {
  std::ofstream f(path);
  f << value;
  f.flush();
  return static_cast<bool>(f);
}

std::string HttpGet(int port, const std::string& path) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string out;
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0) {
    std::string req = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
    if (send(fd, req.data(), req.size(), 0) == static_cast<ssize_t>(req.size())) {
      char buf[65536];
      for (ssize_t n; (n = recv(fd, buf, sizeof(buf), 0)) > 0;) out.append(buf, n);
    }
  }
  close(fd);
  return out;
}

CpuClock ReadCpuClock() {
  CpuClock c;
  std::ifstream stat("/proc/stat");
  std::string cpu;
  uint64_t v[8] = {};  // user nice system idle iowait irq softirq steal, clock ticks
  stat >> cpu;
  for (uint64_t& x : v) stat >> x;
  const double tick = 1.0 / double(sysconf(_SC_CLK_TCK));
  c.busy_s = double(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) * tick;
  c.steal_s = double(v[7]) * tick;
  auto seconds = [](const rusage& u) {
    return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
  };
  rusage self{}, children{};
  getrusage(RUSAGE_SELF, &self);
  getrusage(RUSAGE_CHILDREN, &children);
  c.own_s = seconds(self) + seconds(children);
  timespec w{};
  clock_gettime(CLOCK_MONOTONIC, &w);
  c.wall_s = double(w.tv_sec) + double(w.tv_nsec) / 1e9;
  return c;
}

double ForeignCores(const CpuClock& a, const CpuClock& b) {
  const double wall = b.wall_s - a.wall_s;
  if (wall <= 0) return 0;
  return std::max(0.0, ((b.busy_s - a.busy_s) - (b.own_s - a.own_s)) / wall);
}

}  // namespace tfdiag::test
