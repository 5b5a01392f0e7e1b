#include "samples/psload/net.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

namespace psload {
namespace {

bool Resolve(const std::string& hostport, sockaddr_in* out, std::string* error) {
  std::string host;
  int port = 0;
  if (!SplitHostPort(hostport, &host, &port)) {
    *error = fmt::format("'{}' is not host:port", hostport);
    return false;
  }
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  int rc = getaddrinfo(host.c_str(), nullptr, &hints, &res);
  if (rc != 0 || res == nullptr) {
    *error = fmt::format("cannot resolve '{}': {}", host, gai_strerror(rc));
    return false;
  }
  *out = *reinterpret_cast<sockaddr_in*>(res->ai_addr);
  out->sin_port = htons(static_cast<uint16_t>(port));
  freeaddrinfo(res);
  return true;
}

}  // namespace

Conn::Conn(int fd) : fd_(fd), local_(SocketAddress(fd, false)), remote_(SocketAddress(fd, true)) {}

Conn::~Conn() {
  if (fd_ >= 0) close(fd_);
}

bool Conn::SendFrame(uint32_t type, uint32_t count, const void* p1, size_t n1, const void* p2,
                     size_t n2) {
  FrameHeader h{type, count};
  iovec iov[3] = {{&h, sizeof(h)}, {const_cast<void*>(p1), n1}, {const_cast<void*>(p2), n2}};
  int first = 0, n_iov = 3;
  while (first < n_iov) {
    msghdr msg{};
    msg.msg_iov = iov + first;
    msg.msg_iovlen = n_iov - first;
    ssize_t n = sendmsg(fd_, &msg, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      error_ = fmt::format("send to {}: {}", remote_, std::strerror(errno));
      return false;
    }
    bytes_sent += static_cast<uint64_t>(n);
    size_t left = static_cast<size_t>(n);
    while (first < n_iov && left >= iov[first].iov_len) {
      left -= iov[first].iov_len;
      ++first;
    }
    if (first < n_iov) {
      iov[first].iov_base = static_cast<char*>(iov[first].iov_base) + left;
      iov[first].iov_len -= left;
    }
  }
  ++frames_sent;
  return true;
}

bool Conn::SendBytes(const void* p, size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n > 0) {
    ssize_t k = send(fd_, c, n, MSG_NOSIGNAL);
    if (k < 0) {
      if (errno == EINTR) continue;
      error_ = fmt::format("send to {}: {}", remote_, std::strerror(errno));
      return false;
    }
    bytes_sent += static_cast<uint64_t>(k);
    c += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

bool Conn::RecvExact(void* p, size_t n) {
  char* c = static_cast<char*>(p);
  size_t got = 0;
  while (got < n) {
    ssize_t k = recv(fd_, c + got, n - got, 0);
    if (k < 0) {
      if (errno == EINTR) continue;
      error_ = fmt::format("recv from {}: {}", remote_, std::strerror(errno));
      return false;
    }
    if (k == 0) {
      eof_ = true;
      if (got > 0) error_ = fmt::format("{} closed mid-frame", remote_);
      return false;
    }
    bytes_received += static_cast<uint64_t>(k);
    got += static_cast<size_t>(k);
  }
  return true;
}

bool Conn::RecvDiscard(size_t n) {
  char buf[64 * 1024];
  while (n > 0) {
    size_t k = n < sizeof(buf) ? n : sizeof(buf);
    if (!RecvExact(buf, k)) {
      if (eof_ && error_.empty()) error_ = fmt::format("{} closed mid-frame", remote_);
      return false;
    }
    n -= k;
  }
  return true;
}

bool Conn::RecvHeader(FrameHeader* h) {
  if (!RecvExact(h, sizeof(*h))) return false;
  ++frames_received;
  return true;
}

bool Conn::Expect(const FrameHeader& h, uint32_t want) {
  if (h.type == kError) {
    std::string text(h.count < 4096 ? h.count : 4096, '\0');
    if (RecvExact(text.data(), text.size())) {
      error_ = fmt::format("{} says: {}", remote_, text);
    }
    return false;
  }
  if (h.type != want) {
    error_ = fmt::format("{} sent frame type {}, expected {}", remote_, h.type, want);
    return false;
  }
  return true;
}

void Conn::Shutdown() { shutdown(fd_, SHUT_RDWR); }

bool SplitHostPort(const std::string& hp, std::string* host, int* port) {
  size_t colon = hp.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 >= hp.size()) return false;
  char* end = nullptr;
  long p = std::strtol(hp.c_str() + colon + 1, &end, 10);
  if (*end != '\0' || p < 0 || p > 65535) return false;
  *host = hp.substr(0, colon);
  *port = static_cast<int>(p);
  return true;
}

int ListenOn(const std::string& hostport, std::string* error) {
  sockaddr_in addr{};
  if (!Resolve(hostport, &addr, error)) return -1;
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *error = fmt::format("socket: {}", std::strerror(errno));
    return -1;
  }
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || listen(fd, 128) != 0) {
    *error = fmt::format("cannot listen on {}: {}", hostport, std::strerror(errno));
    close(fd);
    return -1;
  }
  return fd;
}

int ConnectWithRetry(const std::string& hostport, double timeout_s, const std::atomic<bool>* stop,
                     std::string* error) {
  sockaddr_in addr{};
  if (!Resolve(hostport, &addr, error)) return -1;
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::microseconds(static_cast<int64_t>(timeout_s * 1e6));
  while (true) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
      int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      return fd;
    }
    int err = errno;
    close(fd);
    bool retry = err == ECONNREFUSED || err == EINTR || err == ETIMEDOUT || err == EAGAIN;
    if (!retry || std::chrono::steady_clock::now() >= deadline || (stop && *stop)) {
      *error = fmt::format("cannot connect to {} (waited {} s): {}", hostport, timeout_s,
                           std::strerror(err));
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

std::string SocketAddress(int fd, bool peer) {
  sockaddr_in a{};
  socklen_t len = sizeof(a);
  int rc = peer ? getpeername(fd, reinterpret_cast<sockaddr*>(&a), &len)
                : getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  if (rc != 0 || a.sin_family != AF_INET) return "?";
  char ip[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &a.sin_addr, ip, sizeof(ip));
  return fmt::format("{}:{}", ip, ntohs(a.sin_port));
}

}  // namespace psload
