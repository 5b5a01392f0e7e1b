#include "report/metrics_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <prometheus/text_serializer.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <vector>

#include "core/escape.h"

namespace tfdiag {

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

// Binds the address once ourselves, so that a port in use or an address the machine lacks is
// reported with the kernel's reason before anything else is set up.
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

// One connection: the request read so far, then the response being written (its head, and a
// body shared with every other reader of the same page).
struct Conn {
  int fd = -1;
  std::string client;  // the remote address, for the per-client cap
  int64_t accepted_ns = 0;
  std::string in;
  bool writing = false;
  std::string head;
  std::shared_ptr<const std::string> body;  // nullptr: none (HEAD, or head holds it all)
  size_t sent = 0;                          // bytes of head + body written
};

const char* Reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 431:
      return "Request Header Fields Too Large";
    case 503:
      return "Service Unavailable";
    default:
      return "Error";
  }
}

// Sets the response of `c`: status line and headers, then `body` unless the request was HEAD
// (RFC 9110 9.3.2: the headers of GET, no content).
void Respond(Conn* c, int status, const char* type, std::shared_ptr<const std::string> body,
             bool head, const char* extra = "") {
  c->head = fmt::format(
      "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nCache-Control: no-store\r\n"
      "Connection: close\r\n{}\r\n",
      status, Reason(status), type, body->size(), extra);
  c->body = head ? nullptr : std::move(body);
  c->writing = true;
  c->sent = 0;
}

std::shared_ptr<const std::string> Text(std::string s) {
  return std::make_shared<const std::string>(std::move(s));
}

// The end of the request header ("\r\n\r\n", or "\n\n" from lenient clients), npos if not yet.
size_t HeaderEnd(const std::string& in) {
  size_t a = in.find("\r\n\r\n");
  if (a != std::string::npos) return a + 4;
  size_t b = in.find("\n\n");
  return b == std::string::npos ? b : b + 2;
}

}  // namespace

