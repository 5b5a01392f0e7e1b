// The node agent (`tfdiag attach --serve`) as a DaemonSet runs it: no TF task at start, tasks
// joining and leaving, bounded series, labels that do not collide with Prometheus's own, the
// --serve address parsed with clear errors, and signals that end a recording with its bundle.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "collectors/discovery/discovery.h"
#include "report/metrics_server.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

// Starts the built tfdiag with `args`, stderr to `err_file`; returns its pid.
pid_t SpawnTfdiag(const std::vector<std::string>& args, const std::string& err_file) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<std::string> all = {TFDIAG_BINARY};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  if (posix_spawn(&pid, TFDIAG_BINARY, &fa, nullptr, argv.data(), environ) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&fa);
  return pid;
}

int WaitExit(pid_t pid, double timeout_s) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < end) {
    int st = 0;
    if (waitpid(pid, &st, WNOHANG) == pid)
      return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  return -1;
}

const std::vector<std::string> kEvaluatorEnv = {
    "PATH=/usr/bin:/bin",
    "TF_CONFIG={\"cluster\":{\"evaluator\":[\"127.0.0.1:29431\"]},\"task\":{\"type\":"
    "\"evaluator\",\"index\":0}}"};

TEST(AgentServe, ParsesAddressesAndSaysWhatIsWrong) {
  auto ok = [](const std::string& s) { return ParseServeAddress(s); };
  EXPECT_EQ(ok("9464")->Listen(), "127.0.0.1:9464");
  EXPECT_EQ(ok("127.0.0.1:0")->port, 0);
  EXPECT_TRUE(ok(":9464")->all_interfaces);
  EXPECT_EQ(ok(":9464")->Listen(), "0.0.0.0:9464");
  EXPECT_TRUE(ok("0.0.0.0:9464")->all_interfaces);
  EXPECT_EQ(ok("[::]:9464")->Listen(), "[::]:9464");
  EXPECT_TRUE(ok("[::]:9464")->all_interfaces);
  EXPECT_EQ(ok("localhost:80")->host, "127.0.0.1");
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"127.0.0.1:70000", "port '70000' is not a number from 0 to 65535"},
      {"127.0.0.1:", "port '' is not a number"},
      {"127.0.0.1:http", "port 'http'"},
      {"node.example:9464", "host 'node.example' is not an IPv4 address"},
      {"[::1", "expected [IPv6]:PORT"},
      {"[zz]:80", "'zz' is not an IPv6 address"},
      {"::1:80", "in brackets"},
      {"", "expected HOST:PORT"},
  };
  for (const auto& [in, want] : bad) {
    auto r = ParseServeAddress(in);
    ASSERT_FALSE(r.ok()) << in;
    EXPECT_NE(r.status().message().find(want), std::string::npos) << r.status().message();
  }
}

TEST(AgentServe, BadAddressesAndBusyPortsAreExit2WithTheReason) {
  const int port = FreePorts(1)[0];
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"127.0.0.1:" + std::to_string(port), "Address already in use"},
      {"127.0.0.1:99999", "not a number from 0 to 65535"},
      {"10.255.255.1:9464", "Cannot assign requested address"},
      {"[::1", "[IPv6]:PORT"},
  };
  for (const auto& [addr, want] : cases) {
    RunResult r = RunTfdiag("attach --no-bpf --duration 1s --serve '" + addr + "'");
    EXPECT_EQ(r.exit_code, 2) << addr << ": " << r.err;
    EXPECT_NE(r.err.find(want), std::string::npos) << addr << ": " << r.err;
    EXPECT_EQ(r.err.find("null context"), std::string::npos) << r.err;
  }
  close(fd);
}

TEST(AgentServe, EveryInterfaceIsAllowedWithAWarningNamingThem) {
  const int port = FreePorts(1)[0];
  RunResult r = RunTfdiag("attach --no-bpf --duration 1s --interval 200ms --serve 0.0.0.0:" +
                          std::to_string(port));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("listens on every IPv4 interface (lo 127.0.0.1"), std::string::npos)
      << r.err;
}

