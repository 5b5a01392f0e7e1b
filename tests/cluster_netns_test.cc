// Issue 16, "tests with real parts" 1: a real Prometheus server scraping three tfdiag agents,
// each in its own network namespace standing for a node, recording a psload PS/worker job whose
// traffic crosses the namespaces; `analyze --prometheus` must give the cluster-wide worker x PS
// matrix and the hot PS with its node. Nothing is mocked: the namespaces, the veth pairs, the
// bridge, the sockets, the eBPF probes and the server are the kernel's and Prometheus's own.
//
// Layout (subnet 10.213.N.0/24, N from the test's pid): a bridge in the root namespace
// (10.213.N.1, where Prometheus scrapes from), and per node a namespace with a veth pair to the
// bridge and its address 10.213.N.11+i:
//   node-a: ps:0 (the hot PS: --placement=hot sends every row to it)    agent :9464
//   node-b: ps:1                                                         agent :9464
//   node-c: worker:0, worker:1                                           agent :9464
// TF_CONFIG names tasks as Kubeflow does (nsjob-ps-0:2222), resolved by the /etc/hosts that
// `ip netns exec` bind-mounts from /etc/netns/<ns>/hosts. The tasks are not in pods, so the
// agents name the job from those addresses (tf_job="nsjob") and analyze finds the tasks from the
// agents' series. On one host every agent sees every process, so each is given its node's tasks
// with --pod (a DaemonSet's agent sees only its node's).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <ctime>
#include <set>
#include <thread>

#include "collectors/prometheus/prom_client.h"
#include "tests/bpf_job.h"
#include "tests/cluster_metrics.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

constexpr int kNodes = 3;
const char* const kNodeNames[kNodes] = {"node-a", "node-b", "node-c"};
constexpr int kAgentPort = 9464;

// Network namespaces, veth pairs, a bridge and the processes started in them; all removed by
// the destructor (also when an assertion ends the test early).
class NetnsNodes {
 public:
  NetnsNodes() {
    RemoveStale();
    const int id = static_cast<int>(getpid());  // at most 7 digits (pid_max <= 4194304)
    tag_ = fmt::format("tfd{}", id);            // + "n0", "br", "v0h": at most 13 characters
    // A /24 no interface of this machine uses (another run of this test may hold one).
    const std::string addrs = RunShell("ip -4 -o addr show").out;
    for (int k = 0; k < 250; ++k) {
      subnet_ = fmt::format("10.213.{}.", (id + k) % 250);
      if (addrs.find(" " + subnet_) == std::string::npos) break;
    }
  }
  // Namespaces and bridges left by a run of this test that was killed (its pid is gone).
  static void RemoveStale() {
    std::string list = RunShell("ip -o link show type bridge; ip netns list").out;
    std::set<std::string> gone;
    for (size_t at = list.find("tfd"); at != std::string::npos; at = list.find("tfd", at + 3)) {
      size_t end = at + 3;
      while (end < list.size() && std::isdigit(static_cast<unsigned char>(list[end]))) ++end;
      if (end == at + 3) continue;
      const std::string pid = list.substr(at + 3, end - at - 3);
      if (access(("/proc/" + pid).c_str(), F_OK) != 0) gone.insert(pid);
    }
    for (const std::string& pid : gone) {
      RunShell(fmt::format(
          "for i in 0 1 2; do ip netns del tfd{0}n$i; rm -rf /etc/netns/tfd{0}n$i; done "
          "2>/dev/null; ip link del tfd{0}br 2>/dev/null",
          pid));
    }
  }
  ~NetnsNodes() {
    for (pid_t p : pids_) {
      if (p > 0) kill(p, SIGKILL);
    }
    for (pid_t p : pids_) {
      if (p > 0) waitpid(p, nullptr, 0);
    }
    for (int i = 0; i < kNodes; ++i) {
      RunShell(fmt::format("ip netns del {0} 2>/dev/null; rm -rf /etc/netns/{0}", Ns(i)));
    }
    RunShell("ip link del " + tag_ + "br 2>/dev/null; rmdir /etc/netns 2>/dev/null");
  }
  std::string Ns(int i) const { return fmt::format("{}n{}", tag_, i); }
  std::string Ip(int i) const { return subnet_ + std::to_string(11 + i); }
  std::string BridgeIp() const { return subnet_ + "1"; }

