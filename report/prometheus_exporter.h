// The agent mode of `tfdiag attach --serve ADDR`: a prometheus-cpp Collectable that exposes the
// latest LiveFigures, and the HTTP server around it (civetweb): /metrics, /healthz and a landing
// page on /.
//
// Labels on every series (exporter manners, as node_exporter and kube-state-metrics: never
// `job` or `instance`, which Prometheus owns and would rename to exported_job):
//   tf_job (the TFJob's name; a process's TFDIAG_JOB or --tf_job, or --tf-job; without a name,
//   "ip-" and a hash of the job's PS addresses, discovery.h UnnamedJobName), replica_type ("ps"),
//   replica_index ("0"), pod, namespace, node.
// Metrics (counters cumulative, as collected):
//   tfdiag_task_up                          gauge    1 while the process lives, 0 once gone
//   tfdiag_task_cpu_seconds_total           counter  CPU time of all threads, s (/proc)
//   tfdiag_task_threads                     gauge    threads
//   tfdiag_task_runnable_threads            gauge    threads in state R
//   tfdiag_task_steps_total                 counter  steps the task counted itself, only for
//       tasks that keep a *.tfdiag-steps file open (collectors/attach/step_counter.h)
//   tfdiag_cgroup_periods_total             counter  CFS periods of the task's cgroup
//   tfdiag_cgroup_throttled_periods_total   counter  CFS periods throttled
//   tfdiag_context_switches_total{kind}     counter  kind voluntary|involuntary (/proc)
//   tfdiag_traffic_bytes_total{direction,peer,peer_task}  counter  bytes sent|received (eBPF);
//       peers that are TF tasks of the cluster spec keep their spec ip:port; HDFS DataNodes are
//       folded into peer="hdfs", every other peer into peer="other" (bounded series)
//   tfdiag_traffic_other_sockets_total      counter  sockets folded into peer="other" (eBPF)
//   tfdiag_traffic_untracked_sockets_total{node}  counter  sockets not counted: the probe's
//       kernel map (65,536 sockets) was full (eBPF)
//   tfdiag_hdfs_read_bytes_total            counter  bytes received from HDFS DataNodes (eBPF)
//   tfdiag_agent_exited_tasks_dropped_total{node}  counter  exited tasks dropped before their
//       5 minutes because more than 256 had exited (process churn)
//   tfdiag_agent_environ_reads_total{node}  counter  /proc/PID/environ reads: each process's is
//       read once (at its first scan; TF tasks once more for TFDIAG_JOB), not at every rescan
//   tfdiag_runqueue_latency_seconds         histogram  wakeup -> on CPU, log2 buckets (eBPF)
// Gone tasks are shown with tfdiag_task_up 0 for kGoneKeepUpdates updates, then dropped. A label
// set appears once: of several processes with the same labels, the live one, else the first
// of the update (the recorder drops an exited task as soon as another takes its labels), never
// one carried over from an earlier update.
// Bound: per task at most 2 x (its cluster spec's tasks + 2) traffic series plus a fixed dozen,
// whatever the connections; the agent's own tables are bounded too (collectors/attach/
// traffic_table.h), so a scrape costs O(tasks x peers), not O(connections ever made).
// Thread-safety: Update() and Collect() may run concurrently (a mutex guards the figures).
#pragma once

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/live_figures.h"
#include "core/status.h"

struct mg_connection;
struct mg_context;

namespace tfdiag {

class TfdiagCollectable : public prometheus::Collectable {
 public:
  // Updates after which a task that went away is dropped (at 1 s sampling: 5 minutes, the
  // staleness Prometheus gives a series that stopped).
  static constexpr int kGoneKeepUpdates = 300;
  // Gone tasks shown at most (the oldest carried-over ones are not kept past it).
  static constexpr size_t kMaxGoneTasks = 256;
  void Update(const LiveFigures& figures);
  std::vector<prometheus::MetricFamily> Collect() const override;
  size_t tasks() const;

 private:
  mutable std::mutex mu_;
  LiveFigures figures_;
  std::map<int32_t, int> gone_for_;  // pid -> updates since it went away
};

// A parsed --serve address.
struct ServeAddress {
  std::string host;  // "127.0.0.1", "0.0.0.0", "::"
  int port = 0;      // 0: any free port
  bool ipv6 = false;
  bool all_interfaces = false;  // 0.0.0.0 or ::
  std::string Listen() const;   // civetweb's listening_ports: "127.0.0.1:9464", "[::]:9464"
};
// Accepts "HOST:PORT" (IPv4 literal or localhost), "[IPv6]:PORT", ":PORT" (all interfaces, as
// Prometheus's own --web.listen-address) and a bare "PORT" (127.0.0.1). Errors: kUsage saying
// which part is wrong (host not an IP address, port not 0-65535, empty).
StatusOr<ServeAddress> ParseServeAddress(const std::string& text);
// "lo 127.0.0.1, eth0 10.0.0.5": the machine's interfaces with addresses of the family.
std::string InterfaceList(bool ipv6);

// Serves, to GET and HEAD only (any other method: 405 with `Allow: GET, HEAD`):
//   /metrics  the Prometheus text format (0.0.4) of collectable()
//   /healthz  200 "ok: ..." while sampling rounds complete; 503 "stale: ..." once none has
//             completed for stale_after_s (a stuck sampler: /metrics would go on serving its
//             last figures, and the liveness probe in deploy/daemonset.yaml restarts the pod)
//   /         a landing page; anything else 404.
// Hostile clients: civetweb (1.15) holds a worker thread per connection from accept to close,
// so the server runs kServerThreads workers, ends a connection whose request header has not
// arrived within kRequestTimeoutMs (idle or trickling, "slowloris"; civetweb checks the deadline
// after each read, which itself waits up to kRequestTimeoutMs, so a trickling client is cut
// within twice that) and keeps no connection alive between requests. Up to about kServerThreads - 1
// such connections at once cost a scrape nothing; beyond that a scrape waits up to
// kRequestTimeoutMs per kServerThreads of them. Who may connect at all is the deployment's
// business: 127.0.0.1 behind an authenticating proxy (deploy/daemonset.yaml). Thread-safety:
// Publish() may run on any thread, concurrently with requests. Not copyable.
class MetricsServer {
 public:
  static constexpr int kServerThreads = 128;
  static constexpr int kRequestTimeoutMs = 2000;
  // Errors: kUsage for a bad address, kIo when it cannot be bound (with the reason). When the
  // address is every interface, *warning names them. stale_after_s: see /healthz; the time of
  // the start counts as a completed round.
  static StatusOr<std::unique_ptr<MetricsServer>> Start(const std::string& address,
                                                        std::string* warning = nullptr,
                                                        double stale_after_s = 10);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // The figures of a completed sampling round: updates /metrics and marks /healthz fresh.
  void Publish(const LiveFigures& figures);
  TfdiagCollectable& collectable() { return *collectable_; }
  int port() const;  // the bound port (useful with port 0)

 private:
  MetricsServer() = default;
  static int Handle(mg_connection* conn, void* data);
  mg_context* ctx_ = nullptr;
  std::shared_ptr<TfdiagCollectable> collectable_;
  std::atomic<int64_t> last_round_ns_{0};  // steady clock, ns
  double stale_after_s_ = 10;
};

}  // namespace tfdiag
