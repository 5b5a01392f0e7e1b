// The worker role. One "tf_inter_op" thread drives the steps (like TF's executor):
//   [read input from hdfs] -> pull rows from each PS -> compute on "tf_intra_op" threads -> push.
// RPCs to the PS run one after another on that thread: each PS reads a whole request before it
// answers, so the exchange cannot deadlock whatever the payload sizes.
// With --prefetch=N a "tf_data_iter" thread reads input batches from hdfs ahead of the steps
// (at most N waiting), as tf.data's prefetch(N) does, and the step's IteratorGetNext only waits
// for a batch to be there.
#include <fcntl.h>
#include <fmt/format.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <random>
#include <vector>

#include "samples/psload/roles.h"
#include "samples/psload/timeline.h"

namespace psload {
namespace {

// Thread-safety: Run() on the role's main thread; the pools are internal.
class Worker {
 public:
  explicit Worker(const Options& o) : o_(o), num_ps_(static_cast<int>(o.ps_hosts.size())) {
    ids_.resize(num_ps_);
    vals_.resize(num_ps_);
    grads_.resize(num_ps_);
    rng_.seed(o.seed != 0 ? o.seed : 0x9e3779b97f4a7c15ULL * (o.index + 1) + (o.job == "chief"));
  }

  ~Worker() {
    if (step_fd_ >= 0) close(step_fd_);
  }

  int Run(Summary* summary) {
    if (!o_.step_file.empty()) {
      step_fd_ = open(o_.step_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (step_fd_ < 0) {
        summary->error = fmt::format("--step-file {}: {}", o_.step_file, std::strerror(errno));
        summary->exit_reason = "error";
        return 1;
      }
      WriteStepCount();
    }
    for (int t = 0; t < o_.worker_threads; ++t) {
      intra_.push_back(StartNamedThread("tf_intra_op", [this, t] { IntraLoop(t); }));
    }
    inter_ = StartNamedThread("tf_inter_op", [this] { InterLoop(); });
    bool signal = WaitForSignalOr([&] {
      return finished_.load() ||
             (started_.load() && SecondsSince(start_) >= o_.duration_s && o_.duration_s > 0);
    });
    stop_ = true;
    // The step in flight finishes; a peer that hangs gets its socket shut down after 5 s.
    auto grace = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!finished_ && std::chrono::steady_clock::now() < grace) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (!finished_) {
      std::lock_guard<std::mutex> lock(conns_mu_);
      for (auto& c : ps_) c->Shutdown();
      if (hdfs_) hdfs_->Shutdown();
    }
    inter_.join();
    {
      std::lock_guard<std::mutex> lock(mu_);
      quit_ = true;
      work_cv_.notify_all();
    }
    for (std::thread& t : intra_) t.join();

    for (auto& c : ps_) AddPeer(*c, summary);
    if (hdfs_) AddPeer(*hdfs_, summary);
    summary->steps = steps_;
    summary->step_us = std::move(step_us_);
    summary->wall_time_s = started_ ? std::chrono::duration<double>(end_ - start_).count() : 0;
    summary->hdfs_bytes_read = hdfs_ ? hdfs_->data_bytes.load() : 0;
    for (auto& c : ps_) {
      summary->rows_pulled += c->rows_pulled;
      summary->rows_pushed += c->rows_pushed;
    }
    if (!error_.empty()) {
      summary->error = error_;
      summary->exit_reason = "error";
      return 1;
    }
    summary->exit_reason = signal                                       ? "signal"
                           : o_.max_steps > 0 && steps_ >= o_.max_steps ? "steps"
                                                                        : "duration";
    return 0;
  }

 private:
  // Connects and says hello; the connection is kept (for its counters) even if the hello fails.
  bool Connect(const std::string& addr, const std::string& peer_task, std::unique_ptr<Conn>* out) {
    std::string error;
    int fd = ConnectWithRetry(addr, o_.connect_timeout_s, &stop_, &error);
    if (fd < 0) {
      if (!stop_) error_ = fmt::format("{}: {}", peer_task, error);  // a signal is no error
      return false;
    }
    auto c = std::make_unique<Conn>(fd);
    c->peer_task = peer_task;
    std::string hello(4, '\0');
    uint32_t dim = static_cast<uint32_t>(o_.dim);
    std::memcpy(hello.data(), &dim, 4);
    hello += o_.TaskName();
    bool ok = c->SendFrame(kHello, static_cast<uint32_t>(hello.size()), hello.data(), hello.size());
    if (!ok) error_ = c->error();
    std::lock_guard<std::mutex> lock(conns_mu_);
    *out = std::move(c);
    return ok;
  }

