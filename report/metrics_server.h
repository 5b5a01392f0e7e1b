// The HTTP side of `tfdiag attach --serve ADDR`: /metrics (the TfdiagCollectable's page),
// /healthz and a landing page on /, served by one thread with epoll, built for hostile clients.
// Thread-safety: Publish() may run on any thread, concurrently with requests. Not copyable.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "core/live_figures.h"
#include "core/status.h"
#include "report/prometheus_exporter.h"

namespace tfdiag {

// A parsed --serve address.
struct ServeAddress {
  std::string host;  // "127.0.0.1", "0.0.0.0", "::"
  int port = 0;      // 0: any free port
  bool ipv6 = false;
  bool all_interfaces = false;  // 0.0.0.0 or ::
  std::string Listen() const;   // "127.0.0.1:9464", "[::]:9464"
};
// Accepts "HOST:PORT" (IPv4 literal or localhost), "[IPv6]:PORT", ":PORT" (all interfaces, as
// Prometheus's own --web.listen-address) and a bare "PORT" (127.0.0.1). Errors: kUsage saying
// which part is wrong (host not an IP address, port not 0-65535, empty).
StatusOr<ServeAddress> ParseServeAddress(const std::string& text);
// "lo 127.0.0.1, eth0 10.0.0.5": the machine's interfaces with addresses of the family.
std::string InterfaceList(bool ipv6);

// Serves, to GET and HEAD only (any other method: 405 with `Allow: GET, HEAD`):
//   /metrics  the Prometheus text format (0.0.4): rendered at most once per Publish(), by the
//             first request after it, and shared by every reader until the next (a slow reader
//             holds a reference to the page, never a copy)
//   /healthz  200 "ok: ..." while sampling rounds complete; 503 "stale: ..." once none has
//             completed for stale_after_s. It names no pod; deploy/daemonset.yaml lets it through
//             the proxy unauthenticated (docs/security.md).
//   /         a landing page; anything else 404.
// Hostile clients cost bounded time and memory: one thread serves every connection (no worker
// per connection to pin); a connection must deliver its whole request (request line, headers,
// any body: a request with a body is answered and closed without reading it) within
// kRequestDeadlineMs of its accept and is dropped otherwise ("slowloris", trickled bodies); the
// response must be taken within kConnectionDeadlineMs of the accept; at most kMaxConnections
// are open (past it the oldest one still sending its request is closed to make room, so a flood
// of idle connections cannot keep a scrape out), at most kMaxPerClient from one address other
// than loopback (behind the proxy every client is 127.0.0.1; more are closed at accept); both
// are counted (refused(), tfdiag_agent_connections_refused_total);
// a request is at most kMaxRequestBytes (431 past it). No keep-alive: one request per
// connection. Who may connect at all is the deployment's business: 127.0.0.1 behind an
// authenticating proxy (deploy/daemonset.yaml).
class MetricsServer {
 public:
  static constexpr int kMaxConnections = 256;
  static constexpr int kMaxPerClient = 32;
  static constexpr int kRequestDeadlineMs = 2000;
  static constexpr int kConnectionDeadlineMs = 15000;
  static constexpr size_t kMaxRequestBytes = 8192;
  // Errors: kUsage for a bad address, kIo when it cannot be bound (with the reason). When the
  // address is every interface, *warning names them. stale_after_s: see /healthz; the time of
  // the start counts as a completed round.
  static StatusOr<std::unique_ptr<MetricsServer>> Start(const std::string& address,
                                                        std::string* warning = nullptr,
                                                        double stale_after_s = 10);
  ~MetricsServer();  // stops the serving thread and closes every connection
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // The figures of a completed sampling round: updates the collectable, marks /metrics for
  // rendering at its next request and /healthz fresh, and logs new identity conflicts to stderr.
  void Publish(const LiveFigures& figures);
  TfdiagCollectable& collectable() { return *collectable_; }
  int port() const { return port_; }                   // the bound port (useful with port 0)
  int64_t refused() const { return refused_.load(); }  // connections closed by the caps

 private:
  MetricsServer() = default;
  void Serve();
  std::shared_ptr<const std::string> Page() const;
  std::shared_ptr<TfdiagCollectable> collectable_;
  mutable std::mutex page_mu_;
  mutable std::shared_ptr<const std::string> page_;  // guarded by page_mu_
  mutable std::atomic<bool> page_stale_{false};      // a round was published since page_
  int listen_fd_ = -1, wake_fd_ = -1, port_ = 0;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> last_round_ns_{0};  // steady clock, ns
  std::atomic<int64_t> refused_{0};
  double stale_after_s_ = 10;
};

}  // namespace tfdiag
