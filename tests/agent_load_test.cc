// Issue 15 item 12: the agent (`tfdiag attach --serve`) under load. Before, every remote
// ip:port a recorded task talked to became a peer kept forever (in the kernel map, the agent's
// per-task peer list, every sample's figures and every scrape): 10,000 short connections to a PS
// port gave 15,468 series and a p99 scrape of 9.9 s with 200 scrapers. Now peers that are not TF
// tasks or HDFS fold into peer="other" at collection time (collectors/attach/traffic_table.h).
//
// The live test: a psload PS and worker recorded by the agent with eBPF, then 10,000 short TCP
// connections to the PS port from this test while 16 clients scrape /metrics. Series, memory
// and scrape latency must not follow the number of connections.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "collectors/attach/traffic_table.h"
#include "samples/psload/net.h"
#include "tests/bpf_job.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

// ---- The table alone: bounded by construction, totals kept ----

SocketTraffic Sock(uint32_t tgid, uint16_t remote_port, int64_t sent, int64_t received) {
  SocketTraffic s;
  s.key.tgid = s.tgid = tgid;
  s.key.local_ip = s.key.remote_ip = htonl(INADDR_LOOPBACK);
  s.key.local_port = 2222;
  s.key.remote_port = htons(remote_port);
  s.remote_port = remote_port;
  s.local = "127.0.0.1:2222";
  s.remote = "127.0.0.1:" + std::to_string(remote_port);
  s.bytes_sent = sent;
  s.bytes_received = received;
  return s;
}

// A kernel map as the probe keeps it: sockets stay until taken.
struct KernelMap {
  std::vector<SocketTraffic> sockets;
  StatusOr<SocketTraffic> Take(const SocketKey& k) {
    auto it = std::find_if(sockets.begin(), sockets.end(),
                           [&](const SocketTraffic& s) { return s.key == k; });
    if (it == sockets.end()) return NotFound("gone");
    SocketTraffic s = *it;
    sockets.erase(it);
    return s;
  }
};

TEST(TrafficTable, ShortConnectionsFoldIntoOtherAndTheTableStaysSmall) {
  TrafficTableLimits limits;
  TrafficTable table(limits);
  KernelMap kernel;
  // One TF peer (worker:0 at its ephemeral port), active all along.
  kernel.sockets.push_back(Sock(7, 40000, 100, 200));
  auto match = [](const SocketTraffic& s) {
    PeerMatch m;
    if (s.remote_port == 40000) {
      m.resolved = true;
      m.peer = "127.0.0.1:2223";  // worker:0's spec address
      m.peer_task = "worker:0";
      m.peer_task_index = 1;
    }
    return m;
  };
  auto take = [&](const SocketKey& k) { return kernel.Take(k); };
  size_t most_live = 0;
  int64_t tf_sent = 100;
  // 100 samples, 1,000 new short connections each (closed before the next sample).
  for (int sample = 0; sample < 100; ++sample) {
    for (int i = 0; i < 1000; ++i) {
      kernel.sockets.push_back(
          Sock(7, static_cast<uint16_t>(41000 + (sample * 1000 + i) % 20000), 3, 5));
    }
    kernel.sockets[0].bytes_sent += 10;
    tf_sent += 10;
    table.Observe(TimeNs{sample} * 1000000000, kernel.sockets, match, take);
    most_live = std::max(most_live, table.live_sockets());
  }
  table.Observe(TimeNs{100} * 1000000000, kernel.sockets, match, take);
  // Live: the TF socket and at most one sample's connections; the kernel map likewise.
  EXPECT_LE(most_live, 2001u);
  EXPECT_EQ(table.live_sockets(), 1u);
  EXPECT_EQ(kernel.sockets.size(), 1u);
  const auto figs = table.Figures();
  ASSERT_EQ(figs.size(), 1u);
  const TrafficTable::ProcessFigures& f = figs.at(7);
  ASSERT_EQ(f.peers.size(), 2u);  // worker:0 and other
  EXPECT_EQ(f.peers[0].peer_task, "worker:0");
  EXPECT_EQ(f.peers[0].peer, "127.0.0.1:2223");
  EXPECT_EQ(f.peers[0].bytes_sent, tf_sent);
  EXPECT_EQ(f.peers[1].peer, "other");
  EXPECT_EQ(f.peers[1].bytes_sent, 3 * 100000);  // every byte kept, in one peer
  EXPECT_EQ(f.peers[1].bytes_received, 5 * 100000);
  EXPECT_EQ(f.other_sockets, 100000);
}

