#include "report/prometheus_exporter.h"

#include <prometheus/exposer.h>

#include <cmath>
#include <exception>

namespace tfdiag {

namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

std::vector<ClientMetric::Label> TaskLabels(const LiveTaskFigures& t) {
  return {{"job", t.job}, {"node", t.node}, {"pod", t.pod}, {"task", t.task}};
}

MetricFamily Family(const char* name, const char* help, MetricType type) {
  MetricFamily f;
  f.name = name;
  f.help = help;
  f.type = type;
  return f;
}

ClientMetric Value(const LiveTaskFigures& t, MetricType type, double v,
                   std::vector<ClientMetric::Label> extra = {}) {
  ClientMetric m;
  m.label = TaskLabels(t);
  for (auto& l : extra) m.label.push_back(std::move(l));
  if (type == MetricType::Counter) {
    m.counter.value = v;
  } else {
    m.gauge.value = v;
  }
  return m;
}

}  // namespace

void TfdiagCollectable::Update(const LiveFigures& figures) {
  std::lock_guard<std::mutex> lock(mu_);
  // Keep the last figures of tasks that went away (counters must not vanish mid-scrape).
  LiveFigures next = figures;
  for (const LiveTaskFigures& old : figures_.tasks) {
    bool present = false;
    for (const LiveTaskFigures& t : next.tasks) present = present || t.pid == old.pid;
    if (!present) {
      next.tasks.push_back(old);
      next.tasks.back().alive = false;
    }
  }
  figures_ = std::move(next);
}

std::vector<MetricFamily> TfdiagCollectable::Collect() const {
  std::lock_guard<std::mutex> lock(mu_);
  const MetricType kC = MetricType::Counter, kG = MetricType::Gauge;
  MetricFamily up = Family("tfdiag_task_up", "1 while the task's process lives", kG);
  MetricFamily cpu =
      Family("tfdiag_task_cpu_seconds_total", "CPU time of all threads of the task, s", kC);
  MetricFamily threads = Family("tfdiag_task_threads", "Threads of the task", kG);
  MetricFamily runnable =
      Family("tfdiag_task_runnable_threads", "Threads of the task in state R", kG);
  MetricFamily periods =
      Family("tfdiag_cgroup_periods_total", "CFS periods of the task's CPU cgroup", kC);
  MetricFamily throttled = Family("tfdiag_cgroup_throttled_periods_total",
                                  "CFS periods in which the task's CPU cgroup was throttled", kC);
  MetricFamily switches = Family("tfdiag_context_switches_total",
                                 "Context switches of all threads, by kind (/proc)", kC);
  MetricFamily traffic = Family("tfdiag_traffic_bytes_total",
                                "Socket bytes by direction and remote ip:port (eBPF)", kC);
  MetricFamily hdfs =
      Family("tfdiag_hdfs_read_bytes_total", "Bytes received from HDFS DataNode ports (eBPF)", kC);
  MetricFamily runq = Family("tfdiag_runqueue_latency_seconds",
                             "Run-queue latency of the task's threads, wakeup to on-CPU (eBPF)",
                             MetricType::Histogram);
  for (const LiveTaskFigures& t : figures_.tasks) {
    up.metric.push_back(Value(t, kG, t.alive ? 1 : 0));
    cpu.metric.push_back(Value(t, kC, t.cpu_seconds));
    threads.metric.push_back(Value(t, kG, t.threads));
    runnable.metric.push_back(Value(t, kG, t.runnable));
    if (t.nr_periods >= 0) periods.metric.push_back(Value(t, kC, double(t.nr_periods)));
    if (t.nr_throttled >= 0) throttled.metric.push_back(Value(t, kC, double(t.nr_throttled)));
    if (t.voluntary >= 0) {
      switches.metric.push_back(Value(t, kC, double(t.voluntary), {{"kind", "voluntary"}}));
    }
    if (t.involuntary >= 0) {
      switches.metric.push_back(Value(t, kC, double(t.involuntary), {{"kind", "involuntary"}}));
    }
    if (t.has_traffic) {
      for (const LivePeerFigures& p : t.peers) {
        for (const auto& [dir, v] :
             {std::make_pair("sent", p.bytes_sent), std::make_pair("received", p.bytes_received)}) {
          traffic.metric.push_back(Value(t, kC, double(v),
                                         {{"direction", dir},
                                          {"peer", p.peer},
                                          {"peer_task", p.hdfs ? "hdfs" : p.peer_task}}));
        }
      }
      hdfs.metric.push_back(Value(t, kC, double(t.hdfs_read_bytes)));
    }
    if (t.has_sched) {
      ClientMetric m;
      m.label = TaskLabels(t);
      uint64_t cum = 0;
      for (int i = 0; i < kRunqHistSlots; ++i) {
        cum += static_cast<uint64_t>(t.runq_hist[i]);
        m.histogram.bucket.push_back({cum, std::ldexp(1.0, i + 1) / 1e9});  // [.., 2^(i+1) ns)
      }
      m.histogram.bucket.push_back({cum, std::numeric_limits<double>::infinity()});
      m.histogram.sample_count = cum;
      m.histogram.sample_sum = t.runq_wait_ns / 1e9;
      runq.metric.push_back(std::move(m));
    }
  }
  std::vector<MetricFamily> out;
  for (MetricFamily* f :
       {&up, &cpu, &threads, &runnable, &periods, &throttled, &switches, &traffic, &hdfs, &runq}) {
    if (!f->metric.empty()) out.push_back(std::move(*f));
  }
  return out;
}

MetricsServer::~MetricsServer() = default;

int MetricsServer::port() const {
  std::vector<int> ports = exposer_->GetListeningPorts();
  return ports.empty() ? 0 : ports[0];
}

StatusOr<std::unique_ptr<MetricsServer>> MetricsServer::Start(const std::string& address) {
  std::string addr = address;
  if (addr.find(':') == std::string::npos) addr = "127.0.0.1:" + addr;
  const std::string port = addr.substr(addr.rfind(':') + 1);
  if (port.empty() || port.find_first_not_of("0123456789") != std::string::npos) {
    return UsageError("--serve {}: expected HOST:PORT such as 127.0.0.1:9464", address);
  }
  std::unique_ptr<MetricsServer> s(new MetricsServer());
  try {
    s->exposer_ = std::make_unique<prometheus::Exposer>(addr);
  } catch (const std::exception& e) {
    return IoError("--serve {}: cannot listen: {}", address, e.what());
  }
  s->collectable_ = std::make_shared<TfdiagCollectable>();
  s->exposer_->RegisterCollectable(s->collectable_);
  return s;
}

}  // namespace tfdiag