  void InterLoop() {
    bool ok = true;
    for (int p = 0; p < num_ps_ && ok; ++p) {
      std::unique_ptr<Conn> c;
      ok = Connect(o_.ps_hosts[p], fmt::format("ps:{}", p), &c);
      std::lock_guard<std::mutex> lock(conns_mu_);
      if (c) ps_.push_back(std::move(c));
    }
    if (ok && !o_.hdfs.empty()) ok = Connect(o_.hdfs, "hdfs:0", &hdfs_);
    const bool prefetch = ok && hdfs_ && o_.prefetch > 0 && o_.input_bytes_per_step > 0;
    if (prefetch) reader_ = StartNamedThread("tf_data_iter", [this] { ReaderLoop(); });
    start_ = std::chrono::steady_clock::now();
    started_ = ok;
    auto step_start = start_;
    while (ok && !stop_ && (o_.max_steps == 0 || steps_ < o_.max_steps)) {
      ok = Step();
      if (ok) {
        const auto now = std::chrono::steady_clock::now();
        if (step_us_.size() < kMaxStepTimes) {
          step_us_.push_back(
              std::chrono::duration_cast<std::chrono::microseconds>(now - step_start).count());
        }
        step_start = now;
        ++steps_;
        WriteStepCount();
      }
    }
    end_ = std::chrono::steady_clock::now();
    if (prefetch) {  // the batch being read is finished (or its socket shut down by Run())
      {
        std::lock_guard<std::mutex> lock(in_mu_);
        in_quit_ = true;
        in_cv_.notify_all();
      }
      reader_.join();
    }
    finished_ = true;
  }

  // The prefetch thread: reads a batch whenever fewer than --prefetch wait, until told to quit
  // or the hdfs connection fails (then in_error_ says why and the step fails with it).
  void ReaderLoop() {
    const uint32_t want = static_cast<uint32_t>(o_.input_bytes_per_step);
    while (true) {
      {
        std::unique_lock<std::mutex> lock(in_mu_);
        in_cv_.wait(lock, [&] { return in_quit_ || buffered_ < o_.prefetch; });
        if (in_quit_) return;
      }
      FrameHeader h;
      bool ok = hdfs_->SendFrame(kRead, want) && hdfs_->RecvHeader(&h) && hdfs_->Expect(h, kData);
      if (ok && h.count != want) {
        hdfs_->set_error(
            fmt::format("{} answered count {}, expected {}", hdfs_->remote(), h.count, want));
        ok = false;
      }
      ok = ok && hdfs_->RecvDiscard(want);
      std::lock_guard<std::mutex> lock(in_mu_);
      if (!ok) {
        in_error_ = hdfs_->error().empty()
                        ? fmt::format("{} (hdfs:0) closed the connection", hdfs_->remote())
                        : fmt::format("hdfs:0: {}", hdfs_->error());
        in_failed_ = true;
        in_cv_.notify_all();
        return;
      }
      hdfs_->data_bytes += want;
      ++buffered_;
      in_cv_.notify_all();
    }
  }

  // IteratorGetNext with --prefetch: takes a batch the reader has read, waiting for one.
  bool NextPrefetched() {
    std::unique_lock<std::mutex> lock(in_mu_);
    in_cv_.wait(lock, [&] { return buffered_ > 0 || in_failed_; });
    if (buffered_ == 0) {
      error_ = in_error_;
      return false;
    }
    --buffered_;
    in_cv_.notify_all();
    return true;
  }

  bool Failed(Conn* c) {
    error_ = c->error().empty()
                 ? fmt::format("{} ({}) closed the connection", c->remote(), c->peer_task)
                 : fmt::format("{}: {}", c->peer_task, c->error());
    return false;
  }

  // Receives a reply header of type `want` whose count must equal `count`.
  bool Reply(Conn* c, uint32_t want, uint32_t count) {
    FrameHeader h;
    if (!c->RecvHeader(&h) || !c->Expect(h, want)) return Failed(c);
    if (h.count != count) {
      c->set_error(fmt::format("{} answered count {}, expected {}", c->remote(), h.count, count));
      return Failed(c);
    }
    return true;
  }

