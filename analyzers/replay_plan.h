#pragma once
// The replay's internals shared by analyzers/replay_run.cc (the FIFO replay), analyzers/replay.cc
// (the model) and analyzers/replay_links.cc (the replay with the PS NICs as shared links): what
// each PS and worker runs per step once a fix is applied, and the deterministic jitter. Not a
// public API (namespace replay_detail); the public one is analyzers/replay.h. Thread-safety: the
// functions are pure; a WorkerSteps belongs to the one replay that runs it.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "analyzers/replay.h"

namespace tfdiag::replay_detail {

// A standard normal draw for (worker, step), the same on every platform, clamped to +-3.
double Jitter(uint64_t worker, uint64_t step);

// Per PS after the fix: pull and push demand (ns per worker step) and threads; under
// SyncReplicasOptimizer, `push` is the accumulators' share and `once` the applies of the
// aggregated gradients, run once per step of the job after every worker's push (the chief's
// update, before the tokens release the workers).
struct PsPlan {
  std::vector<double> pull, push, once;
  // Of push: the applies one PS runs one at a time under their variable's lock (Ps::locked_ns),
  // moved with the rest of the applies by every fix; at most push. The replays hold one lock per
  // PS: locked work a fix moves onto a PS joins that PS's lock, so two locked variables on one PS
  // are taken one at a time together (their serialization at its most). Under
  // SyncReplicasOptimizer empty, or 0 (the aggregated applies run once per step; once
  // asynchronous, per push, their lock is not read: no capture of the job shows it).
  std::vector<double> locked;
  std::vector<int> threads;
  std::vector<double> out, in;  // bytes per worker step answered / received (Ps::out_bytes)
  // Ops per PS that one pull (and one push) is made of: the variables (parts) it hosts, each
  // read or gathered and applied on its own (one RecvTensor per tensor); at least 1. Only the
  // out-of-order replay reads it (analyzers/replay_order.h).
  std::vector<double> requests;
};

// PsPlan of `m` with `fix` applied: partitions, dropped PS, a new PS count, sync -> async.
PsPlan PlanPs(const ReplayModel& m, const Fix& fix);

// PS `p`'s locked applies per push in `s` (ns; 0 where none).
inline double LockedOf(const PsPlan& s, size_t p) { return p < s.locked.size() ? s.locked[p] : 0; }

// A push of `demand` (ns) reaching PS `p` at `start` on a thread of its own (the thread held
// from `start`), its `locked` part run under the PS's apply lock, free from `*lock_free` (ns, moved
// on): when the push is done. Without a locked part, start + demand.
inline double RunUnderLock(double start, double demand, double locked, double* lock_free) {
  if (locked <= 0) return start + demand;
  const double got = std::max(start, *lock_free);
  *lock_free = got + locked;
  return got + demand;
}

// Per worker, what the replay runs each step with `fix` applied (Simulate's inputs).
struct WorkerPlan {
  // tail: the idle time after the push the replayed applies do not explain (Worker::tail_ns),
  // less Fix::tail_cut.
  std::vector<double> input, compute, recv, producer, pull_xfer, push_xfer, sigma, tail;
  std::vector<bool> prefetch;
  // ReplayModel::Worker::pull_beside_input: the pull leaves at the step's start, beside the input.
  std::vector<bool> beside;
  // ReplayModel::compute_ratios and input_ratios (empty: the compute drawn around its median with
  // `sigma`, the input at its median).
  std::vector<double> compute_ratios, input_ratios;
  // Worker w's compute (ns) in its step `step`: its median times a drawn captured ratio where the
  // model pools them, else drawn around it with its spread (Jitter); never negative.
  double Compute(size_t w, uint64_t step) const;
  // Worker w's input (ns) in its step `step`: its median times a drawn captured ratio where the
  // model pools them, else its median.
  double Input(size_t w, uint64_t step) const;
};

// WorkerPlan of `m` with `fix` applied: workers at the median, prefetch, cut compute or receive.
// Under SyncReplicasOptimizer kept, with more than 10 workers, each worker's held receive wait
// (Worker::recv_ns) at most the workers' 90th percentile, in every replay, the capture's as is
// too (replay_plan.cc: gen2 report13 2811).
WorkerPlan PlanWorkers(const ReplayModel& m, const Fix& fix);

// Under SyncReplicasOptimizer kept, for a fix adding PS (Fix::ps_count over m's PS) or a
// partition alone (Fix::partition_only): the factor (ratio, (0, 1]) on the NIC queue in each
// worker's held transfers (PlanWorkers). After the barrier every worker pulls at once, so a
// worker's answer waits behind the others' on the PS's NIC: its measured transfer beyond the
// workers' shortest is that queue, at most BurstQueueCapNs. With every variable re-partitioned
// over the new count, the busiest PS's NIC carries the job's bytes over the new count (Ps::
// burst_out + burst_in) against its own now; with a partition, each hot PS's share of its bytes
// (Fix::partition_bytes, else its op time share) spread over every PS, the busiest NIC after
// against the busiest now. 1 where some busy PS's bytes are not sized (the queue is not known to
// be a NIC's), or with Fix::hold_burst_queue. gen2 report33 7011 (1 -> 16 PS, 77 workers; the
// held transfers of the workers' 90th percentile 37% of the step): +148% off its twin held, -16%
// scaled.
double HeldTransferScale(const ReplayModel& m, const Fix& fix);

// The longest NIC queue a worker's held transfer can hold in the sync burst (ns): the other
// workers' bytes at the busiest PS one way (Ps::burst_out for the answers, `pull`, burst_in for
// the gradients) on a NIC of kMinBurstNicBytesPerS. What a transfer holds beyond the shortest and
// this is not the NIC's (latency, the PS's own queue) and stays as measured (indep report37 45006:
// 13 workers, 1.4 kB a step each way at the busiest PS, transfers 0.1-2.3 ms; all of it scaled,
// 3 -> 7 PS went -2% -> -17% off its twin). 0 where the bytes are not sized.
double BurstQueueCapNs(const ReplayModel& m, bool pull);

// Scales the sync burst's queue in the workers' held transfers `pull` and `push` (ns, one per
// worker, m.workers' order) by HeldTransferScale(m, fix): each one's part beyond the shortest, at
// most BurstQueueCapNs. The FIFO replay applies it to the measured transfers (PlanWorkers, before
// a fix's receive cut); the PS links replay to what the links leave held of them (HeldBeyondLinks,
// replay_links.cc), since the links already replay the NICs' time at the new count.
void ScaleBurstQueue(const ReplayModel& m, const Fix& fix, std::vector<double>* pull,
                     std::vector<double>* push);

// The slowest NIC the burst's queue is taken on, bytes/s: 1 Gbit/s Ethernet (IEEE 802.3ab,
// 1000BASE-T), the slowest a datacenter node has.
inline constexpr double kMinBurstNicBytesPerS = 1e9 / 8;

// Under SyncReplicasOptimizer, the job's wait after the last push that the replayed applies do
// not explain (ns), held once at the token's release: the median of the workers' held tails
// (WorkerPlan::tail). Each worker's tail is its own measured wait less its replayed push and
// barrier waits, so each estimates the one wait the token's release holds every worker in; held
// per worker before the barrier, the step became the largest of them plus that worker's end
// (gen2 report8 1800: the replay as is +63% -> +20%; indep report11 19005 then predicted). 0
// without workers.
double SyncHold(const std::vector<double>& tails);

// Each worker's steps in a replay, as both replays keep them: when its step began, how many it
// finished, its prefetched input's next ready time, the step lengths after the warm-up (the
// first min(5, steps / 4) steps a worker runs) and SyncReplicasOptimizer's barrier.
class WorkerSteps {
 public:
  WorkerSteps(const WorkerPlan& wp, int steps, bool sync)
      : wp_(wp),
        steps_(steps),
        sync_(sync),
        warmup_(std::min(5, steps / 4)),
        start_(wp.input.size(), 0),
        input_end_(wp.input.size(), 0),
        ready_(wp.producer),
        sum_(wp.input.size(), 0),
        done_(wp.input.size(), 0) {}

