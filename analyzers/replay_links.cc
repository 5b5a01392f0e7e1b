// The replay with the PS NICs as shared links (declared in analyzers/replay_plan.h).
#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>
#include <tuple>

#include "analyzers/replay_link.h"
#include "analyzers/replay_plan.h"
#include "core/median.h"

namespace tfdiag::replay_detail {

namespace {
double Median(std::vector<double> v) { return MedianInPlace(&v); }
}  // namespace

// Simulate with the PS NICs as links shared by the transfers crossing them
// (ReplayModel::link_bytes_per_ns > 0): each PS answers on its transmit link and takes the
// gradients on its receive link; with ReplayModel::worker_links, each worker's NIC, at the same
// rate, carries its answers in and its gradients out, at most that rate each way (WorkerNic); of
// each measured transfer only what its bytes' time on the links does not explain (latency) is held
// fixed. Otherwise as Simulate.
double SimulateLinks(const ReplayModel& m, const Fix& fix, int steps,
                     std::vector<double>* mean_step, LinkTimes* link_ns) {
  if (m.workers.empty()) return 0;
  const PsPlan ps = PlanPs(m, fix);
  const size_t nw = m.workers.size(), np = ps.pull.size();
  const bool sync = m.sync && !fix.to_async;
  const WorkerPlan wp = PlanWorkers(m, fix);
  const double rate = m.link_bytes_per_ns;
  // Held fixed: what the links do not explain of each worker's transfers (HeldBeyondLinks, with
  // the links' own time of the largest answer and gradient: ReplayModel::link_explained_*_ns).
  // The push's rest of its estimate is the answer's time on its link, which the push's own link
  // replays; held whole, the pull's contention copied to the push stayed at any PS count (gen2
  // report13 2811, sync, 199 workers: 0.55 s per step held when 40 PS leave each link a
  // twentieth of the load).
  // The exposed receive wait beyond the answer's transfer (WorkerPlan::recv) keeps only what the
  // links' time of the largest answer does not cover beyond the transfer: an answer queued behind
  // the others on its PS's NIC (HeldRecvBeyondLinks). ReplayLinkTimes's bare replay, which
  // explains every transfer by the links (link_explained_*_ns at their largest), measures the
  // links' times with the waits held as measured.
  const bool bare = m.link_explained_out_ns == std::numeric_limits<double>::max();
  std::vector<double> fixed_pull(nw), fixed_push(nw), fixed_recv(wp.recv);
  for (size_t w = 0; w < nw; ++w) {
    const HeldTransfers held = HeldBeyondLinks(wp.pull_xfer[w], wp.push_xfer[w],
                                               m.link_explained_out_ns, m.link_explained_in_ns);
    fixed_pull[w] = held.pull_ns, fixed_push[w] = held.push_ns;
    if (!bare) {
      fixed_recv[w] = HeldRecvBeyondLinks(wp.recv[w], wp.pull_xfer[w], m.link_explained_out_ns);
    }
  }
  // The sync burst's queue the links do not explain, scaled where a fix adding PS spreads it.
  ScaleBurstQueue(m, fix, &fixed_pull, &fixed_push);
  std::vector<std::vector<double>> free(np);
  for (size_t p = 0; p < np; ++p) free[p].assign(size_t(ps.threads[p]), 0);
  auto serve_one = [&](size_t p, double a, double demand) {  // a PS's threads, arrival order
    if (demand <= 0) return a;
    auto th = std::min_element(free[p].begin(), free[p].end());
    *th = std::max(a, *th) + demand;
    return *th;
  };
  // A push's applies at PS p: its locked ones one push at a time (PsPlan::locked).
  std::vector<double> lock_free(np, 0);
  auto serve_push = [&](size_t p, double a) {
    if (ps.push[p] <= 0) return a;
    auto th = std::min_element(free[p].begin(), free[p].end());
    *th = RunUnderLock(std::max(a, *th), ps.push[p], LockedOf(ps, p), &lock_free[p]);
    return *th;
  };
  std::vector<SharedLink> tx(np, SharedLink(rate)), rx(np, SharedLink(rate));
  // The workers' NICs (answers in, gradients out) and when each transfer is through its worker's
  // end at the soonest (indexed w * np + p).
  std::vector<WorkerNic> nic_in(nw, WorkerNic(rate)), nic_out(nw, WorkerNic(rate));
  std::vector<double> through_in(nw * np, 0), through_out(nw * np, 0);
  std::vector<double> grads, grads_through;  // one push's gradients, and when each is through
  std::vector<size_t> grad_ps;
  // The PS with the largest answers (gradients), whose link times `link_ns` reports.
  const size_t big_out = size_t(std::max_element(ps.out.begin(), ps.out.end()) - ps.out.begin());
  const size_t big_in = size_t(std::max_element(ps.in.begin(), ps.in.end()) - ps.in.begin());
  std::vector<double> out_since(nw, 0), in_since(nw, 0);
  double out_sum = 0, in_sum = 0, out_n = 0, in_n = 0;
  enum Kind : uint8_t { kPull, kAnswerReady, kLinkTx, kLinkRx, kAnswerIn, kPushOut, kGradIn };
  struct Event {
    double t;
    uint64_t seq;
    uint32_t who;  // a worker, or a PS for kLinkTx / kLinkRx
    uint32_t ps;
    Kind kind;
    uint64_t version;
    bool operator>(const Event& o) const { return std::tie(t, seq) > std::tie(o.t, o.seq); }
  };
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> q;
  uint64_t seq = 0;
  auto push = [&](double t, uint32_t who, Kind k, uint32_t p = 0, uint64_t version = 0) {
    q.push({t, seq++, who, p, k, version});
  };
  auto arm = [&](SharedLink& l, uint32_t p, Kind k) {  // the link's next completion event
    l.Touch();
    const double t = l.NextDone();
    if (std::isfinite(t)) push(t, p, k, p, l.version());
  };
  std::vector<double> pushed(nw, 0);
  std::vector<int> pending(nw, 0), pending_push(nw, 0);
  WorkerSteps ws(wp, steps, sync);
  auto begin = [&](size_t w, double t) { push(ws.Begin(w, t), uint32_t(w), kPull); };
  auto release = [&](double t) {
    double r = t;
    for (size_t p = 0; p < ps.once.size(); ++p) r = std::max(r, serve_one(p, t, ps.once[p]));
    return r;
  };
  auto finish = [&](size_t w, double applied) { ws.End(w, applied + wp.tail[w], release, begin); };
  auto pulled_all = [&](size_t w, double t) {
    const double c = std::max(0.0, wp.compute[w] + wp.sigma[w] * Jitter(w, uint64_t(ws.Done(w))));
    push(ws.Resume(w, t) + fixed_recv[w] + c, uint32_t(w), kPushOut);
  };
  for (size_t w = 0; w < nw; ++w) begin(w, 0);
  std::vector<uint64_t> ids;
  // Each worker step makes a bounded number of events (a pull, an answer, a gradient and a
  // link completion per PS, a few more); past 16x that, something loops: no replay.
  const double budget = 16.0 * double(steps + 1) * double(nw) * double(2 * np + 4);
  double events = 0;
  while (!q.empty()) {
    if (++events > budget) return 0;
    const Event e = q.top();
    q.pop();
    const size_t w = e.who;
    switch (e.kind) {
      case kPull:
        pending[w] = 0;
        for (size_t p = 0; p < np; ++p) {
          if (ps.pull[p] <= 0 && ps.out[p] <= 0) continue;
          ++pending[w];
          push(serve_one(p, e.t, ps.pull[p]), e.who, kAnswerReady, uint32_t(p));
        }
        if (pending[w] == 0) pulled_all(w, e.t);
        break;
      case kAnswerReady:
        if (ps.out[e.ps] > 0) {
          tx[e.ps].Add(e.t, ps.out[e.ps], w);
          if (m.worker_links) through_in[w * np + e.ps] = nic_in[w].Carry(e.t, ps.out[e.ps]);
          if (e.ps == big_out) out_since[w] = e.t;
          arm(tx[e.ps], e.ps, kLinkTx);
        } else {
          push(e.t + wp.pull_xfer[w], e.who, kAnswerIn);
        }
        break;
      case kLinkTx:
      case kLinkRx: {
        SharedLink& l = e.kind == kLinkTx ? tx[e.ps] : rx[e.ps];
        if (e.version != l.version()) break;  // stale: the link changed since
        ids.clear();
        l.PopDone(e.t, &ids);
        for (uint64_t id : ids) {
          const bool counted = ws.Done(id) >= ws.warmup();
          // Done once its worker's end has carried it too.
          const double done =
              std::max(e.t, (e.kind == kLinkTx ? through_in : through_out)[id * np + e.ps]);
          if (e.kind == kLinkTx && e.ps == big_out && counted) {
            out_sum += done - out_since[id], ++out_n;
          } else if (e.kind == kLinkRx && e.ps == big_in && counted) {
            in_sum += done - in_since[id], ++in_n;
          }
          if (e.kind == kLinkTx) {
            push(done + fixed_pull[id], uint32_t(id), kAnswerIn);
          } else {
            push(done + fixed_push[id], uint32_t(id), kGradIn, e.ps);
          }
        }
        arm(l, e.ps, e.kind);
        break;
      }
      case kAnswerIn:
        if (--pending[w] == 0) pulled_all(w, e.t);
        break;
      case kPushOut:
        pending_push[w] = 0;
        pushed[w] = e.t;
        if (m.worker_links) {  // every gradient leaves the worker's NIC at once
          grads.clear(), grad_ps.clear();
          for (size_t p = 0; p < np; ++p) {
            if (ps.in[p] > 0) grads.push_back(ps.in[p]), grad_ps.push_back(p);
          }
          nic_out[w].CarryTogether(e.t, grads, &grads_through);
          for (size_t k = 0; k < grad_ps.size(); ++k) {
            through_out[w * np + grad_ps[k]] = grads_through[k];
          }
        }
        for (size_t p = 0; p < np; ++p) {
          if (ps.push[p] <= 0 && ps.in[p] <= 0) continue;
          ++pending_push[w];
          if (ps.in[p] > 0) {
            rx[p].Add(e.t, ps.in[p], w);
            if (p == big_in) in_since[w] = e.t;
            arm(rx[p], uint32_t(p), kLinkRx);
          } else {
            push(e.t + wp.push_xfer[w], e.who, kGradIn, uint32_t(p));
          }
        }
        if (pending_push[w] == 0) finish(w, e.t);
        break;
      case kGradIn:
        pushed[w] = std::max(pushed[w], serve_push(e.ps, e.t));
        if (--pending_push[w] == 0) finish(w, pushed[w]);
        break;
    }
  }
  if (mean_step != nullptr) *mean_step = ws.MeanSteps();
  if (link_ns != nullptr) {
    link_ns->out_ns = out_n > 0 ? out_sum / out_n : 0;
    link_ns->in_ns = in_n > 0 ? in_sum / in_n : 0;
  }
  return Median(std::move(ws.lengths()));
}

}  // namespace tfdiag::replay_detail