MetricsServer::~MetricsServer() {
  stop_.store(true);
  if (wake_fd_ >= 0) {
    const uint64_t one = 1;
    (void)!::write(wake_fd_, &one, sizeof one);
  }
  if (thread_.joinable()) thread_.join();
  if (listen_fd_ >= 0) ::close(listen_fd_);
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

std::shared_ptr<const std::string> MetricsServer::Page() const {
  std::lock_guard<std::mutex> lock(page_mu_);
  if (page_stale_.exchange(false)) {
    page_ = Text(prometheus::TextSerializer().Serialize(collectable_->Collect()));
  }
  return page_;
}

void MetricsServer::Publish(const LiveFigures& figures) {
  LiveFigures f = figures;
  f.connections_refused = refused_.load();
  for (const std::string& line : collectable_->Update(f)) {
    PrintNote("tfdiag attach: warning: ", line);
  }
  // Rendered at the first request after this round, not here: rendering every page at the
  // sampling interval (1 s) for a scrape every 15 s was a third of the agent's own CPU (prometheus-
  // cpp's serializer formats each value through an ostream).
  page_stale_.store(true);
  last_round_ns_.store(SteadyNs());
}

void MetricsServer::Serve() {
  const int ep = ::epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0) return;
  std::map<int, Conn> conns;
  std::map<std::string, int> per_client;
  auto watch = [&](int fd, uint32_t events, int op) {
    epoll_event ev{};
    ev.events = events;
    ev.data.fd = fd;
    ::epoll_ctl(ep, op, fd, &ev);
  };
  auto close_conn = [&](std::map<int, Conn>::iterator it) {
    ::epoll_ctl(ep, EPOLL_CTL_DEL, it->first, nullptr);
    ::close(it->first);
    if (--per_client[it->second.client] <= 0) per_client.erase(it->second.client);
    return conns.erase(it);
  };
  watch(listen_fd_, EPOLLIN, EPOLL_CTL_ADD);
  watch(wake_fd_, EPOLLIN, EPOLL_CTL_ADD);
  constexpr const char* kText = "text/plain; charset=utf-8";
  // The response to a complete request header in c->in.
  auto answer = [&](Conn* c, size_t header_end) {
    const std::string_view req(c->in.data(), header_end);
    const size_t sp1 = req.find(' ');
    const size_t sp2 = sp1 == std::string_view::npos ? sp1 : req.find(' ', sp1 + 1);
    const size_t eol = req.find_first_of("\r\n");
    if (sp1 == std::string_view::npos || sp2 == std::string_view::npos || sp2 > eol) {
      return Respond(c, 400, kText, Text("bad request line\n"), false);
    }
    const std::string_view method = req.substr(0, sp1);
    std::string_view uri = req.substr(sp1 + 1, sp2 - sp1 - 1);
    uri = uri.substr(0, uri.find('?'));
    const bool head = method == "HEAD";
    if (!head && method != "GET") {
      return Respond(c, 405, kText, Text("only GET and HEAD are served\n"), false,
                     "Allow: GET, HEAD\r\n");
    }
    if (uri == "/metrics") {
      std::shared_ptr<const std::string> page = Page();
      return Respond(c, 200, "text/plain; version=0.0.4; charset=utf-8", page ? page : Text(""),
                     head);
    }
    if (uri == "/healthz") {
      const double age = (SteadyNs() - last_round_ns_.load()) / 1e9;
      if (age > stale_after_s_) {
        return Respond(c, 503, kText,
                       Text(fmt::format("stale: no sampling round completed for {:.1f} s (limit "
                                        "{:.1f} s)\n",
                                        age, stale_after_s_)),
                       head);
      }
      return Respond(c, 200, kText,
                     Text(fmt::format("ok: last sampling round {:.1f} s ago\n", age)), head);
    }
    if (uri == "/") return Respond(c, 200, "text/html; charset=utf-8", Text(kLanding), head);
    return Respond(c, 404, kText, Text("not found; see /metrics\n"), head);
  };
  std::vector<epoll_event> events(64);
  while (!stop_.load()) {
    // Deadlines are checked every 100 ms while connections are open; an idle server sleeps
    // until a connection or the stop (wake_fd_) comes, at most a second.
    const int n = ::epoll_wait(ep, events.data(), static_cast<int>(events.size()),
                               conns.empty() ? 1000 : 100);
    const int64_t now = SteadyNs();
    for (int i = 0; i < n; ++i) {
      const int fd = events[i].data.fd;
      if (fd == wake_fd_) continue;
      if (fd == listen_fd_) {
        for (;;) {
          sockaddr_storage sa{};
          socklen_t len = sizeof sa;
          const int cfd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&sa), &len,
                                    SOCK_NONBLOCK | SOCK_CLOEXEC);
          if (cfd < 0) break;
          char host[INET6_ADDRSTRLEN] = "?";
          if (sa.ss_family == AF_INET) {
            inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(&sa)->sin_addr, host, sizeof host);
          } else if (sa.ss_family == AF_INET6) {
            inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(&sa)->sin6_addr, host,
                      sizeof host);
          }
          // Loopback is one address for every client behind the proxy (deploy/daemonset.yaml):
          // only other addresses are capped each.
          const bool loopback = std::strcmp(host, "127.0.0.1") == 0 ||
                                std::strcmp(host, "::1") == 0 ||
                                std::strncmp(host, "::ffff:127.", 10) == 0;
          if (!loopback && per_client[host] >= kMaxPerClient) {
            ::close(cfd);
            refused_.fetch_add(1);
            continue;
          }
          if (static_cast<int>(conns.size()) >= kMaxConnections) {
            // Full: the oldest connection that has not delivered its request yet makes room (a
            // flood of idle connections cannot keep a scrape out); none: the new one goes.
            auto oldest = conns.end();
            for (auto c = conns.begin(); c != conns.end(); ++c) {
              if (!c->second.writing &&
                  (oldest == conns.end() || c->second.accepted_ns < oldest->second.accepted_ns)) {
                oldest = c;
              }
            }
            refused_.fetch_add(1);
            if (oldest == conns.end()) {
              ::close(cfd);
              continue;
            }
            close_conn(oldest);
          }
          // A small send buffer: a reader that never reads pins 256 KiB of kernel memory, not
          // the few MB loopback autotuning would give it, and filling it costs little.
          const int sndbuf = 256 << 10;
          ::setsockopt(cfd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
          ++per_client[host];
          Conn& c = conns[cfd];
          c.fd = cfd;
          c.client = host;
          c.accepted_ns = now;
          watch(cfd, EPOLLIN | EPOLLRDHUP, EPOLL_CTL_ADD);
        }
        continue;
      }
      auto it = conns.find(fd);
      if (it == conns.end()) continue;
      Conn& c = it->second;
      bool done = false;
      if (!c.writing) {
        char buf[2048];
        for (;;) {
          const ssize_t r = ::recv(fd, buf, sizeof buf, 0);
          if (r > 0) {
            c.in.append(buf, static_cast<size_t>(r));
            if (c.in.size() > kMaxRequestBytes) break;
            continue;
          }
          if (r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) done = true;
          break;
        }
        const size_t end = HeaderEnd(c.in);
        if (end != std::string::npos) {
          answer(&c, end);
        } else if (c.in.size() > kMaxRequestBytes) {
          Respond(&c, 431, kText, Text("request header too large\n"), false);
        } else if (done) {
          close_conn(it);
          continue;
        }
        if (c.writing) {
          done = false;
          watch(fd, EPOLLOUT, EPOLL_CTL_MOD);
        }
      }
      if (c.writing) {
        const size_t body_size = c.body ? c.body->size() : 0;
        while (c.sent < c.head.size() + body_size) {
          iovec iov[2];
          int k = 0;
          if (c.sent < c.head.size()) {
            iov[k++] = {c.head.data() + c.sent, c.head.size() - c.sent};
            if (body_size) iov[k++] = {const_cast<char*>(c.body->data()), body_size};
          } else {
            const size_t off = c.sent - c.head.size();
            iov[k++] = {const_cast<char*>(c.body->data()) + off, body_size - off};
          }
          msghdr msg{};
          msg.msg_iov = iov;
          msg.msg_iovlen = static_cast<size_t>(k);
          const ssize_t w = ::sendmsg(fd, &msg, MSG_NOSIGNAL);
          if (w < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) done = true;
            break;
          }
          c.sent += static_cast<size_t>(w);
        }
        if (c.sent >= c.head.size() + body_size) done = true;
      }
      if (done) close_conn(it);
    }
    // Deadlines: the whole request within kRequestDeadlineMs, the whole exchange within
    // kConnectionDeadlineMs.
    for (auto it = conns.begin(); it != conns.end();) {
      const int64_t age_ms = (now - it->second.accepted_ns) / 1000000;
      const bool late =
          it->second.writing ? age_ms > kConnectionDeadlineMs : age_ms > kRequestDeadlineMs;
      it = late ? close_conn(it) : std::next(it);
    }
  }
  for (auto it = conns.begin(); it != conns.end();) it = close_conn(it);
  ::close(ep);
}

