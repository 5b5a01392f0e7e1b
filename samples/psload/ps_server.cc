// The PS role: one embedding shard (rows x dim floats) and a small dense variable, served to
// workers by a fixed pool of "tf_ps_rpc" threads sharing one epoll set (EPOLLONESHOT: one thread
// per connection at a time, like a gRPC completion-queue pool). Sockets stay blocking; epoll only
// says which connection has a request.
#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "samples/psload/roles.h"
#include "samples/psload/timeline.h"

namespace psload {
namespace {

constexpr float kLearningRate = 0.01f;
constexpr int kStripes = 64;  // row lock stripes: concurrent pushes to one row are serialized

// Per-thread scratch buffers, reused across requests.
struct Scratch {
  std::vector<uint64_t> ids;
  std::vector<float> floats;
  int lane = 0;  // the pool thread's timeline lane
};

// Thread-safety: all methods are for the owning role; pool threads synchronize internally.
class PsServer {
 public:
  explicit PsServer(const Options& o)
      : o_(o), table_(static_cast<size_t>(o.rows) * o.dim), dense_(o.dense_floats, 0.5f) {
    for (size_t i = 0; i < table_.size(); ++i) table_[i] = static_cast<float>(i % 97) * 0.01f;
  }
  ~PsServer() {
    if (listen_fd_ >= 0) close(listen_fd_);
    if (epoll_fd_ >= 0) close(epoll_fd_);
    if (stop_fd_ >= 0) close(stop_fd_);
  }

  bool Start(std::string* error) {
    const std::string& addr = o_.ps_hosts[o_.index];
    listen_fd_ = ListenOn(addr, error);
    if (listen_fd_ < 0) return false;
    epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
    stop_fd_ = eventfd(0, EFD_CLOEXEC);
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLONESHOT;
    ev.data.ptr = &listen_tag_;
    epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listen_fd_, &ev);
    ev.events = EPOLLIN;  // level-triggered: wakes every pool thread at stop
    ev.data.ptr = &stop_tag_;
    epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, stop_fd_, &ev);
    for (int i = 0; i < o_.ps_threads; ++i) {
      pool_.push_back(StartNamedThread("tf_ps_rpc", [this] { PoolLoop(); }));
    }
    return true;
  }

  std::string address() const { return SocketAddress(listen_fd_, false); }

  // Stops the pool: requests in flight finish (1 s grace), then open sockets are shut down.
  void Stop() {
    uint64_t one = 1;
    ssize_t wrote = write(stop_fd_, &one, sizeof(one));  // an eventfd write cannot fail here
    (void)wrote;
    {
      std::unique_lock<std::mutex> lock(mu_);
      exited_cv_.wait_for(lock, std::chrono::seconds(1),
                          [this] { return exited_ == static_cast<int>(pool_.size()); });
      for (auto& [ptr, conn] : conns_) conn->Shutdown();
    }
    for (std::thread& t : pool_) t.join();
  }

  void Fill(Summary* s) {
    std::lock_guard<std::mutex> lock(mu_);
    s->peers = closed_.peers;
    for (auto& [ptr, conn] : conns_) AddPeer(*conn, s);
    s->rows_pulled = rows_pulled_;
    s->rows_pushed = rows_pushed_;
  }

