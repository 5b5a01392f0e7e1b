#pragma once
// A network link shared equally by the transfers crossing it at once (processor sharing, the
// fair share TCP flows converge to on a bottleneck; Kleinrock, "Queueing Systems, Vol. 2",
// 1976, sec. 4.4), for the replay's PS NICs (ReplayModel::link_bytes_per_ns). Virtual time: v
// grows at rate / n while n transfers are in flight; a transfer added at v0 with b bytes ends
// when v reaches v0 + b, so each step costs O(log n). Times in ns, sizes in bytes.
// Thread-safety: none (one replay owns it).
#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <queue>
#include <utility>
#include <vector>

namespace tfdiag {

class SharedLink {
 public:
  // `bytes_per_ns` > 0: the link's bandwidth.
  explicit SharedLink(double bytes_per_ns) : rate_(bytes_per_ns) {}

  // A transfer of `bytes` (>= 0) starting at `t` (ns; never before an earlier call's time),
  // reported as `id` when done.
  void Add(double t, double bytes, uint64_t id) {
    Advance(t);
    tags_.push({v_ + std::max(0.0, bytes), id});
  }

  // When the next transfer ends (ns); +inf when none is in flight.
  double NextDone() const {
    if (tags_.empty()) return std::numeric_limits<double>::infinity();
    return last_ + std::max(0.0, tags_.top().first - v_) * double(tags_.size()) / rate_;
  }

  // Advances to `t` (NextDone()'s time) and appends the ids of the transfers done by then.
  // At least one transfer is done whenever `t` >= NextDone(): where `t` is too close to the
  // last time for the clock to move in floating point, the first to end is taken as done.
  void PopDone(double t, std::vector<uint64_t>* done) {
    Advance(t);
    const size_t before = done->size();
    while (!tags_.empty() && tags_.top().first <= v_ + 1e-9 * std::max(1.0, v_)) {
      done->push_back(tags_.top().second);
      tags_.pop();
    }
    if (done->size() == before && !tags_.empty() && t >= NextDone()) {
      v_ = std::max(v_, tags_.top().first);
      done->push_back(tags_.top().second);
      tags_.pop();
    }
  }

  // A counter that changes whenever the next completion may have moved (for stale events).
  uint64_t version() const { return version_; }
  void Touch() { ++version_; }

 private:
  void Advance(double t) {
    if (!tags_.empty() && t > last_) v_ += (t - last_) * rate_ / double(tags_.size());
    if (t > last_) last_ = t;
  }

  using Tag = std::pair<double, uint64_t>;  // (finish in virtual bytes, id)
  double rate_;
  double v_ = 0, last_ = 0;
  uint64_t version_ = 0;
  std::priority_queue<Tag, std::vector<Tag>, std::greater<Tag>> tags_;
};

// One direction of a worker's NIC, which every PS's transfer to (or from) that worker crosses, as a
// bound: it carries at most `bytes_per_ns`. Answers reach it one by one, as their PS has them
// ready, and are carried in that order (Carry): each is through no sooner than the bytes before
// it and its own take at that rate. A worker's gradients all leave at once and share it equally
// (CarryTogether, processor sharing). The worker's end slows a transfer only where its NIC, not
// the PS's, is the busier end: the completion it bounds is the later of the two (the PS's
// SharedLink and this), which keeps the time to carry all of a worker's transfers exact when its
// NIC is the bottleneck (a work-conserving link's busy period does not depend on its order) and
// takes no share of the PS's link from a transfer the PS end limits (under max-min fairness a
// flow limited at one link leaves the rest of its share at the other to the other flows:
// D. Bertsekas, R. Gallager, "Data Networks", 2nd ed., 1992, sec. 6.5.2).
// Times in ns, sizes in bytes. Thread-safety: none.
class WorkerNic {
 public:
  explicit WorkerNic(double bytes_per_ns) : rate_(bytes_per_ns) {}
  // A transfer of `bytes` (>= 0) reaching the NIC at `t` (ns): when it is through, at the soonest.
  double Carry(double t, double bytes) {
    busy_until_ = std::max(busy_until_, t) + std::max(0.0, bytes) / rate_;
    return busy_until_;
  }

  // Transfers of `bytes[i]` (>= 0) all reaching the NIC at `t` (ns), sharing it equally while in
  // flight: `(*through)[i]` when transfer i is through, the bytes already on the NIC first, then
  // t' + sum_j min(b_j, b_i) / rate (order-independent). O(n log n).
  void CarryTogether(double t, const std::vector<double>& bytes, std::vector<double>* through) {
    const size_t n = bytes.size();
    through->assign(n, 0);
    std::vector<size_t> by_size(n);
    for (size_t i = 0; i < n; ++i) by_size[i] = i;
    std::sort(by_size.begin(), by_size.end(),
              [&](size_t a, size_t b) { return bytes[a] < bytes[b]; });
    const double start = std::max(busy_until_, t);
    double smaller = 0;  // bytes of the transfers smaller than the k-th, all carried by then
    for (size_t k = 0; k < n; ++k) {
      const double b = std::max(0.0, bytes[by_size[k]]);
      (*through)[by_size[k]] = start + (smaller + double(n - k) * b) / rate_;
      smaller += b;
    }
    busy_until_ = start + smaller / rate_;
  }

 private:
  double rate_;
  double busy_until_ = 0;
};

// What the PS links leave held fixed of one worker's transfers (ns): its measured answer
// transfer `pull_xfer_ns` less what the links explain of the largest answer's time
// (`explained_out_ns`, ReplayModel::link_explained_out_ns), and its push estimate `push_xfer_ns`
// less the links' share of the largest gradient's (`explained_in_ns`), at most what the answer
// holds: a push's transfer is not measured (Worker::push_xfer_ns is the answer's, bounded by the
// idle time), so beyond its own link it holds only what the answer's does (latency, the worker's
// side). Both >= 0.
struct HeldTransfers {
  double pull_ns = 0, push_ns = 0;
};
inline HeldTransfers HeldBeyondLinks(double pull_xfer_ns, double push_xfer_ns,
                                     double explained_out_ns, double explained_in_ns) {
  const double pull = std::max(0.0, pull_xfer_ns - explained_out_ns);
  return {pull, std::clamp(push_xfer_ns - explained_in_ns, 0.0, pull)};
}

// What the PS links leave held fixed of one worker's exposed receive wait beyond its answer's
// transfer (`recv_ns`, Worker::recv_ns; ns): the links' time of the largest answer
// (`explained_out_ns`) beyond the measured transfer `pull_xfer_ns` is wait the links replay, an
// answer queued behind the others on its PS's NIC before its own transfer began (gen2 report29
// 6207, sync, 9 workers on one PS of 1 Gb/s: one worker's last answer took 55 ms after 115 ms
// behind the others', whose took 177 ms; 1 -> 5 PS held that wait and was predicted at 211 ms
// against its twin's 123 ms). >= 0.
inline double HeldRecvBeyondLinks(double recv_ns, double pull_xfer_ns, double explained_out_ns) {
  return std::max(0.0, recv_ns - std::max(0.0, explained_out_ns - pull_xfer_ns));
}

}  // namespace tfdiag