TEST(TrafficTable, IdleTfSocketsExpireIntoTheirPeerAndPeersAreCapped) {
  TrafficTableLimits limits;
  limits.resolved_idle_ns = 60 * TimeNs{1000000000};
  limits.max_peers = 3;
  TrafficTable table(limits);
  KernelMap kernel;
  auto match = [](const SocketTraffic& s) {
    PeerMatch m;
    m.resolved = true;
    m.hdfs = true;
    m.peer = s.remote;  // every remote an HDFS DataNode: only 3 are admitted
    return m;
  };
  auto take = [&](const SocketKey& k) { return kernel.Take(k); };
  for (uint16_t p = 0; p < 10; ++p) kernel.sockets.push_back(Sock(9, 9000 + p, 1, 1000));
  table.Observe(0, kernel.sockets, match, take);
  auto figs = table.Figures().at(9);
  EXPECT_EQ(figs.peers.size(), 4u);  // 3 DataNodes + other
  EXPECT_EQ(figs.hdfs_read_bytes, 3000);
  EXPECT_EQ(figs.peers.back().peer, "other");
  EXPECT_EQ(figs.peers.back().bytes_received, 7000);
  // A minute idle: the DataNode sockets leave the kernel map; their bytes stay.
  table.Observe(61 * TimeNs{1000000000}, kernel.sockets, match, take);
  EXPECT_EQ(table.live_sockets(), 0u);
  EXPECT_TRUE(kernel.sockets.empty());
  figs = table.Figures().at(9);
  EXPECT_EQ(figs.hdfs_read_bytes, 3000);
  EXPECT_EQ(figs.peers.back().bytes_received, 7000);
  // The same socket moving bytes again counts from 0 in the kernel; the total goes on.
  kernel.sockets.push_back(Sock(9, 9000, 0, 500));
  table.Observe(62 * TimeNs{1000000000}, kernel.sockets, match, take);
  EXPECT_EQ(table.Figures().at(9).hdfs_read_bytes, 3500);
}

// ---- The live agent ----

int64_t StatusKb(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(field + ":", 0) == 0) return std::atoll(line.c_str() + field.size() + 1);
  }
  return -1;
}

std::string Body(const std::string& response) {
  const size_t at = response.find("\r\n\r\n");
  return at == std::string::npos ? "" : response.substr(at + 4);
}

// Sample lines (series) of a /metrics body.
size_t SeriesCount(const std::string& body) {
  size_t n = 0, start = 0;
  while (start < body.size()) {
    size_t end = body.find('\n', start);
    if (end == std::string::npos) end = body.size();
    if (end > start && body[start] != '#') ++n;
    start = end + 1;
  }
  return n;
}

// The value of the first series whose line starts with `name{` and contains every `part`; -1.
double Value(const std::string& body, const std::string& name,
             const std::vector<std::string>& parts) {
  size_t start = 0;
  while (start < body.size()) {
    size_t end = body.find('\n', start);
    if (end == std::string::npos) end = body.size();
    const std::string line = body.substr(start, end - start);
    start = end + 1;
    if (line.rfind(name + "{", 0) != 0) continue;
    bool all = true;
    for (const std::string& p : parts) all = all && line.find(p) != std::string::npos;
    if (all) return std::atof(line.c_str() + line.rfind(' ') + 1);
  }
  return -1;
}