StatusOr<std::unique_ptr<MetricsServer>> MetricsServer::Start(const std::string& address,
                                                              std::string* warning,
                                                              double stale_after_s) {
  StatusOr<ServeAddress> a = ParseServeAddress(address);
  if (!a.ok()) return a.status();
  TFDIAG_RETURN_IF_ERROR(ProbeBind(*a));
  if (a->all_interfaces && warning != nullptr) {
    *warning = "--serve " + address + " listens on every " + (a->ipv6 ? "IPv6" : "IPv4") +
               " interface (" + InterfaceList(a->ipv6) +
               "): /metrics names pods and peers to anyone who can reach them; bind the pod or "
               "node IP, or keep 127.0.0.1 and a NetworkPolicy, if that is not wanted";
  }
  std::unique_ptr<MetricsServer> s(new MetricsServer());
  s->collectable_ = std::make_shared<TfdiagCollectable>();
  s->stale_after_s_ = stale_after_s;
  s->last_round_ns_.store(SteadyNs());  // start-up counts as a round: a grace of stale_after_s
  const int fd =
      ::socket(a->ipv6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return IoError("--serve {}: socket: {}", address, std::strerror(errno));
  s->listen_fd_ = fd;
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  int rc;
  if (a->ipv6) {
    sockaddr_in6 sa{};
    sa.sin6_family = AF_INET6;
    sa.sin6_port = htons(static_cast<uint16_t>(a->port));
    inet_pton(AF_INET6, a->host.c_str(), &sa.sin6_addr);
    rc = ::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
  } else {
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(static_cast<uint16_t>(a->port));
    inet_pton(AF_INET, a->host.c_str(), &sa.sin_addr);
    rc = ::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
  }
  // The accept backlog: a burst of connections waits in the kernel (capped by
  // net.core.somaxconn), not in a SYN retransmission.
  if (rc != 0 || ::listen(fd, 1024) != 0) {
    return IoError("--serve {}: cannot listen: {}", address, std::strerror(errno));
  }
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
  s->port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                               : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  s->wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (s->wake_fd_ < 0) return IoError("--serve {}: eventfd: {}", address, std::strerror(errno));
  s->page_ = Text(prometheus::TextSerializer().Serialize(s->collectable_->Collect()));
  MetricsServer* raw = s.get();
  try {
    s->thread_ = std::thread([raw] { raw->Serve(); });
  } catch (const std::system_error& e) {
    return IoError("--serve {}: no thread: {}", address, e.what());
  }
  return s;
}

}  // namespace tfdiag
