#include "report/prometheus_exporter.h"

#include <arpa/inet.h>
#include <civetweb.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <prometheus/text_serializer.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>

namespace tfdiag {

namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

std::vector<ClientMetric::Label> TaskLabels(const LiveTaskFigures& t) {
  return {{"namespace", t.namespace_},
          {"node", t.node},
          {"pod", t.pod},
          {"replica_index", t.index >= 0 ? std::to_string(t.index) : ""},
          {"replica_type", t.job},
          {"tf_job", t.tf_job}};
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
  // Keep the last figures of tasks that went away (counters must not vanish mid-scrape), marked
  // down, for kGoneKeepUpdates updates; then drop them so the series count stays bounded.
  LiveFigures next = figures;
  std::set<int32_t> present;
  for (const LiveTaskFigures& t : next.tasks) {
    if (t.alive) gone_for_.erase(t.pid);
    present.insert(t.pid);
  }
  for (LiveTaskFigures& t : next.tasks) {
    if (!t.alive && ++gone_for_[t.pid] > kGoneKeepUpdates) t.pid = -1;  // dropped below
  }
  // Carried-over gone tasks count against kMaxGoneTasks: a recorder that dropped an exited task
  // for churn does not see it come back here.
  size_t gone = 0;
  for (const LiveTaskFigures& t : next.tasks) gone += !t.alive && t.pid >= 0;
  std::set<int32_t> carried;
  for (const LiveTaskFigures& old : figures_.tasks) {
    if (present.count(old.pid) || old.pid < 0) continue;
    if (++gone_for_[old.pid] > kGoneKeepUpdates || gone >= kMaxGoneTasks) continue;
    ++gone;
    carried.insert(old.pid);
    next.tasks.push_back(old);
    next.tasks.back().alive = false;
  }
  // One series per label set: processes of the same task (a restart, short-lived launchers)
  // share labels; the live one wins, else the first (the recorder's newest figures first).
  std::map<std::vector<ClientMetric::Label>, size_t> by_labels;
  for (size_t i = 0; i < next.tasks.size(); ++i) {
    if (next.tasks[i].pid < 0) continue;
    auto [it, fresh] = by_labels.emplace(TaskLabels(next.tasks[i]), i);
    if (fresh) continue;
    LiveTaskFigures& kept = next.tasks[it->second];
    if (next.tasks[i].alive && !kept.alive) {
      kept.pid = -1;
      it->second = i;
    } else {
      next.tasks[i].pid = -1;
    }
  }
  next.tasks.erase(std::remove_if(next.tasks.begin(), next.tasks.end(),
                                  [](const LiveTaskFigures& t) { return t.pid < 0; }),
                   next.tasks.end());
  for (auto it = gone_for_.begin(); it != gone_for_.end();) {
    const bool unseen = !present.count(it->first) && !carried.count(it->first);
    it = it->second > kGoneKeepUpdates + 1 || unseen ? gone_for_.erase(it) : std::next(it);
  }
  figures_ = std::move(next);
}

size_t TfdiagCollectable::tasks() const {
  std::lock_guard<std::mutex> lock(mu_);
  return figures_.tasks.size();
}

std::vector<MetricFamily> TfdiagCollectable::Collect() const {
  std::lock_guard<std::mutex> lock(mu_);
  const MetricType kC = MetricType::Counter, kG = MetricType::Gauge;
  MetricFamily up = Family("tfdiag_task_up", "1 while the task's process lives", kG);
  MetricFamily cpu =
      Family("tfdiag_task_cpu_seconds_total", "CPU time of all threads of the task, s", kC);
  MetricFamily threads = Family("tfdiag_task_threads", "Threads of the task", kG);
  MetricFamily steps = Family("tfdiag_task_steps_total",
                              "Steps the task counted itself (its *.tfdiag-steps file)", kC);
  MetricFamily runnable =
      Family("tfdiag_task_runnable_threads", "Threads of the task in state R", kG);
  MetricFamily periods =
      Family("tfdiag_cgroup_periods_total", "CFS periods of the task's CPU cgroup", kC);
  MetricFamily throttled = Family("tfdiag_cgroup_throttled_periods_total",
                                  "CFS periods in which the task's CPU cgroup was throttled", kC);
  MetricFamily switches = Family("tfdiag_context_switches_total",
                                 "Context switches of all threads, by kind (/proc)", kC);
  MetricFamily traffic =
      Family("tfdiag_traffic_bytes_total",
             "Socket bytes by direction and remote TF task (eBPF); HDFS DataNodes fold into "
             "peer=\"hdfs\", other peers into peer=\"other\"",
             kC);
  MetricFamily hdfs =
      Family("tfdiag_hdfs_read_bytes_total", "Bytes received from HDFS DataNode ports (eBPF)", kC);
  MetricFamily other_sockets = Family(
      "tfdiag_traffic_other_sockets_total",
      "Sockets whose bytes were folded into peer=\"other\" (neither a TF task nor HDFS)", kC);
  MetricFamily untracked = Family(
      "tfdiag_traffic_untracked_sockets_total",
      "Sockets the eBPF traffic probe could not count: its kernel map (65,536 sockets) was full",
      kC);
  // A counter of the agent itself, labelled by node; -1 (unknown) adds no series.
  auto NodeCounter = [&](MetricFamily* f, int64_t v) {
    if (v < 0) return;
    ClientMetric m;
    m.label = {{"node", figures_.node}};
    m.counter.value = double(v);
    f->metric.push_back(std::move(m));
  };
  MetricFamily dropped = Family(
      "tfdiag_agent_exited_tasks_dropped_total",
      "Exited tasks dropped from these figures before 5 minutes: more than 256 had exited", kC);
  NodeCounter(&dropped, figures_.exited_tasks_dropped);
  MetricFamily environ_reads =
      Family("tfdiag_agent_environ_reads_total",
             "Reads of /proc/PID/environ since start (each process once, not every rescan)", kC);
  NodeCounter(&environ_reads, figures_.environ_reads);
  NodeCounter(&untracked, figures_.untracked_sockets);
  MetricFamily runq = Family("tfdiag_runqueue_latency_seconds",
                             "Run-queue latency of the task's threads, wakeup to on-CPU (eBPF)",
                             MetricType::Histogram);
  for (const LiveTaskFigures& t : figures_.tasks) {
    up.metric.push_back(Value(t, kG, t.alive ? 1 : 0));
    cpu.metric.push_back(Value(t, kC, t.cpu_seconds));
    threads.metric.push_back(Value(t, kG, t.threads));
    if (t.steps >= 0) steps.metric.push_back(Value(t, kC, double(t.steps)));
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
      // Peers: TF tasks by address (bounded by the cluster spec); HDFS and everything else
      // folded, so 10,000 short connections make two series, not 20,000.
      std::map<std::pair<std::string, std::string>, std::pair<int64_t, int64_t>> by_peer;
      for (const LivePeerFigures& p : t.peers) {
        const bool tf = !p.peer_task.empty() && !p.hdfs;
        auto& v = by_peer[{tf ? p.peer : (p.hdfs ? "hdfs" : "other"),
                           tf ? p.peer_task : (p.hdfs ? "hdfs" : "other")}];
        v.first += p.bytes_sent;
        v.second += p.bytes_received;
      }
      for (const auto& [peer, v] : by_peer) {
        for (const auto& [dir, n] :
             {std::make_pair("sent", v.first), std::make_pair("received", v.second)}) {
          traffic.metric.push_back(
              Value(t, kC, double(n),
                    {{"direction", dir}, {"peer", peer.first}, {"peer_task", peer.second}}));
        }
      }
      hdfs.metric.push_back(Value(t, kC, double(t.hdfs_read_bytes)));
      other_sockets.metric.push_back(Value(t, kC, double(t.other_sockets)));
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
       {&up, &cpu, &threads, &steps, &runnable, &periods, &throttled, &switches, &traffic, &hdfs,
        &other_sockets, &untracked, &dropped, &environ_reads, &runq}) {
    if (!f->metric.empty()) out.push_back(std::move(*f));
  }
  return out;
}

// ---- The HTTP side ----

std::string ServeAddress::Listen() const {
  return ipv6 ? "[" + host + "]:" + std::to_string(port) : host + ":" + std::to_string(port);
}

StatusOr<ServeAddress> ParseServeAddress(const std::string& text) {
  ServeAddress a;
  std::string host, port;
  if (text.empty()) return UsageError("--serve '': expected HOST:PORT such as 127.0.0.1:9464");
  if (text[0] == '[') {
    const size_t close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return UsageError("--serve {}: expected [IPv6]:PORT such as [::1]:9464", text);
    }
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
    a.ipv6 = true;
    in6_addr v6{};
    if (inet_pton(AF_INET6, host.c_str(), &v6) != 1)
      return UsageError("--serve {}: '{}' is not an IPv6 address", text, host);
  } else if (text.find(':') == std::string::npos) {
    host = "127.0.0.1";  // a bare port: loopback only
    port = text;
  } else {
    const size_t colon = text.rfind(':');
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (host.find(':') != std::string::npos)
      return UsageError("--serve {}: write an IPv6 address in brackets, [::1]:9464", text);
    if (host.empty()) host = "0.0.0.0";  // ":9464", as Prometheus's --web.listen-address
    if (host == "localhost") host = "127.0.0.1";
    in_addr v4{};
    if (inet_pton(AF_INET, host.c_str(), &v4) != 1) {
      return UsageError(
          "--serve {}: host '{}' is not an IPv4 address (give 127.0.0.1, the pod IP, or "
          "0.0.0.0 for every interface)",
          text, host);
    }
  }
  if (port.empty() || port.size() > 5 ||
      port.find_first_not_of("0123456789") != std::string::npos || std::stoi(port) > 65535) {
    return UsageError("--serve {}: port '{}' is not a number from 0 to 65535", text, port);
  }
  a.host = host;
  a.port = std::stoi(port);
  a.all_interfaces = host == "0.0.0.0" || host == "::";
  return a;
}