// One short connection to a psload PS: hello, a 16-float dense pull, its reply, then a reset
// (SO_LINGER 0: no TIME_WAIT left behind). Adds the bytes moved to *sent / *received.
bool ShortConnection(int port, int64_t* sent, int64_t* received) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  if (ok) {
    const std::string name = "client";
    char req[64];
    const uint32_t hello[3] = {psload::kHello, static_cast<uint32_t>(4 + name.size()), 16};
    std::memcpy(req, hello, sizeof hello);
    std::memcpy(req + sizeof hello, name.data(), name.size());
    const uint32_t pull[2] = {psload::kDensePull, 16};
    std::memcpy(req + sizeof hello + name.size(), pull, sizeof pull);
    const size_t n = sizeof hello + name.size() + sizeof pull;
    ok = send(fd, req, n, MSG_NOSIGNAL) == static_cast<ssize_t>(n);
    if (ok) *sent += static_cast<int64_t>(n);
    char reply[8 + 16 * 4];
    size_t got = 0;
    while (ok && got < sizeof reply) {
      const ssize_t r = recv(fd, reply + got, sizeof reply - got, 0);
      if (r <= 0) ok = false;
      if (r > 0) got += static_cast<size_t>(r);
    }
    *received += static_cast<int64_t>(got);
  }
  linger l{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
  close(fd);
  return ok;
}

