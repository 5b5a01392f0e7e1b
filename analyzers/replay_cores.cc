#include "analyzers/replay_cores.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <unordered_map>

#include "analyzers/apply_locks.h"
#include "analyzers/capture_queries.h"
#include "analyzers/op_names.h"
#include "analyzers/replay_concurrency.h"
#include "core/median.h"

namespace tfdiag {

namespace {

// A node whose ops all last at most this long is at the timeline's resolution (TF1 timelines and
// trace JSON in whole microseconds): it cannot show a slowdown, so it does not vote in the fit.
// gen2's capture writes its markers (_SOURCE NoOps, VariableV2) at 1 us: on gen2 report9 2021 (8
// threads on 1 core) they held the fit's gain under 0.5 and the cores went unseen.
constexpr TimeNs kTimelineResolutionNs = 2000;

struct Op {
  TimeNs start, end;
  uint32_t node;
  double level = 1;  // mean ops running during it (itself included)
};

// Mean concurrency over each op's life: a sweep of +1/-1 points with the running integral of
// the count, read back per op by binary search.
void Levels(std::vector<Op>* ops) {
  std::vector<std::pair<TimeNs, int>> pts;
  pts.reserve(ops->size() * 2);
  for (const Op& o : *ops) pts.push_back({o.start, +1}), pts.push_back({o.end, -1});
  std::sort(pts.begin(), pts.end());
  std::vector<TimeNs> at;
  std::vector<double> integral;
  std::vector<int> count;
  int n = 0;
  double area = 0;
  for (size_t i = 0; i < pts.size(); ++i) {
    if (!at.empty()) area += double(n) * double(pts[i].first - at.back());
    n += pts[i].second;
    if (!at.empty() && at.back() == pts[i].first) {
      integral.back() = area, count.back() = n;
    } else {
      at.push_back(pts[i].first), integral.push_back(area), count.push_back(n);
    }
  }
  auto area_at = [&](TimeNs t) {
    const size_t j = size_t(std::upper_bound(at.begin(), at.end(), t) - at.begin());
    if (j == 0) return 0.0;
    return integral[j - 1] + double(count[j - 1]) * double(t - at[j - 1]);
  };
  for (Op& o : *ops) {
    const double d = double(o.end - o.start);
    o.level = d > 0 ? std::max(1.0, (area_at(o.end) - area_at(o.start)) / d) : 1.0;
  }
}

}  // namespace

PsOpLoad FitPsCores(const Capture& c, const TaskStats& t, int job_cores, bool cut_lock_waits) {
  PsOpLoad out;
  std::vector<Op> ops;
  StringTest is_recv(c, IsRecvOpType);
  // Receives that are waits on the PS's link (replay_concurrency.h ReceivesAreWaits, as the
  // replay's demand leaves them out) hold no thread and no core: left out of the ops running at
  // once, of the fit and of op_ns and work_ns. Before, they stayed among the ops running at once
  // (without them the 1 us markers, which voted then, hid the core of gen2 dev seeds 105 and
  // 118, 8 threads on 1 core, replayed 7.6x their step; now fitted without them, as is +7% and
  // +9%), which put gen2 report9 2021's PS (8 threads on 1 core) under the fit's bar. Receives
  // that held its threads are ops like the others.
  const bool recv_waits = replay_detail::ReceivesAreWaits(c, t);
  // An apply that waited on its variable's lock ran from the end of the apply before it: the
  // wait held a thread but no core (analyzers/apply_locks.h).
  const ApplyLockWaits locks = cut_lock_waits ? ReadApplyLockWaits(c, t) : ApplyLockWaits{};
  out.lock_wait_ns = double(locks.wait_ns), out.locked_ns = double(locks.locked_ns);
  ForEachOpRowOfTask(c, t, [&](const OpRow& op, uint32_t row) {
    const TimeNs wait = LockWaitOf(locks, row);
    if (op.dur() > wait && !(recv_waits && is_recv(c.OpType(op)))) {
      ops.push_back({op.start + wait, op.end(), op.node, 1});
    }
  });
  if (ops.empty()) return out;
  Levels(&ops);
  for (const Op& o : ops) {
    out.op_ns += double(o.end - o.start);
    out.max_level = std::max(out.max_level, o.level);
  }
  out.work_ns = out.op_ns;
  // Groups: ops of one node; only nodes seen both near alone (level < 1.5) and busier tell.
  std::unordered_map<uint32_t, std::vector<size_t>> by_node;
  for (size_t i = 0; i < ops.size(); ++i) by_node[ops[i].node].push_back(i);
  std::vector<std::vector<size_t>> groups;
  for (auto& [node, idx] : by_node) {
    double lo = 1e300, hi = 0;
    for (size_t i : idx) lo = std::min(lo, ops[i].level), hi = std::max(hi, ops[i].level);
    TimeNs longest = 0;
    for (size_t i : idx) longest = std::max(longest, ops[i].end - ops[i].start);
    if (longest <= kTimelineResolutionNs) continue;
    if (idx.size() >= 4 && hi >= lo + 1) groups.push_back(std::move(idx));
  }
  // The work at `k` cores: each op's time over its slowdown there.
  auto work_at = [&](int k) {
    double work = 0;
    for (const Op& o : ops) work += double(o.end - o.start) / std::max(1.0, o.level / double(k));
    return work;
  };
  // Where this PS's own ops do not tell its cores, the job's (one PS spec for all PS) turn its
  // ops' time back into their work.
  if (groups.empty()) {
    if (job_cores > 0) out.work_ns = work_at(job_cores);
    return out;
  }
  // Residual variance of log d around each node's mean of log(d / max(1, n / c)).
  auto error = [&](double cores) {
    double e = 0;
    for (const std::vector<size_t>& g : groups) {
      double mean = 0;
      for (size_t i : g) {
        mean += std::log(double(ops[i].end - ops[i].start)) -
                std::log(std::max(1.0, ops[i].level / cores));
      }
      mean /= double(g.size());
      for (size_t i : g) {
        const double r = std::log(double(ops[i].end - ops[i].start)) -
                         std::log(std::max(1.0, ops[i].level / cores)) - mean;
        e += r * r;
      }
    }
    return e;
  };
  const double none = error(1e9);
  int best = 0;
  double best_e = none;
  const int top = std::max(1, int(std::ceil(out.max_level)));
  for (int k = 1; k <= top && k <= 256; ++k) {
    const double e = error(double(k));
    if (e < best_e) best = k, best_e = e;
  }
  out.fit_gain = none > 0 ? 1 - best_e / none : 0;
  // A slowdown that explains under half the spread is noise, not cores.
  if (best == 0 || out.fit_gain < 0.5) {
    out.cores = 0;
    // What the durations still tell: the fewest cores whose slowdown they do not rule out.
    for (int k = 1; k <= top && k <= 256; ++k) {
      if (error(double(k)) <= kMaxUnslowedError * none) {
        out.min_cores = k;
        break;
      }
    }
    if (job_cores > 0) out.work_ns = work_at(job_cores);
    return out;
  }
  out.cores = best;
  out.work_ns = work_at(best);
  return out;
}

void ApplyJobCores(const AnalysisInput& in, const std::vector<int>& seen_threads,
                   const std::vector<int>& seen_cores, ReplayModel* mp,
                   std::map<uint32_t, double>* work_share, const std::vector<int>& seen_min_cores) {
  ReplayModel& m = *mp;
  const Capture& c = in.capture;
  // Threads and cores are the job's configuration (one PS spec for all PS): every PS, idle and
  // lightly loaded ones included, serves on the most threads any PS was seen using, at most the
  // cores the slowdown fit found (the median of the PS where it could tell), so a PS that only
  // needed one thread in the capture gets its real capacity after a fix moves work to it.
  if (!seen_threads.empty()) {
    m.ps_threads = *std::max_element(seen_threads.begin(), seen_threads.end());
    std::vector<double> cores(seen_cores.begin(), seen_cores.end());
    m.ps_cores = cores.empty() ? 0 : static_cast<int>(MedianInPlace(&cores));
    if (m.ps_cores <= 0 && !seen_min_cores.empty()) {
      std::vector<double> least(seen_min_cores.begin(), seen_min_cores.end());
      m.ps_min_cores = static_cast<int>(MedianInPlace(&least));
    }
    const int servers = m.ps_cores > 0 ? std::min(m.ps_threads, m.ps_cores) : m.ps_threads;
    for (ReplayModel::Ps& p : m.ps) p.threads = std::max(1, servers);
  }
  // A PS whose own ops do not tell its cores (a hot PS busy throughout, never seen near alone)
  // serves on the job's cores too, so its ops' time is turned back into work at those cores:
  // served on them with the time its ops took beside each other, it replayed 2x slow (gen3
  // report8 2128: a hot PS of 8 threads on 2 cores, the replay as is +146% once the other PS
  // showed their cores, now +2%). Applies held by a variable's lock: their waits cut where the
  // model reads the lock (ReplayModel::apply_locks), the locked work scaled with the rest.
  for (ReplayModel::Ps& p : m.ps) {
    const TaskStats* t = in.stats.Find(c.TaskLabelOf(p.task));
    if (m.ps_cores <= 0 || p.cores > 0 || t == nullptr || t->op_time_ns <= 0) continue;
    const PsOpLoad load = FitPsCores(c, *t, m.ps_cores, m.apply_locks);
    const double scale = load.op_ns > 0 ? load.work_ns / load.op_ns : 1;
    (*work_share)[p.task] = scale;
    p.pull_ns *= scale, p.push_ns *= scale, p.sync_ns *= scale, p.locked_ns *= scale;
    for (double& v : p.var_ns) v *= scale;
  }
}

}  // namespace tfdiag