std::string InterfaceList(bool ipv6) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return "(interfaces unknown)";
  std::string out;
  for (ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || !(i->ifa_flags & IFF_UP)) continue;
    char buf[INET6_ADDRSTRLEN] = {};
    if (!ipv6 && i->ifa_addr->sa_family == AF_INET) {
      inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, buf, sizeof buf);
    } else if (ipv6 && i->ifa_addr->sa_family == AF_INET6) {
      inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(i->ifa_addr)->sin6_addr, buf,
                sizeof buf);
    } else {
      continue;
    }
    out += (out.empty() ? "" : ", ") + std::string(i->ifa_name) + " " + buf;
  }
  freeifaddrs(list);
  return out.empty() ? "(none up)" : out;
}

namespace {

constexpr const char* kLanding =
    "<!DOCTYPE html><html><head><title>tfdiag agent</title></head><body>"
    "<h1>tfdiag agent</h1><p>Live figures of this node's TensorFlow PS/worker tasks (CPU, "
    "threads, CFS throttling, context switches; with eBPF: bytes per peer task, HDFS input, "
    "run-queue latency).</p><p><a href=\"/metrics\">/metrics</a> &middot; "
    "<a href=\"/healthz\">/healthz</a> (503 when sampling has stalled)</p>"
    "<p>Labels: tf_job, replica_type, replica_index, pod, namespace, node.</p></body></html>\n";

int64_t SteadyNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// One whole response: status, Content-Type, Content-Length, extra headers; the body unless the
// request was HEAD (RFC 9110 9.3.2: the headers of GET, no content).
int Respond(mg_connection* conn, int status, const char* type, const std::string& body, bool head,
            const std::vector<std::pair<const char*, const char*>>& headers = {}) {
  mg_response_header_start(conn, status);
  mg_response_header_add(conn, "Content-Type", type, -1);
  const std::string length = std::to_string(body.size());
  mg_response_header_add(conn, "Content-Length", length.c_str(), -1);
  mg_response_header_add(conn, "Cache-Control", "no-store", -1);
  for (const auto& [name, value] : headers) mg_response_header_add(conn, name, value, -1);
  mg_response_header_send(conn);
  if (!head) mg_write(conn, body.data(), body.size());
  return status;
}

}  // namespace