 private:
  void PoolLoop() {
    Scratch scratch;
    scratch.lane = next_lane_++;
    while (true) {
      epoll_event ev{};
      int n = epoll_wait(epoll_fd_, &ev, 1, -1);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 || ev.data.ptr == &stop_tag_) break;
      if (ev.data.ptr == &listen_tag_) {
        Accept();
        continue;
      }
      Conn* c = static_cast<Conn*>(ev.data.ptr);
      if (Serve(c, &scratch)) {
        epoll_event again{};
        again.events = EPOLLIN | EPOLLONESHOT;
        again.data.ptr = c;
        epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, c->fd(), &again);
      } else {
        Close(c);
      }
    }
    std::lock_guard<std::mutex> lock(mu_);
    ++exited_;
    exited_cv_.notify_all();
  }

  void Accept() {
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) {
      int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      auto conn = std::make_unique<Conn>(fd);
      Conn* c = conn.get();
      {
        std::lock_guard<std::mutex> lock(mu_);
        conns_[c] = std::move(conn);
      }
      epoll_event ev{};
      ev.events = EPOLLIN | EPOLLONESHOT;
      ev.data.ptr = c;
      epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev);
    }
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLONESHOT;
    ev.data.ptr = &listen_tag_;
    epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, listen_fd_, &ev);
  }

  // Counters go into the summary; the socket closes now (under mu_, so Stop() never shuts down
  // a reused fd).
  void Close(Conn* c) {
    epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, c->fd(), nullptr);
    if (!c->error().empty()) fmt::print(stderr, "psload {}: {}\n", o_.TaskName(), c->error());
    std::lock_guard<std::mutex> lock(mu_);
    AddPeer(*c, &closed_);
    conns_.erase(c);
  }

  bool Fail(Conn* c, const std::string& text) {
    c->set_error(text);
    c->SendFrame(kError, static_cast<uint32_t>(text.size()), text.data(), text.size());
    return false;
  }

  // --ps-cpu-ns-per-row: the CPU a real PS spends per row it gathers or updates.
  void Work(uint64_t rows) {
    if (o_.ps_cpu_ns_per_row <= 0) return;
    volatile float keep = SpinCpu(static_cast<int64_t>(rows) * o_.ps_cpu_ns_per_row / 1000, 1.0f);
    (void)keep;
  }

  // Reads one request and answers it. False: close the connection.
  bool Serve(Conn* c, Scratch* s) {
    FrameHeader h;
    if (!c->RecvHeader(&h)) return false;
    const int64_t t0 = timeline_ != nullptr ? Timeline::NowNs() : 0;
    auto record = [&](Timeline::Op op, bool ok) {
      if (ok && timeline_ != nullptr) timeline_->Add(op, 0, t0, Timeline::NowNs(), s->lane);
      return ok;
    };
    const uint64_t n = h.count, row_bytes = uint64_t{4} * o_.dim;
    switch (h.type) {
      case kHello: {
        if (n < 4 || n > 4096) return Fail(c, fmt::format("bad hello length {}", n));
        std::string payload(n, '\0');
        if (!c->RecvExact(payload.data(), n)) return false;
        uint32_t dim = 0;
        std::memcpy(&dim, payload.data(), 4);
        c->peer_task = payload.substr(4);
        if (static_cast<int>(dim) != o_.dim) {
          return Fail(c, fmt::format("{} has --dim={}, {} sent {}", o_.TaskName(), o_.dim,
                                     c->peer_task, dim));
        }
        return true;
      }
      case kPull: {
        if (n * (8 + row_bytes) > kMaxPayloadBytes) return Fail(c, "pull too large");
        s->ids.resize(n);
        s->floats.resize(n * o_.dim);
        if (!c->RecvExact(s->ids.data(), n * 8)) return false;
        for (uint64_t i = 0; i < n; ++i) {
          uint64_t row = s->ids[i] % static_cast<uint64_t>(o_.rows);
          std::lock_guard<std::mutex> lock(stripes_[row % kStripes]);
          std::memcpy(&s->floats[i * o_.dim], &table_[row * o_.dim], row_bytes);
        }
        c->rows_pulled += n;
        rows_pulled_ += n;
        Work(n);
        return record(Timeline::Op::kGather,
                      c->SendFrame(kPullReply, h.count, s->floats.data(), n * row_bytes));
      }
      case kPush: {
        if (n * (8 + row_bytes) > kMaxPayloadBytes) return Fail(c, "push too large");
        s->ids.resize(n);
        s->floats.resize(n * o_.dim);
        if (!c->RecvExact(s->ids.data(), n * 8) || !c->RecvExact(s->floats.data(), n * row_bytes)) {
          return false;
        }
        for (uint64_t i = 0; i < n; ++i) {
          uint64_t row = s->ids[i] % static_cast<uint64_t>(o_.rows);
          std::lock_guard<std::mutex> lock(stripes_[row % kStripes]);
          float* dst = &table_[row * o_.dim];
          const float* grad = &s->floats[i * o_.dim];
          for (int d = 0; d < o_.dim; ++d) dst[d] += kLearningRate * grad[d];
        }
        c->rows_pushed += n;
        rows_pushed_ += n;
        Work(n);
        return record(Timeline::Op::kApply, c->SendFrame(kPushAck, h.count));
      }
      case kDensePull: {
        if (n * 4 > kMaxPayloadBytes) return Fail(c, "dense pull too large");
        s->floats.assign(n, 0.5f);
        for (uint64_t i = 0; i < n && !dense_.empty(); ++i)
          s->floats[i] = dense_[i % dense_.size()];
        return record(Timeline::Op::kDenseRead,
                      c->SendFrame(kDenseReply, h.count, s->floats.data(), n * 4));
      }
      default:
        return Fail(c, fmt::format("{} does not serve frame type {}", o_.TaskName(), h.type));
    }
  }

  const Options& o_;
  Timeline* const timeline_ = ProcessTimeline();  // --timeline, or nullptr
  std::atomic<int> next_lane_{0};
  std::vector<float> table_;  // rows x dim, row-major
  std::vector<float> dense_;  // the dense variable (read-only here)
  std::mutex stripes_[kStripes];
  int listen_fd_ = -1, epoll_fd_ = -1, stop_fd_ = -1;
  char listen_tag_ = 0, stop_tag_ = 0;  // their addresses tag epoll events
  std::vector<std::thread> pool_;
  std::atomic<uint64_t> rows_pulled_{0}, rows_pushed_{0};

  std::mutex mu_;  // guards conns_, closed_, exited_
  std::condition_variable exited_cv_;
  std::map<Conn*, std::unique_ptr<Conn>> conns_;
  Summary closed_;  // peers of closed connections
  int exited_ = 0;
};

}  // namespace

int RunPs(const Options& o, Summary* summary) { return RunServer<PsServer>(o, summary); }

}  // namespace psload
