#include "analyzers/replay_order.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <queue>
#include <tuple>

#include "analyzers/replay_plan.h"
#include "core/median.h"

namespace tfdiag::replay_detail {

namespace {

// splitmix64: the same draws on every platform.
struct Draw {
  uint64_t s;
  uint64_t Next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
};

double Median(std::vector<double> v) { return v.empty() ? 0 : MedianInPlace(&v); }

struct Request {
  size_t worker;
  int phase;  // 0 a pull, 1 a push
  double demand;
  double locked = 0;  // of demand: applies under the PS's apply lock (PsPlan::locked)
};

}  // namespace

double SimulateAnyOrder(const ReplayModel& m, const Fix& fix, int steps,
                        std::vector<double>* pull_waits, std::vector<double>* push_waits,
                        std::vector<double>* mean_step, bool in_order,
                        std::vector<double>* lengths) {
  if (m.workers.empty() || (m.sync && !fix.to_async)) return 0;
  const PsPlan ps = PlanPs(m, fix);
  const WorkerPlan wp = PlanWorkers(m, fix);
  const size_t nw = m.workers.size(), np = ps.pull.size();
  std::vector<int> free(np);
  for (size_t p = 0; p < np; ++p) free[p] = std::max(1, ps.threads[p]);
  std::vector<std::deque<Request>> waiting(np);  // in order: popped at the front, O(1)
  Draw draw{0x7466646961670001ULL};
  // Events: (time, sequence, kind, worker, ps, phase); kind 0 a pull leaves the worker, 1 a PS
  // op ends, 2 a push reaches the PS.
  using Event = std::tuple<double, uint64_t, int, size_t, size_t, int>;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> q;
  uint64_t seq = 0;
  std::vector<int> pending(nw, 0);
  std::vector<double> asked(nw, 0), pulled_for(nw, 0);
  std::vector<std::vector<double>> pw(nw), sw(nw);
  WorkerSteps ws(wp, steps, false);
  auto begin = [&](size_t w, double t) { q.push({ws.Begin(w, t), seq++, 0, w, 0, 0}); };
  std::vector<double> lock_free(np, 0);
  auto start = [&](double t, size_t p, const Request& r) {
    --free[p];
    q.push({RunUnderLock(t, r.demand, r.locked, &lock_free[p]), seq++, 1, r.worker, p, r.phase});
  };
  // Worker w's requests of `phase` reach every PS with demand at `t`; true when none has any.
  auto ask = [&](double t, size_t w, int phase) {
    const std::vector<double>& d = phase == 0 ? ps.pull : ps.push;
    asked[w] = t;
    pending[w] = 0;
    for (size_t p = 0; p < np; ++p) {
      if (d[p] <= 0) continue;
      const int k = int(std::clamp(std::round(ps.requests[p]), 1.0, kMaxRequestsPerPs));
      for (int i = 0; i < k; ++i) {
        ++pending[w];
        const Request r{w, phase, d[p] / k, phase == 1 ? LockedOf(ps, p) / k : 0};
        if (free[p] > 0) {
          start(t, p, r);
        } else {
          waiting[p].push_back(r);
        }
      }
    }
    return pending[w] == 0;
  };
  // Worker w's requests of `phase` are all served at `t`.
  std::function<void(double, size_t, int)> served = [&](double t, size_t w, int phase) {
    if (phase == 0) {
      const double answered = t + wp.pull_xfer[w];
      pulled_for[w] = ws.PullWait(w, answered);
      const double c = wp.Compute(w, uint64_t(ws.Done(w)));
      q.push({ws.Resume(w, answered) + wp.recv[w] + c + wp.push_xfer[w], seq++, 2, w, 0, 1});
      return;
    }
    if (ws.Done(w) >= ws.warmup()) {
      pw[w].push_back(pulled_for[w]);
      sw[w].push_back(t - asked[w] + wp.push_xfer[w]);
    }
    ws.End(
        w, t + wp.tail[w], [](double x) { return x; }, begin);
  };
  for (size_t w = 0; w < nw; ++w) begin(w, 0);
  while (!q.empty()) {
    const auto [t, s, kind, w, p, phase] = q.top();
    q.pop();
    if (kind != 1) {
      if (ask(t, w, phase)) served(t, w, phase);
      continue;
    }
    ++free[p];
    std::deque<Request>& wq = waiting[p];
    if (!wq.empty()) {
      const size_t i = in_order ? 0 : size_t(draw.Next() % wq.size());
      const Request r = wq[i];
      if (in_order) {
        wq.pop_front();
      } else {
        wq[i] = wq.back();
        wq.pop_back();
      }
      start(t, p, r);
    }
    if (--pending[w] == 0) served(t, w, phase);
  }
  if (pull_waits != nullptr) {
    for (std::vector<double>& v : pw) pull_waits->push_back(Median(std::move(v)));
  }
  if (push_waits != nullptr) {
    for (std::vector<double>& v : sw) push_waits->push_back(Median(std::move(v)));
  }
  if (mean_step != nullptr) *mean_step = ws.MeanSteps();
  if (lengths != nullptr) *lengths = ws.lengths();
  return Median(std::move(ws.lengths()));
}

namespace {

// (q3 - q1) / median of the replay of `m` as is (FIFO where `in_order`); 0 without steps.
double ReplayedSpread(const ReplayModel& m, bool in_order) {
  std::vector<double> l;
  SimulateAnyOrder(m, Fix{}, ReplaySteps(m), nullptr, nullptr, nullptr, in_order, &l);
  if (l.size() < 4) return 0;
  std::sort(l.begin(), l.end());
  const double med = l[l.size() / 2];
  return med > 0 ? (l[l.size() * 3 / 4] - l[l.size() / 4]) / med : 0;
}

}  // namespace

bool ServedOutOfOrder(const ReplayModel& fifo, const ReplayModel& any, bool* alike) {
  if (alike != nullptr) *alike = false;
  if (fifo.sync || fifo.workers.empty() || fifo.measured_step_ns <= 0) return false;
  const double seen = (fifo.step_q3_ns - fifo.step_q1_ns) / fifo.measured_step_ns;
  const double in_order = ReplayedSpread(fifo, true), out_of_order = ReplayedSpread(any, false);
  if (out_of_order - in_order < kMinOrderSpreadGap) {
    if (alike != nullptr) *alike = true;
    return false;
  }
  if (std::abs(out_of_order - seen) >= std::abs(in_order - seen)) return false;
  // The steps' spread says out of order; the model so served must also reproduce the job at
  // least as well: its miss of the median step plus the wait it leaves unexplained.
  const auto misfit = [](const ReplayModel& m) {
    return std::abs(ReplayBaseline(m).miss) + UnexplainedWaitShare(m);
  };
  const double fifo_misfit = misfit(fifo), any_misfit = misfit(any);
  return any_misfit < fifo_misfit;
}

}  // namespace tfdiag::replay_detail