// Every request: GET or HEAD of /, /metrics or /healthz; 405 with Allow for any other method
// (RFC 9110 15.5.6), 404 for any other path.
int MetricsServer::Handle(mg_connection* conn, void* data) {
  auto* s = static_cast<MetricsServer*>(data);
  const mg_request_info* ri = mg_get_request_info(conn);
  const char* method = ri != nullptr && ri->request_method != nullptr ? ri->request_method : "";
  const bool head = std::strcmp(method, "HEAD") == 0;
  constexpr const char* kText = "text/plain; charset=utf-8";
  if (!head && std::strcmp(method, "GET") != 0) {
    return Respond(conn, 405, kText, "only GET and HEAD are served\n", false,
                   {{"Allow", "GET, HEAD"}});
  }
  const std::string uri = ri->local_uri != nullptr ? ri->local_uri : "";
  if (uri == "/metrics") {
    return Respond(conn, 200, "text/plain; version=0.0.4; charset=utf-8",
                   prometheus::TextSerializer().Serialize(s->collectable_->Collect()), head);
  }
  if (uri == "/healthz") {
    const double age = (SteadyNs() - s->last_round_ns_.load()) / 1e9;
    if (age > s->stale_after_s_) {
      return Respond(conn, 503, kText,
                     fmt::format("stale: no sampling round completed for {:.1f} s (limit {:.1f} "
                                 "s)\n",
                                 age, s->stale_after_s_),
                     head);
    }
    return Respond(conn, 200, kText, fmt::format("ok: last sampling round {:.1f} s ago\n", age),
                   head);
  }
  if (uri == "/") return Respond(conn, 200, "text/html; charset=utf-8", kLanding, head);
  return Respond(conn, 404, kText, "not found; see /metrics\n", head);
}