  // Worker w's step begins at `t` (ns): returns when its pull leaves, after its input (a
  // prefetched batch is taken when ready, and the producer starts the next), or at `t` where
  // the pull runs beside the input (WorkerPlan::beside).
  double Begin(size_t w, double t) {
    start_[w] = t;
    double pulled = t + wp_.Input(w, uint64_t(done_[w]));
    if (wp_.prefetch[w]) {
      pulled = std::max(t, ready_[w]);
      ready_[w] = pulled + wp_.producer[w];
    }
    input_end_[w] = pulled;
    return wp_.beside[w] ? t : pulled;
  }

  // When worker w's compute can start once its pull is answered at `answered` (ns): then, or
  // when its input ended if later (a pull beside the input).
  double Resume(size_t w, double answered) const { return std::max(answered, input_end_[w]); }
  // The pull wait worker w's compute sees (ns): from its input's end to Resume(w, answered).
  double PullWait(size_t w, double answered) const { return Resume(w, answered) - input_end_[w]; }

  // The steps worker w has finished (its current step's 0-based index).
  int Done(size_t w) const { return done_[w]; }
  int warmup() const { return warmup_; }

  // Worker w's step ended at `end` (ns). Asynchronous: its next step begins then
  // (`begin(w, end)`). Under sync, once every worker's step k has ended, the step ends for all at
  // `release(latest end)` (the aggregated applies) and each begins its next (`begin(v, t)`).
  // Workers that ran all their steps begin no more.
  template <typename Release, typename BeginFn>
  void End(size_t w, double end, Release release, BeginFn begin) {
    const int k = done_[w]++;
    if (!sync_) {
      if (k >= warmup_) lengths_.push_back(end - start_[w]), sum_[w] += end - start_[w];
      if (done_[w] < steps_) begin(w, end);
      return;
    }
    if (barrier_end_.size() <= size_t(k)) {
      barrier_end_.resize(k + 1, 0), barrier_count_.resize(k + 1);
    }
    barrier_end_[k] = std::max(barrier_end_[k], end);
    if (++barrier_count_[k] < int(done_.size())) return;
    const double t = release(barrier_end_[k]);
    for (size_t v = 0; v < done_.size(); ++v) {  // the slowest worker releases every worker
      if (k >= warmup_) lengths_.push_back(t - start_[v]), sum_[v] += t - start_[v];
      if (done_[v] < steps_) begin(v, t);
    }
  }