  // Creates the bridge and the namespaces; "" on success, else what failed.
  std::string Setup(const std::string& hosts) {
    std::string cmd = fmt::format(
        "set -e; ip link add {0}br type bridge; ip addr add {1}/24 dev {0}br; "
        "ip link set {0}br up; ",
        tag_, BridgeIp());
    for (int i = 0; i < kNodes; ++i) {
      cmd += fmt::format(
          "ip netns add {0}; ip link add {1}v{2}h type veth peer name {1}v{2}n; "
          "ip link set {1}v{2}n netns {0}; ip link set {1}v{2}h master {1}br; "
          "ip link set {1}v{2}h up; ip netns exec {0} ip addr add {3}/24 dev {1}v{2}n; "
          "ip netns exec {0} ip link set {1}v{2}n up; ip netns exec {0} ip link set lo up; "
          "mkdir -p /etc/netns/{0}; ",
          Ns(i), tag_, i, Ip(i));
    }
    RunResult r = RunShell(cmd);
    if (r.exit_code != 0) return r.err + r.out;
    for (int i = 0; i < kNodes; ++i) WriteFile("/etc/netns/" + Ns(i) + "/hosts", hosts);
    return "";
  }

  // Runs `bin args` in node i's namespace with exactly `env`, output to `log`.
  pid_t Exec(int i, const std::string& bin, const std::vector<std::string>& args,
             const std::string& env, const std::string& log) {
    std::vector<std::string> all = {"netns", "exec", Ns(i), bin};
    all.insert(all.end(), args.begin(), args.end());
    const pid_t p = SpawnProcess("/usr/sbin/ip", all, env, log);
    pids_.push_back(p);
    return p;
  }
  // Stops one process started by Exec (SIGTERM, then SIGKILL after 5 s); its exit code.
  int Stop(pid_t p, int sig = SIGTERM) {
    if (p <= 0) return -1;
    kill(p, sig);
    int st = 0;
    for (int i = 0; i < 100; ++i) {
      if (waitpid(p, &st, WNOHANG) == p) {
        Forget(p);
        return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    kill(p, SIGKILL);
    waitpid(p, &st, 0);
    Forget(p);
    return -1;
  }

 private:
  void Forget(pid_t p) {
    for (pid_t& x : pids_) x = x == p ? -1 : x;
  }
  std::string tag_, subnet_;
  std::vector<pid_t> pids_;
};

std::string SkipReason() {
  if (geteuid() != 0) return "needs root for ip netns and eBPF";
  if (access("/usr/sbin/ip", X_OK) != 0) return "no /usr/sbin/ip (iproute2)";
  std::string why = BpfSkipReason();
  if (!why.empty()) return why;
  why = PromServer::SkipReason();
  if (!why.empty()) return why;
  RunResult r = RunShell(
      "ip netns add tfdprobe$$ && ip netns del tfdprobe$$ && ip link add tfdprobe$$ type bridge "
      "&& ip link del tfdprobe$$");
  if (r.exit_code != 0) return "cannot create network namespaces or bridges here: " + r.err;
  return "";
}

const rapidjson::Value* FindFinding(const rapidjson::Document& d, const std::string& rule,
                                    const std::string& subject) {
  for (const auto& f : d["findings"].GetArray()) {
    if (f["rule"].GetString() == rule && (subject.empty() || f["subject"].GetString() == subject))
      return &f;
  }
  return nullptr;
}

// Waits until Prometheus has scraped every agent with `up` 1 (true) or 30 s passed.
bool AgentsUp(PromClient* client) {
  for (int i = 0; i < 300; ++i) {
    auto r = client->Query("sum(up{job=\"tfdiag-agent\"})", std::time(nullptr));
    if (r.ok() && !r->empty() && r->front().points[0].second == kNodes) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

TEST(ClusterNetns, AgentsInThreeNamespacesGiveTheMatrixAndTheHotPsWithItsNode) {
  const std::string skip = SkipReason();
  if (!skip.empty()) GTEST_SKIP() << skip;
  TempDir tmp;
  NetnsNodes nodes;
  // Tasks: ps:0 on node-a, ps:1 on node-b, worker:0 and worker:1 on node-c.
  const int task_node[4] = {0, 1, 2, 2};
  const char* const task_host[4] = {"nsjob-ps-0", "nsjob-ps-1", "nsjob-worker-0", "nsjob-worker-1"};
  std::string hosts = "127.0.0.1 localhost\n";
  for (int t = 0; t < 4; ++t) hosts += nodes.Ip(task_node[t]) + " " + task_host[t] + "\n";
  const std::string setup = nodes.Setup(hosts);
  ASSERT_EQ(setup, "") << "setting up the namespaces";
  // Prometheus scrapes the three agents every second.
  std::string scrape =
      "  - job_name: tfdiag-agent\n    scrape_interval: 1s\n    scrape_timeout: 1s\n"
      "    static_configs:\n";
  for (int i = 0; i < kNodes; ++i) {
    scrape += fmt::format("      - targets: ['{}:{}']\n        labels: {{agent_node: {}}}\n",
                          nodes.Ip(i), kAgentPort, kNodeNames[i]);
  }
  PromServer prom;
  std::string error;
  ASSERT_TRUE(prom.Start("", scrape, &error)) << error;
  // One agent per node, each serving on its node's address, with no task yet.
  const std::vector<std::vector<std::string>> node_pods = {
      {"nsjob-ps-0"}, {"nsjob-ps-1"}, {"nsjob-worker-0", "nsjob-worker-1"}};
  pid_t agent[kNodes];
  for (int i = 0; i < kNodes; ++i) {
    std::vector<std::string> args = {
        "attach",      "--serve",     nodes.Ip(i) + ":" + std::to_string(kAgentPort),
        "--node-name", kNodeNames[i], "--interval",
        "500ms",       "--rescan",    "500ms"};
    for (const std::string& p : node_pods[i]) args.insert(args.end(), {"--pod", p});
    agent[i] = nodes.Exec(i, TFDIAG_BINARY, args, "PATH=/usr/bin:/bin",
                          tmp.File(fmt::format("agent-{}.log", i)));
    ASSERT_GT(agent[i], 0);
  }
  PromClientOptions po;
  po.url = prom.url();
  po.deadline_s = 600;  // one client polls the agents for the whole test
  auto client = PromClient::Create(po);
  ASSERT_TRUE(client.ok());
  ASSERT_TRUE(AgentsUp(client->get()))
      << ReadFile(tmp.File("agent-0.log")) << ReadFile(prom.dir() + "/prometheus.log");
  // The job: PS first, then the workers (hot placement: every row to ps:0).
  const std::string cluster = R"({"cluster":{"ps":["nsjob-ps-0:2222","nsjob-ps-1:2222"],)"
                              R"("worker":["nsjob-worker-0:2222","nsjob-worker-1:2223"]},)";
  const double t0 = std::floor(static_cast<double>(std::time(nullptr)));
  std::vector<pid_t> ps, workers;
  for (int i = 0; i < 2; ++i) {
    ps.push_back(nodes.Exec(
        task_node[i], PSLOAD_BINARY,
        {"--placement=hot", "--summary=" + tmp.File(fmt::format("ps-{}.json", i))},
        "TF_CONFIG=" + cluster + fmt::format(R"("task":{{"type":"ps","index":{}}}}})", i),
        tmp.File(fmt::format("ps-{}.log", i))));
  }
  for (int i = 0; i < 2; ++i) {
    workers.push_back(nodes.Exec(
        task_node[2 + i], PSLOAD_BINARY,
        {"--placement=hot", "--duration=14", "--compute-us=300",
         "--summary=" + tmp.File(fmt::format("worker-{}.json", i))},
        "TF_CONFIG=" + cluster + fmt::format(R"("task":{{"type":"worker","index":{}}}}})", i),
        tmp.File(fmt::format("worker-{}.log", i))));
  }
  for (int i = 0; i < 2; ++i) {
    int st = 0;
    waitpid(workers[i], &st, 0);
    ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0)
        << ReadFile(tmp.File(fmt::format("worker-{}.log", i)));
  }
  std::this_thread::sleep_for(std::chrono::seconds(3));  // the last scrapes
  const double t1 = std::floor(static_cast<double>(std::time(nullptr)));
  const std::string window = fmt::format(" --start {:.0f} --end {:.0f} --step 1s", t0 - 2, t1);
  RunResult r = RunTfdiag("analyze --prometheus " + prom.url() + " --job nsjob -f json" + window +
                          " --save " + tmp.File("nsjob.bundle.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err << ReadFile(tmp.File("agent-2.log"));
  rapidjson::Document d;
  d.Parse(r.out.c_str());
  ASSERT_FALSE(d.HasParseError()) << r.out.substr(0, 500);
  // Found from the agents' series (no kube-state-metrics here), saying so.
  const std::string discovery = d["prometheus"]["discovery"].GetString();
  EXPECT_NE(discovery.find("tfdiag_task_up{tf_job=\"nsjob\"}"), std::string::npos) << discovery;
  // Four discovery selectors, then only the agents' queries (no pod names: no cAdvisor or
  // kube-state-metrics query), and `up`; three of them ask for series held twice, for when
  // each task's byte counters started (with its cpuset and CPU limit) and for each node's CPUs.
  EXPECT_EQ(d["prometheus"]["queries"].Size(), 19u);
  // The hot PS from the worker x PS bytes the agents measured, on node-a.
  const rapidjson::Value* hot = FindFinding(d, "hot-ps", "ps:0");
  ASSERT_NE(hot, nullptr) << r.out << r.err;
  EXPECT_STREQ((*hot)["node"].GetString(), "node-a");
  EXPECT_NE(std::string((*hot)["evidence"][0]["label"].GetString()).find("eBPF"), std::string::npos)
      << r.out;
  // The matrix: every worker -> ps edge, from node-c's agent, crosses to another namespace.
  std::map<std::string, double> edge;  // "worker:0 -> ps:0" -> bytes/s
  double window_s = 0;
  for (const auto& e : (*hot)["evidence"].GetArray()) {
    const std::string label = e["label"].GetString();
    if (label.find(" -> ps:") != std::string::npos) edge[label] = e["value"].GetDouble();
    if (label == "recording window") window_s = e["value"].GetDouble() / 1e9;  // JSON: ns
  }
  EXPECT_GT(edge["worker:0 -> ps:0"], 0) << r.out;
  EXPECT_GT(edge["worker:1 -> ps:0"], 0) << r.out;
  std::map<std::string, std::string> node_of;  // task -> node, from the per-task figures
  for (const auto& p : d["prometheus"]["pods"].GetArray())
    node_of[p["task"].GetString()] = p["node"].GetString();
  EXPECT_EQ(
      node_of,
      (std::map<std::string, std::string>{
          {"ps:0", "node-a"}, {"ps:1", "node-b"}, {"worker:0", "node-c"}, {"worker:1", "node-c"}}));
  // What the workers counted themselves (their summaries) against what the agents measured.
  for (int i = 0; i < 2; ++i) {
    rapidjson::Document s = Json(ReadFile(tmp.File(fmt::format("worker-{}.json", i))));
    ASSERT_TRUE(s.IsObject());
    const double sent = s["per_ps"]["ps:0"]["bytes_sent"].GetDouble();
    // Rates over the time each was measured (issue 36: the agents' over the time the worker
    // ran, not the window): psload's bytes over its own wall time.
    const double counted = sent / s["wall_time_s"].GetDouble();
    const double got = edge[fmt::format("worker:{} -> ps:0", i)];
    std::printf(
        "[ measured ] worker:%d -> ps:0: psload sent %.0f bytes/s; agents via "
        "Prometheus: %.0f bytes/s (%+.1f%%); window %.1f s\n",
        i, counted, got, 100 * (got / counted - 1), window_s);
    EXPECT_NEAR(got, counted, 0.10 * counted) << "worker:" << i;
  }
  // The agents read /proc: runnable threads are known (not -1).
  for (const auto& p : d["processes"].GetArray()) {
    EXPECT_GE(p["runnable_mean"].GetDouble(), 0) << p["task"].GetString();
    EXPECT_GT(p["threads_mean"].GetDouble(), 0) << p["task"].GetString();
  }
  // The agents' run-queue latency histograms and context switches (tfdiag_runqueue_latency_
  // seconds, tfdiag_context_switches_total) became each task's scheduling rows, as the eBPF
  // probe gives them in a bundle: the waits per bucket add up to the waits counted.
  rapidjson::Document bundle = Json(ReadFile(tmp.File("nsjob.bundle.json")));
  ASSERT_TRUE(bundle.IsObject());
  std::map<int64_t, const rapidjson::Value*> last_sched;  // process -> its last row
  for (const auto& row : bundle["sched"].GetArray()) last_sched[row[1].GetInt64()] = &row;
  EXPECT_EQ(last_sched.size(), 4u);
  for (const auto& [proc, row] : last_sched) {
    const int64_t waits = (*row)[6].GetInt64();
    int64_t in_buckets = 0;
    for (const auto& b : (*row)[7].GetArray()) in_buckets += b.GetInt64();
    EXPECT_GT(waits, 0) << "process " << proc;
    EXPECT_NEAR(static_cast<double>(in_buckets), static_cast<double>(waits), 0.01 * waits + 2)
        << "process " << proc;
    EXPECT_GT((*row)[5].GetInt64(), 0) << "run-queue wait ns, process " << proc;
    EXPECT_GT((*row)[2].GetInt64() + (*row)[3].GetInt64(), 0) << "switches, process " << proc;
  }
  if (const char* demo = std::getenv("TFDIAG_DEMO_DIR")) {
    RunResult text =
        RunTfdiag("analyze --color never --prometheus " + prom.url() + " --job nsjob" + window);
    WriteFile(std::string(demo) + "/netns-report.txt", text.out + "\n--- stderr\n" + text.err);
  }
  // One node's agent down: node-b's agent is killed; findings still come, with a note naming
  // the node.
  nodes.Stop(agent[1], SIGKILL);
  std::this_thread::sleep_for(std::chrono::seconds(3));
  const double t2 = std::floor(static_cast<double>(std::time(nullptr)));
  RunResult down = RunTfdiag("analyze --prometheus " + prom.url() + " --job nsjob -f json" +
                             fmt::format(" --start {:.0f} --end {:.0f} --step 1s", t0 - 2, t2));
  ASSERT_EQ(down.exit_code, 0) << down.err;
  EXPECT_NE(down.err.find("the tfdiag agent on node node-b"), std::string::npos) << down.err;
  EXPECT_EQ(down.err.find("agent on node node-a"), std::string::npos) << down.err;
  rapidjson::Document dd;
  dd.Parse(down.out.c_str());
  ASSERT_FALSE(dd.HasParseError());
  EXPECT_NE(FindFinding(dd, "hot-ps", "ps:0"), nullptr) << down.out;
  for (pid_t p : ps) nodes.Stop(p);
}

}  // namespace
}  // namespace tfdiag::test