  // Records `op` from `start_ns` to now on the timeline (--timeline), if any.
  void Record(Timeline::Op op, int peer, int64_t start_ns) {
    if (timeline_ != nullptr) timeline_->Add(op, peer, start_ns, Timeline::NowNs());
  }
  int64_t Now() const { return timeline_ != nullptr ? Timeline::NowNs() : 0; }

  bool Step() {
    int64_t t0 = Now();
    Record(Timeline::Op::kSource, 0, t0);
    if (hdfs_ && o_.input_bytes_per_step > 0 && o_.prefetch > 0) {  // IteratorGetNext
      if (!NextPrefetched()) return false;
      Record(Timeline::Op::kInput, 0, t0);
    } else if (hdfs_ && o_.input_bytes_per_step > 0) {
      uint32_t want = static_cast<uint32_t>(o_.input_bytes_per_step);
      if (!hdfs_->SendFrame(kRead, want) || !Reply(hdfs_.get(), kData, want)) {
        return Failed(hdfs_.get());
      }
      if (!hdfs_->RecvDiscard(want)) return Failed(hdfs_.get());
      hdfs_->data_bytes += want;
      Record(Timeline::Op::kInput, 0, t0);
    }
    const int64_t tp = Now();
    const uint64_t space = static_cast<uint64_t>(o_.rows) * num_ps_;
    for (auto& v : ids_) v.clear();
    for (int i = 0; i < o_.rows_per_step; ++i) {
      uint64_t id = rng_() % space;
      if (o_.placement == Placement::kHot) {
        ids_[0].push_back(id);
      } else {
        ids_[id % num_ps_].push_back(id / num_ps_);
      }
    }
    Record(Timeline::Op::kPartition, 0, tp);
    const size_t row_bytes = sizeof(float) * o_.dim;
    const bool dense = o_.placement == Placement::kHot && o_.dense_floats > 0;
    const uint32_t k = static_cast<uint32_t>(o_.dense_floats);
    std::vector<int64_t> pull_at(num_ps_), dense_at(num_ps_);
    auto send_pull = [&](int p) {  // RecvTensor: gather rows on the PS
      Conn* c = ps_[p].get();
      uint32_t n = static_cast<uint32_t>(ids_[p].size());
      vals_[p].resize(size_t{n} * o_.dim);
      grads_[p].resize(size_t{n} * o_.dim);
      pull_at[p] = Now();
      if (n > 0 && !c->SendFrame(kPull, n, ids_[p].data(), n * 8)) return Failed(c);
      dense_at[p] = Now();
      if (dense && p != 0 && !c->SendFrame(kDensePull, k)) return Failed(c);
      return true;
    };
    auto read_pull = [&](int p) {
      Conn* c = ps_[p].get();
      uint32_t n = static_cast<uint32_t>(ids_[p].size());
      if (n > 0) {
        if (!Reply(c, kPullReply, n) || !c->RecvExact(vals_[p].data(), n * row_bytes)) {
          return Failed(c);
        }
        c->rows_pulled += n;
        Record(Timeline::Op::kPullRecv, p, pull_at[p]);
      }
      if (dense && p != 0) {
        dense_.resize(k);
        if (!Reply(c, kDenseReply, k) || !c->RecvExact(dense_.data(), k * sizeof(float))) {
          return Failed(c);
        }
        Record(Timeline::Op::kDenseRecv, p, dense_at[p]);
      }
      return true;
    };
    std::vector<int64_t> push_at(num_ps_);
    auto send_push = [&](int p) {  // apply gradients on the PS
      Conn* c = ps_[p].get();
      uint32_t n = static_cast<uint32_t>(ids_[p].size());
      push_at[p] = Now();
      if (n > 0 &&
          !c->SendFrame(kPush, n, ids_[p].data(), n * 8, grads_[p].data(), n * row_bytes)) {
        return Failed(c);
      }
      return true;
    };
    auto read_push = [&](int p) {
      Conn* c = ps_[p].get();
      uint32_t n = static_cast<uint32_t>(ids_[p].size());
      if (n == 0) return true;
      if (!Reply(c, kPushAck, n)) return Failed(c);
      c->rows_pushed += n;
      Record(Timeline::Op::kPushRecv, p, push_at[p]);
      return true;
    };
    // One PS after another, or (--parallel-rpcs) every request sent before any reply is read,
    // as TF's RecvTensor calls to the PS run concurrently. Each PS reads a whole request before
    // it answers, so neither order can deadlock.
    auto exchange = [&](auto& send, auto& read) {
      for (int p = 0; p < num_ps_; ++p) {
        if (!send(p) || (!o_.parallel_rpcs && !read(p))) return false;
      }
      for (int p = 0; p < num_ps_ && o_.parallel_rpcs; ++p) {
        if (!read(p)) return false;
      }
      return true;
    };
    if (!exchange(send_pull, read_pull)) return false;
    const int64_t tc = Now();
    Compute();
    if (o_.compute_sleep_us > 0) {
      std::this_thread::sleep_for(std::chrono::microseconds(o_.compute_sleep_us));
    }
    Record(Timeline::Op::kCompute, 0, tc);
    Record(Timeline::Op::kGradient, 0, Now());
    if (!exchange(send_push, read_push)) return false;
    Record(Timeline::Op::kTrain, 0, Now());
    return true;
  }