namespace {

// Binds the address once ourselves, so that a port in use or an address the machine lacks is
// reported with the kernel's reason (civetweb only says it failed).
Status ProbeBind(const ServeAddress& a) {
  const int fd = socket(a.ipv6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return IoError("--serve {}: socket: {}", a.Listen(), std::strerror(errno));
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  int rc;
  if (a.ipv6) {
    sockaddr_in6 sa{};
    sa.sin6_family = AF_INET6;
    sa.sin6_port = htons(static_cast<uint16_t>(a.port));
    inet_pton(AF_INET6, a.host.c_str(), &sa.sin6_addr);
    rc = bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
  } else {
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(static_cast<uint16_t>(a.port));
    inet_pton(AF_INET, a.host.c_str(), &sa.sin_addr);
    rc = bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
  }
  const int err = errno;
  close(fd);
  if (rc != 0) return IoError("--serve {}: cannot listen: {}", a.Listen(), std::strerror(err));
  return OkStatus();
}

}  // namespace

MetricsServer::~MetricsServer() {
  if (ctx_ != nullptr) mg_stop(ctx_);
}

int MetricsServer::port() const {
  mg_server_port ports[4] = {};
  const int n = mg_get_server_ports(ctx_, 4, ports);
  return n > 0 ? ports[0].port : 0;
}

void MetricsServer::Publish(const LiveFigures& figures) {
  collectable_->Update(figures);
  last_round_ns_.store(SteadyNs());
}

StatusOr<std::unique_ptr<MetricsServer>> MetricsServer::Start(const std::string& address,
                                                              std::string* warning,
                                                              double stale_after_s) {
  StatusOr<ServeAddress> a = ParseServeAddress(address);
  if (!a.ok()) return a.status();
  if (a->ipv6 && mg_check_feature(8) == 0) {
    return UsageError("--serve {}: this build's HTTP server (civetweb) has no IPv6", address);
  }
  TFDIAG_RETURN_IF_ERROR(ProbeBind(*a));
  if (a->all_interfaces && warning != nullptr) {
    *warning = "--serve " + address + " listens on every " + (a->ipv6 ? "IPv6" : "IPv4") +
               " interface (" + InterfaceList(a->ipv6) +
               "): /metrics names pods and peers to anyone who can reach them; bind the pod or "
               "node IP, or keep 127.0.0.1 and a NetworkPolicy, if that is not wanted";
  }
  static const unsigned init = mg_init_library(0);
  (void)init;
  std::unique_ptr<MetricsServer> s(new MetricsServer());
  s->collectable_ = std::make_shared<TfdiagCollectable>();
  s->stale_after_s_ = stale_after_s;
  s->last_round_ns_.store(SteadyNs());  // start-up counts as a round: a grace of stale_after_s
  const std::string listen = a->Listen();
  const std::string threads = std::to_string(kServerThreads);
  const std::string timeout = std::to_string(kRequestTimeoutMs);
  // civetweb (1.15) gives each connection a worker thread from accept to close;
  // request_timeout_ms bounds the wait for a request header from when a worker takes the
  // connection (read_message checks it after each read) and each wait to send; keep-alive off
  // so no connection stays parked on a worker between requests; a request header (a bearer
  // token of ~1 KB included) fits 8 KB; the accept backlog (default 200) is 1024 so a burst
  // of idle connections does not push a scrape's SYN into retransmission (the kernel caps it
  // at net.core.somaxconn). Option names and defaults: civetweb's docs/UserManual.md
  // (src/civetweb.c, config_options).
  const char* options[] = {"listening_ports",
                           listen.c_str(),
                           "num_threads",
                           threads.c_str(),
                           "request_timeout_ms",
                           timeout.c_str(),
                           "enable_keep_alive",
                           "no",
                           "connection_queue",
                           threads.c_str(),
                           "max_request_size",
                           "8192",
                           "listen_backlog",
                           "1024",
                           nullptr};
  char err[256] = {0};
  unsigned code = 0;
  mg_error_data ed{&code, err, sizeof err};
  mg_init_data init_data{nullptr, nullptr, options};
  s->ctx_ = mg_start2(&init_data, &ed);
  if (s->ctx_ == nullptr) {
    return IoError("--serve {}: cannot listen: {}", address, err[0] ? err : "civetweb failed");
  }
  mg_set_request_handler(s->ctx_, "/", &MetricsServer::Handle, s.get());
  return s;
}

}  // namespace tfdiag