  // The step lengths after the warm-up (ns), in the order they ended.
  std::vector<double>& lengths() { return lengths_; }
  // Each worker's mean step after the warm-up (ns), 0 when it ran none.
  std::vector<double> MeanSteps() const {
    std::vector<double> mean;
    for (double x : sum_) mean.push_back(steps_ > warmup_ ? x / double(steps_ - warmup_) : 0);
    return mean;
  }

 private:
  const WorkerPlan& wp_;
  const int steps_;
  const bool sync_;
  const int warmup_;
  std::vector<double> start_, input_end_, ready_, sum_, barrier_end_, lengths_;
  std::vector<int> done_, barrier_count_;
};

// The replay with the PS NICs as links (ReplayModel::link_bytes_per_ns > 0): the median worker
// step (ns) of `steps` replayed steps per worker; `mean_step`, when given, each worker's mean
// step after the warm-up. 0 when there is no worker or the replay does not settle.
// `link_ns`, when given, gets the mean time (ns) an answer of the PS with the largest answers
// spent on its link (out_ns) and a gradient of the PS with the largest gradients on its (in_ns),
// over the steps after the warm-up.
double SimulateLinks(const ReplayModel& m, const Fix& fix, int steps,
                     std::vector<double>* mean_step, LinkTimes* link_ns = nullptr);

}  // namespace tfdiag::replay_detail
