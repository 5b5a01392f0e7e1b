#include "tests/cluster_metrics.h"

#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <thread>

#include "collectors/prometheus/prom_client.h"
#include "tests/test_util.h"

namespace tfdiag::test {

namespace {

struct Pod {
  std::string name, role, uid, node, node_ip, pod_ip, cid, pause_cid;
  int index = 0;
  double cpu = 0, limit = 4, threads = 30, throttle = 0.002, net = 2e6;
  bool restart = false, pending = false;
};

std::string Hex(uint64_t x, int n) {
  std::string s = fmt::format("{:016x}{:016x}{:016x}{:016x}", x, x * 31 + 7, x * 131 + 3, x * 7);
  return s.substr(0, n);
}

}  // namespace

void AppendClusterJob(const ClusterJobSpec& spec, double start_s, double end_s, double step_s,
                      std::string* out) {
  std::vector<Pod> pods;
  const uint64_t salt = std::hash<std::string>()(spec.name);
  auto node_of = [&](int n) { return spec.node_prefix + std::to_string(n); };
  for (int r = 0; r < 2; ++r) {
    const int count = r == 0 ? spec.ps : spec.workers;
    for (int i = 0; i < count; ++i) {
      Pod p;
      p.role = r == 0 ? "ps" : "worker";
      p.index = i;
      p.name = fmt::format("{}-{}-{}", spec.name, p.role, i);
      const uint64_t id = salt + r * 100000 + i;
      p.uid = fmt::format("{}-{}-{}-{}-{}", Hex(id, 8), Hex(id + 1, 4), Hex(id + 2, 4),
                          Hex(id + 3, 4), Hex(id + 4, 12));
      p.cid = Hex(id * 17 + 5, 64);
      p.pause_cid = Hex(id * 19 + 11, 64);
      int n = i % spec.nodes;
      if (r == 0 && i == spec.shared_ps && i > 0) n = (i - 1) % spec.nodes;
      p.node = node_of(n);
      p.node_ip = fmt::format("10.0.0.{}", 10 + n);
      p.pod_ip = fmt::format("10.244.{}.{}", n, 10 + r * 100 + i % 100);
      if (r == 0) {
        p.cpu = i == spec.hot_ps ? spec.hot_cpu : spec.idle_cpu;
        p.net = i == spec.hot_ps ? 80e6 : 2e6;
      } else {
        p.cpu = spec.worker_cpu;
        p.threads = 40;
        p.net = 10e6;
        if (n == spec.throttled_node) {
          p.limit = 2;
          p.threads = 64;
          p.throttle = 0.6;
        }
        p.restart = i == spec.restart_worker;
        p.pending = i == spec.pending_worker;
      }
      pods.push_back(p);
    }
  }
  std::string& o = *out;
  const int steps = static_cast<int>((end_s - start_s) / step_s);
  auto series = [&](const std::string& name, const std::string& labels, auto&& value) {
    for (int k = 0; k < steps; ++k) {
      const double t = start_s + k * step_s;
      const double v = value(k, t - start_s);
      if (v < 0) continue;
      o += fmt::format("{}{{{}}} {} {:.3f}\n", name, labels, v, t);
    }
  };
  for (const Pod& p : pods) {
    const std::string ksm = fmt::format(
        "container=\"kube-state-metrics\",endpoint=\"http\",instance=\"10.244.0.5:8080\","
        "job=\"kube-state-metrics\",namespace=\"{}\",pod=\"{}\",uid=\"{}\"",
        spec.ns, p.name, p.uid);
    // kube-state-metrics v2: its own pod's labels are replaced by the target's with honor
    // labels; the exported ones are namespace, pod, uid (+ per metric).
    const std::string pod_ksm = fmt::format(
        "job=\"kube-state-metrics\",instance=\"10.244.0.5:8080\",namespace=\"{}\","
        "pod=\"{}\",uid=\"{}\"",
        spec.ns, p.name, p.uid);
    (void)ksm;
    auto one = [](int, double) { return 1.0; };
    series(
        "kube_pod_info",
        pod_ksm + fmt::format(",host_ip=\"{}\",pod_ip=\"{}\",node=\"{}\",created_by_kind=\"{}\","
                              "created_by_name=\"{}\",priority_class=\"\",host_network=\"false\"",
                              p.node_ip, p.pod_ip, p.node, spec.owner_kind, spec.name),
        one);
    std::string labels = pod_ksm;
    if (spec.kubeflow_labels) {
      labels += fmt::format(
          ",label_training_kubeflow_org_job_name=\"{}\",label_training_kubeflow_org_replica_type="
          "\"{}\",label_training_kubeflow_org_replica_index=\"{}\"",
          spec.name, p.role, p.index);
    }
    series("kube_pod_labels", labels, one);
    for (const char* res : {"cpu", "memory"}) {
      const bool cpu = res[0] == 'c';
      if (spec.lean && !cpu) continue;
      const double v = cpu ? p.limit : 8.0 * (1 << 30);
      for (const char* kind : {"limits", "requests"}) {
        series(std::string("kube_pod_container_resource_") + kind,
               pod_ksm + fmt::format(",container=\"tensorflow\",node=\"{}\",resource=\"{}\","
                                     "unit=\"{}\"",
                                     p.node, res, cpu ? "core" : "byte"),
               [&](int, double) { return v; });
      }
    }
    const double half = (end_s - start_s) / 2;
    series("kube_pod_container_status_restarts_total", pod_ksm + ",container=\"tensorflow\"",
           [&](int, double dt) { return p.restart && dt >= half ? 1.0 : 0.0; });
    // Every phase, 0 or 1, as kube-state-metrics exports them (lean: Running only).
    const double pending_until = p.pending ? (end_s - start_s) / 4 : -1;
    for (const char* phase : {"Running", "Pending", "Succeeded", "Failed", "Unknown"}) {
      if (spec.lean && phase[0] != 'R') continue;
      series("kube_pod_status_phase", pod_ksm + fmt::format(",phase=\"{}\"", phase),
             [&](int, double dt) {
               const bool pending = dt < pending_until;
               return (phase[0] == 'R' && !pending) || (phase[0] == 'P' && pending) ? 1.0 : 0.0;
             });
    }
    // Container series exist once the pod runs.
    auto cseries = [&](const std::string& name, const std::string& labels, auto&& value) {
      series(name, labels,
             [&](int k, double dt) { return dt < pending_until ? -1.0 : value(k, dt); });
    };
    // cAdvisor (kubelet /metrics/cadvisor), scraped per node; node label from relabelling.
    const std::string target = fmt::format(
        "instance=\"{}\",job=\"kubelet\",metrics_path=\"/metrics/cadvisor\",node=\"{}\"", p.node,
        p.node);
    const std::string podcg = fmt::format("/kubepods/burstable/pod{}", p.uid);
    const std::string c_tf = fmt::format(
        "{},container=\"tensorflow\",id=\"{}/{}\",image=\"docker.io/tensorflow/tensorflow:2.13.0\","
        "name=\"{}\",namespace=\"{}\",pod=\"{}\"",
        target, podcg, p.cid, p.cid, spec.ns, p.name);
    const std::string c_pod =
        fmt::format("{},container=\"\",id=\"{}\",image=\"\",name=\"\",namespace=\"{}\",pod=\"{}\"",
                    target, podcg, spec.ns, p.name);
    const std::string c_pause = fmt::format(
        "{},container=\"\",id=\"{}/{}\",image=\"registry.k8s.io/pause:3.10.1\",name=\"{}\","
        "namespace=\"{}\",pod=\"{}\"",
        target, podcg, p.pause_cid, p.pause_cid, spec.ns, p.name);
    // A counter growing at `rate`/s, reset to 0 at half the window when the container restarts.
    auto counter = [&](double rate, bool resets) {
      return [=](int, double dt) { return rate * (resets && dt >= half ? dt - half : dt); };
    };
    const double pause_cpu = 0.0001;
    cseries("container_cpu_usage_seconds_total", c_tf + ",cpu=\"total\"",
            counter(p.cpu, p.restart));
    cseries("container_cpu_usage_seconds_total", c_pod + ",cpu=\"total\"",
            counter(p.cpu + pause_cpu, false));
    if (!spec.lean) {
      cseries("container_cpu_usage_seconds_total", c_pause + ",cpu=\"total\"",
              counter(pause_cpu, false));
    }
    for (const std::string& l : {c_tf, c_pod}) {
      cseries("container_cpu_cfs_periods_total", l, counter(10, p.restart && l == c_tf));
      cseries("container_cpu_cfs_throttled_periods_total", l,
              counter(10 * p.throttle, p.restart && l == c_tf));
      cseries("container_cpu_cfs_throttled_seconds_total", l,
              counter(10 * p.throttle * 0.05, p.restart && l == c_tf));  // 50 ms per throttle
      cseries("container_threads", l, [&](int, double) { return p.threads; });
    }
    if (!spec.lean) cseries("container_threads", c_pause, [](int, double) { return 1.0; });
    for (const char* iface : {"eth0", "tunl0"}) {
      if (spec.lean && iface[0] == 't') continue;
      const double rate = iface[0] == 'e' ? p.net : 0;
      const std::string l = c_pause + fmt::format(",interface=\"{}\"", iface);
      cseries("container_network_receive_bytes_total", l, counter(rate, false));
      cseries("container_network_transmit_bytes_total", l, counter(rate * 0.9, false));
    }
  }
}

namespace {

// Stops a server the tests started (SIGTERM, 5 s, then SIGKILL) and removes its directory.
void StopServer(pid_t pid, const std::string& dir) {
  if (pid > 0) {
    kill(pid, SIGTERM);
    bool gone = false;
    for (int i = 0; i < 100 && !gone; ++i) {
      gone = waitpid(pid, nullptr, WNOHANG) == pid;
      if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (!gone) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
  if (!dir.empty()) RunShell("rm -rf '" + dir + "'");
}

}  // namespace

std::string PromServer::SkipReason() {
  for (const char* b : {"/usr/bin/prometheus", "/usr/bin/promtool"}) {
    if (access(b, X_OK) != 0)
      return std::string("no ") + b + " (Debian package prometheus; scripts/bootstrap.sh)";
  }
  return "";
}

bool PromServer::Start(const std::string& openmetrics, const std::string& scrape_config,
                       std::string* error) {
  char tmpl[] = "/tmp/tfdiag-prom-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) {
    *error = "mkdtemp failed";
    return false;
  }
  dir_ = tmpl;
  WriteFile(dir_ + "/backfill.om", openmetrics + "# EOF\n");
  return StartFromFile(dir_ + "/backfill.om", scrape_config, error);
}

bool PromServer::StartFromFile(const std::string& path, const std::string& scrape_config,
                               std::string* error) {
  if (dir_.empty()) {
    char tmpl[] = "/tmp/tfdiag-prom-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) {
      *error = "mkdtemp failed";
      return false;
    }
    dir_ = tmpl;
  }
  RunResult r =
      RunShell("promtool tsdb create-blocks-from openmetrics " + path + " " + dir_ + "/data");
  if (r.exit_code != 0) {
    *error = "promtool: " + r.err + r.out;
    return false;
  }
  std::remove(path.c_str());
  WriteFile(dir_ + "/prometheus.yml",
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n" +
                (scrape_config.empty() ? std::string() : "scrape_configs:\n" + scrape_config));
  port_ = FreePorts(1)[0];
  pid_ = fork();
  if (pid_ == 0) {
    const std::string cfg = "--config.file=" + dir_ + "/prometheus.yml";
    const std::string tsdb = "--storage.tsdb.path=" + dir_ + "/data";
    const std::string listen = "--web.listen-address=127.0.0.1:" + std::to_string(port_);
    const std::string log = dir_ + "/prometheus.log";
    FILE* f = std::freopen(log.c_str(), "w", stderr);
    (void)f;
    execl("/usr/bin/prometheus", "prometheus", cfg.c_str(), tsdb.c_str(), listen.c_str(),
          "--storage.tsdb.retention.time=30d", "--log.level=warn", static_cast<char*>(nullptr));
    _exit(127);
  }
  PromClientOptions po;
  po.url = url();
  po.timeout_s = 2;
  po.deadline_s = 600;  // polled until the TSDB opens
  auto client = PromClient::Create(po);
  for (int i = 0; i < 300; ++i) {
    // The API answers 503 until the TSDB (with the backfilled blocks) is open.
    if (client.ok() && (*client)->Query("1", 0).ok()) return true;
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      *error = "prometheus exited: " + ReadFile(dir_ + "/prometheus.log");
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  *error = "prometheus not ready after 30 s: " + ReadFile(dir_ + "/prometheus.log");
  return false;
}

PromServer::~PromServer() { StopServer(pid_, dir_); }

std::string VmServer::SkipReason() {
  if (access("/usr/bin/victoria-metrics", X_OK) != 0)
    return "no /usr/bin/victoria-metrics (Debian package victoria-metrics; scripts/bootstrap.sh)";
  if (access("/usr/bin/curl", X_OK) != 0) return "no /usr/bin/curl";
  return "";
}

bool VmServer::Start(const std::string& openmetrics, std::string* error) {
  char tmpl[] = "/tmp/tfdiag-vm-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) {
    *error = "mkdtemp failed";
    return false;
  }
  dir_ = tmpl;
  // Prometheus text format: the same lines with millisecond timestamps (the last token).
  {
    std::ofstream out(dir_ + "/import.prom");
    size_t at = 0;
    while (at < openmetrics.size()) {
      size_t nl = openmetrics.find('\n', at);
      if (nl == std::string::npos) nl = openmetrics.size();
      const std::string line = openmetrics.substr(at, nl - at);
      at = nl + 1;
      if (line.empty() || line[0] == '#') continue;
      const size_t sp = line.rfind(' ');
      out << line.substr(0, sp) << ' '
          << static_cast<long long>(
                 std::llround(std::strtod(line.c_str() + sp + 1, nullptr) * 1000))
          << '\n';
    }
  }
  port_ = FreePorts(1)[0];
  pid_ = fork();
  if (pid_ == 0) {
    const std::string data = "-storageDataPath=" + dir_ + "/data";
    const std::string listen = "-httpListenAddr=127.0.0.1:" + std::to_string(port_);
    const std::string log = dir_ + "/vm.log";
    FILE* f = std::freopen(log.c_str(), "w", stderr);
    (void)f;
    std::vector<std::string> args = {
        "victoria-metrics",        data, listen, "-retentionPeriod=100y", "-loggerLevel=ERROR",
        "-search.latencyOffset=0s"};
    if (!scrape_config_.empty()) args.push_back("-promscrape.config=" + scrape_config_);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv("/usr/bin/victoria-metrics", argv.data());
    _exit(127);
  }
  bool up = false;
  for (int i = 0; i < 300 && !up; ++i) {
    up = HttpGet(port_, "/health").find("OK") != std::string::npos;
    int status = 0;
    if (!up && waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      *error = "victoria-metrics exited: " + ReadFile(dir_ + "/vm.log");
      return false;
    }
    if (!up) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (!up) {
    *error = "victoria-metrics not ready after 30 s: " + ReadFile(dir_ + "/vm.log");
    return false;
  }
  RunResult r = RunShell("curl -sS --fail --data-binary @" + dir_ + "/import.prom " + url() +
                         "/api/v1/import/prometheus && curl -sS --fail " + url() +
                         "/internal/force_flush && curl -sS --fail " + url() +
                         "/internal/resetRollupResultCache");
  if (r.exit_code != 0) {
    *error = "victoria-metrics import: " + r.err + r.out + ReadFile(dir_ + "/vm.log");
    return false;
  }
  std::remove((dir_ + "/import.prom").c_str());
  return true;
}

bool VmServer::StartScraping(int agent_port, std::string* error) {
  char tmpl[] = "/tmp/tfdiag-vmscrape-XXXXXX.yml";
  const int fd = mkstemps(tmpl, 4);
  if (fd < 0) {
    *error = "mkstemps failed";
    return false;
  }
  close(fd);
  scrape_config_ = tmpl;
  WriteFile(scrape_config_, fmt::format("scrape_configs:\n  - job_name: tfdiag-agent\n"
                                        "    scrape_interval: 1s\n    static_configs:\n"
                                        "      - targets: ['127.0.0.1:{}']\n",
                                        agent_port));
  if (!Start(fmt::format("tfdiag_test_backfill 1 {}\n", std::time(nullptr) - 7200), error)) {
    return false;
  }
  for (int i = 0; i < 300; ++i) {
    const std::string r = HttpGet(port_, "/api/v1/query?query=up%7Bjob%3D%22tfdiag-agent%22%7D");
    if (r.find("\"value\":[") != std::string::npos && r.find("\"1\"]") != std::string::npos)
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  *error = "victoria-metrics did not scrape the agent within 30 s: " + ReadFile(dir_ + "/vm.log");
  return false;
}

bool AwaitAgentScrapeAfter(int port, double t_s, bool flush, std::string* error) {
  double last = -1;
  for (int i = 0; i < 300; ++i) {
    if (flush) HttpGet(port, "/internal/force_flush");
    // max(timestamp(up{job="tfdiag-agent"})): the time of the agent's latest scrape, Unix s.
    const std::string r =
        HttpGet(port, "/api/v1/query?query=max(timestamp(up%7Bjob%3D%22tfdiag-agent%22%7D))");
    const size_t at = r.find("\"value\":[");
    if (at != std::string::npos) {
      const size_t q = r.find('"', r.find(',', at) + 1);
      if (q != std::string::npos) last = std::strtod(r.c_str() + q + 1, nullptr);
      if (last >= t_s) return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  *error = fmt::format("no scrape of the agent at or after {:.0f} within 30 s (latest {:.0f})", t_s,
                       last);
  return false;
}

VmServer::~VmServer() {
  StopServer(pid_, dir_);
  if (!scrape_config_.empty()) std::remove(scrape_config_.c_str());
}

ClusterWindow TestWindow() {
  // Computed once per process: the series are written with it and the queries ask for it, and
  // a test that straddles an hour boundary asked for the next window (CI-like load, 10:00 UTC).
  static const ClusterWindow window = [] {
    const double end = std::floor(std::time(nullptr) / 3600.0) * 3600 - 3600;
    return ClusterWindow{end - 1800, end};
  }();
  return window;
}

// "agent-job": pods kube-state-metrics knows (workers with a 2-CPU limit, the PS with none) on
// node-9, whose figures come from the tfdiag agent alone (cAdvisor has no series for them): CPU,
// 64 threads (3 runnable), CFS periods throttled 60% (no throttled-seconds counter), run-queue
// latency histograms and context switches.
void AppendAgentJob(const ClusterWindow& w, std::string* om) {
  std::string& o = *om;
  for (const auto& [type, index] :
       {std::pair{"ps", 0}, std::pair{"worker", 0}, std::pair{"worker", 1}}) {
    const bool ps = std::string(type) == "ps";
    const std::string pod = fmt::format("agent-job-{}-{}", type, index);
    const std::string ksm = fmt::format(
        "job=\"kube-state-metrics\",instance=\"10.244.0.5:8080\",namespace=\"training\","
        "pod=\"{}\",uid=\"a9e0000{}-0000-4000-8000-00000000000{}\"",
        pod, ps ? 1 : 2, index);
    const std::string agent = fmt::format(
        "agent_node=\"node-9\",instance=\"10.0.0.19:9464\",job=\"tfdiag-agent\","
        "namespace=\"training\",node=\"node-9\",pod=\"{}\",replica_index=\"{}\","
        "replica_type=\"{}\",tf_job=\"agent-job\"",
        pod, index, type);
    for (double t = w.start; t < w.end; t += 15) {
      const double e = t - w.start;  // s elapsed: counters grow at fixed rates
      auto put = [&](const std::string& metric, const std::string& labels, double v) {
        o += fmt::format("{}{{{}}} {:.6f} {:.3f}\n", metric, labels, v, t);
      };
      put("kube_pod_info",
          ksm + fmt::format(",host_ip=\"10.0.0.19\",pod_ip=\"10.244.9.{}\",node=\"node-9\","
                            "created_by_kind=\"TFJob\",created_by_name=\"agent-job\"",
                            ps ? 100 : index),
          1);
      if (!ps) {
        put("kube_pod_container_resource_limits",
            ksm + ",container=\"tensorflow\",node=\"node-9\",resource=\"cpu\",unit=\"core\"", 2);
      }
      put("tfdiag_task_up", agent, 1);
      put("tfdiag_task_cpu_seconds_total", agent, e * (ps ? 0.5 : 1.9));
      put("tfdiag_task_threads", agent, 64);
      put("tfdiag_task_runnable_threads", agent, ps ? 1 : 3);
      if (!ps) {
        put("tfdiag_cgroup_periods_total", agent, e * 10);
        put("tfdiag_cgroup_throttled_periods_total", agent, e * 6);
      }
      put("tfdiag_context_switches_total", agent + ",kind=\"voluntary\"", e * 100);
      put("tfdiag_context_switches_total", agent + ",kind=\"involuntary\"", e * 150);
      // 200 waits/s: half within 2^20 ns (1.05 ms), all within 2^24 ns (16.8 ms); 0.4 s/s.
      const double waits = e * 200;
      put("tfdiag_runqueue_latency_seconds_bucket", agent + ",le=\"0.001048576\"", waits / 2);
      put("tfdiag_runqueue_latency_seconds_bucket", agent + ",le=\"0.016777216\"", waits);
      put("tfdiag_runqueue_latency_seconds_bucket", agent + ",le=\"+Inf\"", waits);
      put("tfdiag_runqueue_latency_seconds_sum", agent, e * 0.4);
      put("tfdiag_runqueue_latency_seconds_count", agent, waits);
    }
  }
}

std::unique_ptr<PromClient> StartAgentScrape(PromServer* prom, int agent_port, std::string* error) {
  const std::string scrape = fmt::format(
      "  - job_name: tfdiag-agent\n    scrape_interval: 1s\n    static_configs:\n"
      "      - targets: ['127.0.0.1:{}']\n",
      agent_port);
  if (!prom->Start(fmt::format("tfdiag_test_backfill 1 {}\n", std::time(nullptr) - 7200), scrape,
                   error)) {
    return nullptr;
  }
  PromClientOptions po;
  po.url = prom->url();
  po.timeout_s = 5;
  po.deadline_s = 600;  // one client polls for the whole test
  auto client = PromClient::Create(po);
  if (!client.ok()) {
    *error = client.status().message();
    return nullptr;
  }
  for (int i = 0; i < 300; ++i) {
    auto r = (*client)->Query("up{job=\"tfdiag-agent\"} == 1", std::time(nullptr));
    if (r.ok() && !r->empty()) return std::move(*client);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  *error = "the agent was not scraped within 30 s: " + ReadFile(prom->dir() + "/prometheus.log");
  return nullptr;
}

}  // namespace tfdiag::test