// CPU time (user + system) of process `pid` so far, s.
double CpuSeconds(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const size_t close_paren = stat.rfind(')');
  if (close_paren == std::string::npos) return -1;
  std::istringstream in(stat.substr(close_paren + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && in >> field; ++i) {
    if (i == 14 || i == 15) ticks += std::atof(field.c_str());  // utime, stime
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// The /metrics server's worker threads (report/prometheus_exporter.cc: 128) each touch their
// stack and buffers the first time they serve. `n` connections held open at once take every
// thread; each then serves one scrape. What is measured after this is per-connection growth, not
// the pool's first use.
void WarmHttpThreads(int port, int n) {
  std::vector<int> fds;
  for (int i = 0; i < n; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) break;
    timeval tv{5, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      ::close(fd);
      break;
    }
    fds.push_back(fd);
  }
  usleep(300 * 1000);  // every thread holds one of them
  static const char kGet[] = "GET /metrics HTTP/1.0\r\n\r\n";
  for (int fd : fds) (void)!::write(fd, kGet, sizeof kGet - 1);
  char buf[65536];
  for (int fd : fds) {
    while (::read(fd, buf, sizeof buf) > 0) {
    }
    ::close(fd);
  }
}

struct Snapshot {
  size_t series = 0, body_bytes = 0;
  std::string body;
  int64_t rss_kb = 0, hwm_kb = 0;
  double cpu_s = 0;
  double other_sockets = 0, other_sent = 0, other_received = 0, worker_received = 0;
};

TEST_F(BpfLive, AgentUnderTenThousandShortConnectionsStaysBounded) {
  TempDir dir;
  // ps:0 and worker:0. The worker's spec port and the HDFS port the agent is given stay bound
  // by this test, so that no connection below gets one as its ephemeral port (it would then
  // look like worker:0 or a DataNode; the default HDFS port 50010 is in Linux's ephemeral range).
  const std::vector<int> ports = FreePorts(4);
  const int ps_port = ports[0], worker_port = ports[1], metrics_port = ports[2];
  const int hdfs_port = ports[3];
  std::vector<int> held;
  for (int port : {worker_port, hdfs_port}) {
    held.push_back(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in wa{};
    wa.sin_family = AF_INET;
    wa.sin_port = htons(static_cast<uint16_t>(port));
    wa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(bind(held.back(), reinterpret_cast<sockaddr*>(&wa), sizeof wa), 0)
        << port << ": " << strerror(errno);
  }
  const std::string cluster = fmt::format(
      R"({{"cluster":{{"ps":["127.0.0.1:{}"],"worker":["127.0.0.1:{}"]}},)", ps_port, worker_port);
  const pid_t ps = SpawnProcess(PSLOAD_BINARY, {"--summary=" + dir.File("ps.json")},
                                "TF_CONFIG=" + cluster + R"("task":{"type":"ps","index":0}})",
                                dir.File("ps.log"));
  const pid_t worker = SpawnProcess(
      PSLOAD_BINARY, {"--duration=0", "--summary=" + dir.File("worker.json")},
      "TF_CONFIG=" + cluster + R"("task":{"type":"worker","index":0}})", dir.File("worker.log"));
  ASSERT_GT(ps, 0);
  ASSERT_GT(worker, 0);
  usleep(300 * 1000);  // both exec and read TF_CONFIG
  const std::string agent_log = dir.File("agent.log");
  const pid_t agent =
      SpawnProcess(TFDIAG_BINARY,
                   {"attach", "--pid", std::to_string(ps), "--pid", std::to_string(worker),
                    "--interval", "200ms", "--hdfs-port", std::to_string(hdfs_port), "--node-name",
                    "load-node", "--serve", "127.0.0.1:" + std::to_string(metrics_port)},
                   "", agent_log);
  ASSERT_GT(agent, 0);
  struct Cleanup {
    std::vector<pid_t> pids;
    ~Cleanup() {
      for (pid_t p : pids) kill(p, SIGKILL), kill(p, SIGCONT), waitpid(p, nullptr, 0);
    }
  } cleanup{{agent, worker, ps}};

  // The PS's traffic to worker:0 shows: the probe runs and the TF peer is resolved.
  const std::vector<std::string> ps_task = {"replica_type=\"ps\"", "replica_index=\"0\""};
  std::vector<std::string> to_worker = ps_task;
  to_worker.insert(to_worker.end(), {"direction=\"received\"", "peer_task=\"worker:0\""});
  std::string body;
  for (int i = 0; i < 150 && Value(body, "tfdiag_traffic_bytes_total", to_worker) <= 0; ++i) {
    usleep(100 * 1000);
    body = Body(HttpGet(metrics_port, "/metrics"));
  }
  ASSERT_GT(Value(body, "tfdiag_traffic_bytes_total", to_worker), 0) << body.substr(0, 3000) << "\n"
                                                                     << ReadFile(agent_log);
  EXPECT_NE(body.find("peer=\"127.0.0.1:" + std::to_string(worker_port) + "\""), std::string::npos)
      << "worker:0 is named by its spec address, not an ephemeral port\n"
      << body.substr(0, 3000);
  kill(worker, SIGSTOP);  // its socket stays, idle (no CPU spent on stepping from here on)
  usleep(500 * 1000);

  // At most 2,000 connections per second (400 per 200 ms sample), so the agent's live
  // "other" sockets stay under its fold-all threshold (traffic_table.h) and the byte totals
  // below are exact.
  int64_t sent = 0, received = 0;
  double flood_s = 0;
  auto flood = [&](int n) {
    int failed = 0;
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) {
      failed += !ShortConnection(ps_port, &sent, &received);
      if (i % 100 == 99) {
        std::this_thread::sleep_until(start + std::chrono::milliseconds(50 * (i + 1) / 100));
      }
    }
    flood_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return failed;
  };
  auto snapshot = [&]() {
    usleep(700 * 1000);  // 3 samples: the closed connections are folded
    Snapshot s;
    const std::string b = Body(HttpGet(metrics_port, "/metrics"));
    s.series = SeriesCount(b);
    s.body = b;
    s.body_bytes = b.size();
    s.rss_kb = StatusKb(agent, "VmRSS");
    s.hwm_kb = StatusKb(agent, "VmHWM");
    s.cpu_s = CpuSeconds(agent);
    s.other_sockets = Value(b, "tfdiag_traffic_other_sockets_total", ps_task);
    std::vector<std::string> other = ps_task;
    other.insert(other.end(), {"direction=\"sent\"", "peer=\"other\""});
    s.other_sent = Value(b, "tfdiag_traffic_bytes_total", other);
    other[other.size() - 2] = "direction=\"received\"";
    s.other_received = Value(b, "tfdiag_traffic_bytes_total", other);
    s.worker_received = Value(b, "tfdiag_traffic_bytes_total", to_worker);
    return s;
  };
  // 16 clients scrape /metrics back to back through 1,000 connections, then 9,000 more (so the
  // HTTP threads' memory is warm at the first measurement); every server thread has served once
  // before that.
  WarmHttpThreads(metrics_port, 160);
  constexpr int kScrapers = 16;
  std::atomic<bool> done{false};
  std::mutex mu;
  std::vector<double> latency_ms;
  int bad_scrapes = 0;
  std::vector<std::thread> scrapers;
  for (int i = 0; i < kScrapers; ++i) {
    scrapers.emplace_back([&] {
      while (!done.load()) {
        const auto a = std::chrono::steady_clock::now();
        const std::string r = HttpGet(metrics_port, "/metrics");
        const double ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count();
        std::lock_guard<std::mutex> lock(mu);
        latency_ms.push_back(ms);
        bad_scrapes += r.find("200 OK") == std::string::npos;
      }
    });
  }
  const int failed_1k = flood(1000);
  const Snapshot at1k = snapshot();
  const int64_t sent_1k = sent, received_1k = received;
  const int failed = failed_1k + flood(9000);
  done = true;
  for (std::thread& t : scrapers) t.join();
  ASSERT_EQ(failed, 0);
  std::printf("[ measured ] at 1,000: other received %.0f of %lld sent, sent %.0f of %lld\n",
              at1k.other_received, (long long)sent_1k, at1k.other_sent, (long long)received_1k);
  EXPECT_EQ(at1k.other_received, double(sent_1k));
  const Snapshot at10k = snapshot();
  std::sort(latency_ms.begin(), latency_ms.end());
  ASSERT_GE(latency_ms.size(), 100u);
  const double p50 = latency_ms[latency_ms.size() / 2];
  const double p99 = latency_ms[latency_ms.size() * 99 / 100];
  std::printf(
      "[ measured ] 10,000 connections in %.1f s; series %zu -> %zu (body %zu -> %zu B); agent "
      "VmRSS %lld -> %lld kB, VmHWM %lld -> %lld kB; other sockets %.0f; %zu scrapes by %d "
      "clients: p50 %.1f ms, p99 %.1f ms, max %.1f ms; agent CPU %.2f s from 1,000 to 10,000\n",
      flood_s, at1k.series, at10k.series, at1k.body_bytes, at10k.body_bytes, (long long)at1k.rss_kb,
      (long long)at10k.rss_kb, (long long)at1k.hwm_kb, (long long)at10k.hwm_kb, at10k.other_sockets,
      latency_ms.size(), kScrapers, p50, p99, latency_ms.back(), at10k.cpu_s - at1k.cpu_s);

  // Series: the same set at 1,000 and 10,000 connections (peer="other" holds them all): per
  // task a dozen gauges and counters, 6 traffic series (worker:0 or ps:0, other) and the
  // run-queue histogram (33 buckets + sum + count), 2 tasks.
  EXPECT_EQ(at10k.series, at1k.series) << at1k.body << "\n----\n" << at10k.body;
  EXPECT_LT(at10k.series, 120u);
  // Every byte and socket of the connections is in peer="other" (the PS's side of them);
  // worker:0's counter did not move (it is stopped).
  EXPECT_EQ(at10k.other_received, double(sent));
  EXPECT_EQ(at10k.other_sent, double(received));
  // One socket per connection, give or take: a reused ephemeral port within a sample is one
  // socket, and a connection the PS left idle for a whole sample mid-way is folded, then
  // counted again when it moves its last bytes (its bytes are not lost: checked above).
  EXPECT_GE(at10k.other_sockets, 9900);
  EXPECT_LE(at10k.other_sockets, 10100);
  EXPECT_EQ(at10k.worker_received, at1k.worker_received);
  // Memory flat: 9,000 more connections add less than 1.5 MB to the agent's RSS and less than
  // 1 MB to its peak (the peak itself is set at start, when libbpf reads the kernel's BTF).
  // Measured: +0.1 to +0.7 MB with the 4-thread server; +0.86 to +1.07 MB since the server runs
  // 128 threads (issue 32 item 7), with every thread warmed first, over ~42,000 scrapes; before
  // the socket table, +1.6 to +2.0 MB (about 200 B per connection, without end).
  EXPECT_LT(at10k.rss_kb - at1k.rss_kb, 1536);
  EXPECT_LT(at10k.hwm_kb - at1k.hwm_kb, 1024);
  // Scrapes: p99 under 1 s with 16 clients at once, a tenth of Prometheus's default
  // scrape_timeout (10 s), leaving room for a loaded node; the issue measured 9.9 s.
  EXPECT_EQ(bad_scrapes, 0);
  EXPECT_LT(p99, 1000);
  for (int fd : held) close(fd);
}

}  // namespace
}  // namespace tfdiag::test
