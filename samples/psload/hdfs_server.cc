// The hdfs role: an HDFS-DataNode-like input server (default port 9866). A client asks for n
// bytes (kRead, like the DataNode's readBlock op) and the server streams them back in 64 KiB
// chunks, capped per connection at --hdfs-rate-mbps megabits/s. Streaming on request, rather
// than pushing bytes ahead, keeps the server's count equal to what each worker consumed.
// Threads: "hdfs_acceptor", and one "DataXceiver" per client, as in the DataNode.
#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "samples/psload/roles.h"

namespace psload {
namespace {

constexpr size_t kChunk = 64 * 1024;

// Thread-safety: Start/Stop/Fill from the role's main thread; the rest is internal.
class HdfsServer {
 public:
  explicit HdfsServer(const Options& o) : o_(o), data_(kChunk) {
    for (size_t i = 0; i < data_.size(); ++i) data_[i] = static_cast<char>('a' + i % 26);
  }
  ~HdfsServer() {
    if (listen_fd_ >= 0) close(listen_fd_);
  }

  bool Start(std::string* error) {
    listen_fd_ = ListenOn(o_.listen, error);
    if (listen_fd_ < 0) return false;
    acceptor_ = StartNamedThread("hdfs_acceptor", [this] { AcceptLoop(); });
    return true;
  }

  std::string address() const { return SocketAddress(listen_fd_, false); }

  void Stop() {
    stop_ = true;
    shutdown(listen_fd_, SHUT_RDWR);  // wakes accept()
    acceptor_.join();
    std::vector<std::thread> threads;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto& [ptr, conn] : conns_) conn->Shutdown();
      threads.swap(xceivers_);
    }
    for (std::thread& t : threads) t.join();
  }

  void Fill(Summary* s) {
    std::lock_guard<std::mutex> lock(mu_);
    s->peers = closed_.peers;
    for (auto& [ptr, conn] : conns_) AddPeer(*conn, s);
    for (const PeerSummary& p : s->peers) s->hdfs_bytes_served += p.hdfs_bytes;
  }

 private:
  void AcceptLoop() {
    while (!stop_) {
      int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        break;  // shut down by Stop(), or a fatal error
      }
      int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      auto conn = std::make_unique<Conn>(fd);
      Conn* c = conn.get();
      std::lock_guard<std::mutex> lock(mu_);
      if (stop_) break;  // Stop() already shut the others down; conn closes here
      conns_[c] = std::move(conn);
      xceivers_.push_back(StartNamedThread("DataXceiver", [this, c] { Serve(c); }));
    }
  }

  void Serve(Conn* c) {
    Pace pace;
    FrameHeader h;
    while (!stop_ && c->RecvHeader(&h)) {
      if (h.type == kHello && h.count >= 4 && h.count <= 4096) {
        std::string payload(h.count, '\0');
        if (!c->RecvExact(payload.data(), h.count)) break;
        c->peer_task = payload.substr(4);
      } else if (h.type == kRead) {
        if (!Stream(c, h.count, &pace)) break;
      } else {
        std::string text = fmt::format("hdfs does not serve frame type {}", h.type);
        c->SendFrame(kError, static_cast<uint32_t>(text.size()), text.data(), text.size());
        break;
      }
    }
    if (!c->error().empty() && !stop_) {
      fmt::print(stderr, "psload {}: {}\n", o_.TaskName(), c->error());
    }
    std::lock_guard<std::mutex> lock(mu_);
    AddPeer(*c, &closed_);
    conns_.erase(c);
  }

  // Token bucket of one chunk: `next` is when the bucket has room for the next byte.
  struct Pace {
    std::chrono::steady_clock::time_point next{};
  };

  // Sends one kData frame of n bytes in chunks, paced to --hdfs-rate-mbps (bursts <= 1 chunk).
  bool Stream(Conn* c, uint32_t n, Pace* pace) {
    using Clock = std::chrono::steady_clock;
    const double bytes_per_s = o_.hdfs_rate_mbps * 1e6 / 8;
    auto seconds = [](double s) {
      return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
    };
    size_t left = n;
    bool first = true;
    while (first || left > 0) {
      size_t k = left < kChunk ? left : kChunk;
      if (bytes_per_s > 0) {
        pace->next = std::max(pace->next, Clock::now() - seconds(kChunk / bytes_per_s));
        pace->next += seconds(k / bytes_per_s);
        while (!stop_ && Clock::now() < pace->next) {
          std::this_thread::sleep_until(
              std::min(pace->next, Clock::now() + std::chrono::milliseconds(50)));
        }
        if (stop_) return false;
      }
      bool ok = first ? c->SendFrame(kData, n, data_.data(), k) : c->SendBytes(data_.data(), k);
      if (!ok) return false;
      c->data_bytes += k;
      left -= k;
      first = false;
    }
    return true;
  }

  const Options& o_;
  std::vector<char> data_;
  int listen_fd_ = -1;
  std::atomic<bool> stop_{false};
  std::thread acceptor_;

  std::mutex mu_;  // guards conns_, xceivers_, closed_
  std::map<Conn*, std::unique_ptr<Conn>> conns_;
  std::vector<std::thread> xceivers_;
  Summary closed_;  // peers of closed connections
};

}  // namespace

int RunHdfs(const Options& o, Summary* summary) { return RunServer<HdfsServer>(o, summary); }

}  // namespace psload