  // The step counter file: the count as 20 right-aligned digits and a newline at offset 0, so
  // every rewrite has the same length and a reader never sees a shorter, stale tail.
  void WriteStepCount() {
    if (step_fd_ < 0) return;
    const std::string text = fmt::format("{:>20}\n", steps_.load());
    (void)!pwrite(step_fd_, text.data(), text.size(), 0);
  }

  // Runs one compute phase on the intra-op threads and waits for all of them.
  void Compute() {
    std::unique_lock<std::mutex> lock(mu_);
    pending_ = o_.worker_threads;
    ++generation_;
    work_cv_.notify_all();
    done_cv_.wait(lock, [this] { return pending_ == 0; });
  }

  void IntraLoop(int t) {
    uint64_t seen = 0;
    const int n = o_.worker_threads;
    while (true) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        work_cv_.wait(lock, [&] { return quit_ || generation_ != seen; });
        if (quit_) return;
        seen = generation_;
      }
      // This thread's slice of every PS's rows: grad = -value (pull values toward 0).
      for (int p = 0; p < num_ps_; ++p) {
        size_t len = vals_[p].size(), lo = len * t / n, hi = len * (t + 1) / n;
        for (size_t i = lo; i < hi; ++i) grads_[p][i] = -vals_[p][i];
      }
      volatile float keep = SpinCpu(o_.compute_us / n, static_cast<float>(t));
      (void)keep;
      std::lock_guard<std::mutex> lock(mu_);
      if (--pending_ == 0) done_cv_.notify_one();
    }
  }

  const Options& o_;
  const int num_ps_;
  Timeline* const timeline_ = ProcessTimeline();  // --timeline, or nullptr
  std::mt19937_64 rng_;
  std::vector<std::vector<uint64_t>> ids_;        // per PS: local row ids of this step
  std::vector<std::vector<float>> vals_, grads_;  // per PS: n x dim
  std::vector<float> dense_;                      // the dense variable pulled in hot placement

  std::mutex conns_mu_;  // guards ps_ and hdfs_ growth against Shutdown() from Run()
  std::vector<std::unique_ptr<Conn>> ps_;
  std::unique_ptr<Conn> hdfs_;

  std::thread inter_, reader_;  // reader_: --prefetch's tf_data_iter thread
  std::vector<std::thread> intra_;
  std::mutex in_mu_;  // guards the prefetch hand-off below
  std::condition_variable in_cv_;
  int buffered_ = 0;  // batches read and not yet taken by a step
  bool in_quit_ = false, in_failed_ = false;
  std::string in_error_;  // why the reader stopped, when in_failed_
  std::mutex mu_;         // guards the compute hand-off below
  std::condition_variable work_cv_, done_cv_;
  uint64_t generation_ = 0;
  int pending_ = 0;
  bool quit_ = false;

  std::atomic<bool> stop_{false}, started_{false}, finished_{false};
  std::atomic<int64_t> steps_{0};
  std::vector<int64_t> step_us_;  // each step's wall time, us (inter-op thread, then Run())
  int step_fd_ = -1;              // --step-file, open for the whole run
  std::chrono::steady_clock::time_point start_, end_;  // written before started_/finished_
  std::string error_;                                  // written by the inter-op thread only
};

}  // namespace

int RunWorker(const Options& o, Summary* summary) {
  Worker w(o);
  return w.Run(summary);
}

}  // namespace psload