TEST(AgentServe, StartsWithoutTasksThenSeesNewOnesAndMarksThemGone) {
  TempDir tmp;
  const int port = FreePorts(1)[0];
  const pid_t agent =
      SpawnTfdiag({"attach", "--no-bpf", "--interval", "200ms", "--rescan", "500ms", "--node-name",
                   "node-a", "--serve", "127.0.0.1:" + std::to_string(port)},
                  tmp.File("agent.err"));
  ASSERT_GT(agent, 0);
  std::string page;
  for (int i = 0; i < 100 && page.find("200 OK") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    page = HttpGet(port, "/");
  }
  ASSERT_NE(page.find("tfdiag agent"), std::string::npos)
      << page << ReadFile(tmp.File("agent.err"));
  EXPECT_NE(page.find("/metrics"), std::string::npos);
  EXPECT_NE(HttpGet(port, "/nothing").find("404"), std::string::npos);
  // Still running with no evaluator task; one starts, and appears within a few rescans.
  std::string metrics = HttpGet(port, "/metrics");
  EXPECT_NE(metrics.find("200 OK"), std::string::npos);
  EXPECT_EQ(metrics.find("replica_type=\"evaluator\""), std::string::npos);
  int stdin_fd = -1;
  const pid_t task = SpawnWaitingShell({}, kEvaluatorEnv, &stdin_fd);
  ASSERT_GT(task, 0);
  // No pod, no name given: the job is named by its cluster's addresses (no PS here).
  ClusterSpec spec;
  spec.jobs["evaluator"] = JobTasks{"127.0.0.1:29431"};
  const std::string up =
      "tfdiag_task_up{namespace=\"\",node=\"node-a\",pod=\"\",replica_index=\"0\","
      "replica_type=\"evaluator\",tf_job=\"" +
      UnnamedJobName(spec) + "\"} ";
  bool seen = false;
  for (int i = 0; i < 100 && !seen; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    metrics = HttpGet(port, "/metrics");
    seen = metrics.find(up + "1") != std::string::npos;
  }
  EXPECT_TRUE(seen) << metrics;
  // Labels Prometheus owns never appear.
  EXPECT_EQ(metrics.find("{job="), std::string::npos);
  EXPECT_EQ(metrics.find(",job="), std::string::npos);
  EXPECT_EQ(metrics.find("instance="), std::string::npos);
  close(stdin_fd);  // the task ends
  waitpid(task, nullptr, 0);
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    gone = HttpGet(port, "/metrics").find(up + "0") != std::string::npos;
  }
  EXPECT_TRUE(gone);
  kill(agent, SIGTERM);  // agent > 0: asserted above
  EXPECT_EQ(WaitExit(agent, 10), 0) << ReadFile(tmp.File("agent.err"));
}

// Issue 15 item 13: a dropped SSH session (SIGHUP, then SIGPIPE) or SIGUSR1 must not lose the
// recording: the bundle is written as on SIGTERM.
TEST(AgentSignals, HupUsr1AndPipeWriteTheBundle) {
  for (int sig : {SIGHUP, SIGUSR1, SIGPIPE}) {
    TempDir tmp;
    int stdin_fd = -1;
    const pid_t task = SpawnWaitingShell({}, kEvaluatorEnv, &stdin_fd);
    ASSERT_GT(task, 0);
    const pid_t rec =
        SpawnTfdiag({"attach", "--no-bpf", "--pid", std::to_string(task), "--interval", "100ms",
                     "--duration", "60s", "-o", tmp.File("b.json")},
                    tmp.File("err"));
    ASSERT_GT(rec, 0);  // never kill(-1, ...)
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    kill(rec, sig);
    EXPECT_EQ(WaitExit(rec, 10), 0) << strsignal(sig) << ": " << ReadFile(tmp.File("err"));
    rapidjson::Document d;
    d.Parse(ReadFile(tmp.File("b.json")).c_str());
    ASSERT_TRUE(d.IsObject()) << strsignal(sig);
    ASSERT_EQ(d["processes"].Size(), 1u);
    EXPECT_EQ(d["processes"][0]["pid"].GetInt(), task);
    EXPECT_GE(d["process_samples"].Size(), 3u);
    close(stdin_fd);
    waitpid(task, nullptr, 0);
  }
}

// Issue 15 item 12: peers that are neither TF tasks nor HDFS fold into one series; gone tasks
// are dropped kGoneKeepNs after they went.
TEST(AgentSeries, OtherPeersFoldAndGoneTasksExpire) {
  TfdiagCollectable c;
  LiveFigures f;
  LiveTaskFigures& t = f.tasks.emplace_back();
  t.job = "ps", t.task = "ps:0", t.index = 0, t.pid = 11, t.tf_job = "j", t.has_traffic = true;
  for (int i = 0; i < 10000; ++i) {
    t.peers.push_back({"10.1." + std::to_string(i / 250) + "." + std::to_string(i % 250) + ":" +
                           std::to_string(40000 + i),
                       "", false, 10, 20});
  }
  t.peers.push_back({"10.0.0.9:2222", "worker:0", false, 1000, 2000});
  t.peers.push_back({"10.0.0.8:9866", "", true, 5, 7000});
  c.Update(f);
  size_t traffic = 0;
  double other_received = 0;
  for (const auto& m : c.Collect()) {
    if (m.name != "tfdiag_traffic_bytes_total") continue;
    traffic = m.metric.size();
    for (const auto& s : m.metric) {
      bool other = false, received = false;
      for (const auto& l : s.label) {
        other |= l.name == "peer" && l.value == "other";
        received |= l.name == "direction" && l.value == "received";
      }
      if (other && received) other_received = s.counter.value;
    }
  }
  EXPECT_EQ(traffic, 6u);  // worker:0, hdfs, other; sent and received each
  EXPECT_EQ(other_received, 200000);
  // The task goes away: shown down, then dropped.
  LiveFigures none;
  for (int i = 1; i <= 300; ++i) {
    none.ts = f.ts + TimeNs{i} * 1'000'000'000;
    c.Update(none);
  }
  EXPECT_EQ(c.tasks(), 1u);
  none.ts += 2'000'000'000;
  c.Update(none);
  EXPECT_EQ(c.tasks(), 0u);
  EXPECT_TRUE(c.Collect().empty());
}

}  // namespace
}  // namespace tfdiag::test
