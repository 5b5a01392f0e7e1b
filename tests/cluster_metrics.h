// Test and bench helpers for the cluster mode (analyze --prometheus): OpenMetrics text of a
// TF job's pods written as the kubelet's cAdvisor (/metrics/cadvisor) and kube-state-metrics v2
// export them (label sets as in a real kubelet 1.35 scrape: container, pod-level and pause
// series; kube-state-metrics with no pod label allow-listed), and a real Prometheus server on a
// loopback port holding them (backfilled with `promtool tsdb create-blocks-from openmetrics`).
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "collectors/prometheus/prom_client.h"

namespace tfdiag::test {

// One TF job's pods. Placement: PS i on node i % nodes, except `shared_ps` (moved onto the node
// of PS shared_ps - 1); worker w on node w % nodes.
struct ClusterJobSpec {
  std::string name = "ctr-job", ns = "training";
  int ps = 5, workers = 50, nodes = 10;
  std::string node_prefix = "node-";
  int hot_ps = 0;  // -1: none. This PS uses hot_cpu cores; the others idle_cpu
  double hot_cpu = 3.6, idle_cpu = 0.25, worker_cpu = 2.0;
  int shared_ps = 2;        // -1: none
  int throttled_node = 7;   // -1: none. Workers there: 2-CPU limit, throttled, 64 threads
  int restart_worker = -1;  // this worker's container restarts mid-window (counter reset)
  // This worker is Pending for the first quarter of the window (kube_pod_status_phase), and
  // has no container series then.
  int pending_worker = -1;
  bool kubeflow_labels = false;  // kube_pod_labels with Kubeflow's labels (allow-listed)
  std::string owner_kind = "TFJob";
  // Bench volume: no memory resources, no tunl0 interface, no pause-container CPU/threads
  // series (the pod-level cgroup series stay, so the container filter still matters).
  bool lean = false;
};

// Appends the job's series, every `step_s` seconds over [start_s, end_s), to `out` (OpenMetrics
// lines without "# EOF").
void AppendClusterJob(const ClusterJobSpec& spec, double start_s, double end_s, double step_s,
                      std::string* out);

// A test window: 30 minutes ending at the last full hour but one (inside the default retention,
// outside the head block), Unix s.
struct ClusterWindow {
  double start, end;
};
// Fixed at its first call in a process, so that series written and windows queried agree when a
// test straddles an hour boundary.
ClusterWindow TestWindow();

// "agent-job" (3 pods on node-9: ps:0, worker:0, worker:1) whose figures come from the tfdiag
// agent alone (scrape job tfdiag-agent, instance 10.0.0.19:9464; cAdvisor has none), plus the
// pods' kube-state-metrics series: CPU (PS 0.5, workers 1.9 cores), 64 threads, CFS periods
// throttled 60% for the workers, run-queue latency and context switches, every 15 s over the
// window (OpenMetrics lines without "# EOF").
void AppendAgentJob(const ClusterWindow& w, std::string* om);

// A Prometheus server (Debian's `prometheus`) on 127.0.0.1:<free port> with its own TSDB in a
// temporary directory, backfilled from OpenMetrics text. Stopped (SIGTERM, then SIGKILL) and
// its directory removed by the destructor.
class PromServer {
 public:
  // Empty when both binaries are installed, else why not (for GTEST_SKIP).
  static std::string SkipReason();
  // Backfills `openmetrics` (with "# EOF" appended) and starts the server; `scrape_config`
  // (YAML for scrape_configs, may be "") is added to its configuration. Errors are returned
  // as text in *error.
  bool Start(const std::string& openmetrics, const std::string& scrape_config, std::string* error);
  // As Start, from an OpenMetrics file that already ends with "# EOF" (removed afterwards).
  bool StartFromFile(const std::string& path, const std::string& scrape_config, std::string* error);
  ~PromServer();
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  const std::string& dir() const { return dir_; }
  int port() const { return port_; }

 private:
  std::string dir_;
  int port_ = 0;
  pid_t pid_ = -1;
};

// Starts `prom` scraping a tfdiag agent on 127.0.0.1:<agent_port> every second (scrape job
// tfdiag-agent; one backfilled sample 2 h old, as Start needs some) and waits up to 30 s for its
// first successful scrape (target discovery takes a few seconds). Returns a client of it (5 s a
// query, 600 s in all), or nullptr with *error saying why (the server's log when never scraped).
std::unique_ptr<PromClient> StartAgentScrape(PromServer* prom, int agent_port, std::string* error);

// Waits up to 30 s until the PromQL store at 127.0.0.1:<port> answers a scrape of the tfdiag
// agent (scrape job tfdiag-agent) taken at or after `t_s` (Unix s): the store's data is then
// complete up to `t_s`. VictoriaMetrics makes scraped samples searchable after an in-memory
// buffer is flushed (its /internal/force_flush, called first when `flush`), so under load a query
// soon after the job ended could miss its last seconds (a rate 9% low, CI 2026-11-30). False with
// *error when no such scrape is seen.
bool AwaitAgentScrapeAfter(int port, double t_s, bool flush, std::string* error);

// A VictoriaMetrics single-node server (Debian's `victoria-metrics`, a PromQL-compatible store)
// on 127.0.0.1:<free port> with its storage in a temporary directory, holding the same
// OpenMetrics text a PromServer is backfilled from (imported through /api/v1/import/prometheus,
// timestamps converted to milliseconds, then flushed). Stopped and removed by the destructor.
class VmServer {
 public:
  // Empty when /usr/bin/victoria-metrics and /usr/bin/curl are installed, else why not.
  static std::string SkipReason();
  // Starts the server and imports `openmetrics` (lines as AppendClusterJob writes them, without
  // "# EOF"). Errors are returned as text in *error.
  bool Start(const std::string& openmetrics, std::string* error);
  // Starts the server scraping a tfdiag agent on 127.0.0.1:<agent_port> every second (its
  // -promscrape.config, scrape job tfdiag-agent) and waits up to 30 s for `up` to be 1.
  bool StartScraping(int agent_port, std::string* error);
  ~VmServer();
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }

 private:
  std::string dir_;
  std::string scrape_config_;  // -promscrape.config file; "" none
  int port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace tfdiag::test
