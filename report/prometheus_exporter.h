// The agent mode of `tfdiag attach --serve ADDR`: a prometheus-cpp Collectable that exposes the
// latest LiveFigures on /metrics, and the HTTP exposer around it.
//
// Metrics (labels job, task, pod, node on all; counters cumulative, as collected):
//   tfdiag_task_up                          gauge    1 while the process lives
//   tfdiag_task_cpu_seconds_total           counter  CPU time of all threads, s (/proc)
//   tfdiag_task_threads                     gauge    threads
//   tfdiag_task_runnable_threads            gauge    threads in state R
//   tfdiag_cgroup_periods_total             counter  CFS periods of the task's cgroup
//   tfdiag_cgroup_throttled_periods_total   counter  CFS periods throttled
//   tfdiag_context_switches_total{kind}     counter  kind voluntary|involuntary (/proc)
//   tfdiag_traffic_bytes_total{direction,peer,peer_task}  counter  bytes sent|received (eBPF)
//   tfdiag_hdfs_read_bytes_total            counter  bytes received from HDFS DataNodes (eBPF)
//   tfdiag_runqueue_latency_seconds         histogram  wakeup -> on CPU, log2 buckets (eBPF)
// Thread-safety: Update() and Collect() may run concurrently (a mutex guards the figures).
#pragma once

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/live_figures.h"
#include "core/status.h"

namespace prometheus {
class Exposer;
}

namespace tfdiag {

class TfdiagCollectable : public prometheus::Collectable {
 public:
  void Update(const LiveFigures& figures);
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  mutable std::mutex mu_;
  LiveFigures figures_;
};

// Serves /metrics on `address` ("127.0.0.1:9464"; a bare port means 127.0.0.1:port).
// Owns the HTTP server thread; not copyable.
class MetricsServer {
 public:
  // Errors: kUsage for a bad address, kIo when the port cannot be bound.
  static StatusOr<std::unique_ptr<MetricsServer>> Start(const std::string& address);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  TfdiagCollectable& collectable() { return *collectable_; }
  int port() const;  // the bound port (useful with port 0)

 private:
  MetricsServer() = default;
  std::unique_ptr<prometheus::Exposer> exposer_;
  std::shared_ptr<TfdiagCollectable> collectable_;
};

}  // namespace tfdiag
