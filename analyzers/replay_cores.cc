#include "analyzers/replay_cores.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "analyzers/capture_queries.h"
#include "analyzers/op_names.h"

namespace tfdiag {

namespace {

struct Op {
  TimeNs start, end;
  uint32_t node;
  double level = 1;   // mean ops running during it (itself included)
  bool wait = false;  // a receive the PS waits in, not work it serves (IsRecvOpType)
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

PsOpLoad FitPsCores(const Capture& c, const TaskStats& t) {
  PsOpLoad out;
  std::vector<Op> ops;
  StringTest is_recv(c, IsRecvOpType);
  ForEachOpOfTask(c, t, [&](const OpRow& op) {
    if (op.dur() > 0) {
      ops.push_back({op.start, op.end(), op.node, 1, t.recv_busy_ns > 0 && is_recv(c.OpType(op))});
    }
  });
  if (ops.empty()) return out;
  // Receives stay among the ops running at once and in the fit's groups (a PS's threads wait in
  // them: without them the fit found no slowdown on PS with 8 threads on 1 core, and gen2 dev
  // seeds 105 and 118 replayed 7.6x their measured step), but where the PS's demand leaves them
  // out (TaskStats::recv_busy_ns > 0, as the replay does), so do op_ns and work_ns: the ratio
  // that scales that demand is taken over the same ops (issue 44 review: with them, a
  // receive's long wait at a high level weighed in the ratio of ops it is no part of).
  Levels(&ops);
  for (const Op& o : ops) {
    if (!o.wait) out.op_ns += double(o.end - o.start);
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
    if (idx.size() >= 4 && hi >= lo + 1) groups.push_back(std::move(idx));
  }
  if (groups.empty()) return out;
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
    return out;
  }
  out.cores = best;
  out.work_ns = 0;
  for (const Op& o : ops) {
    if (o.wait) continue;
    out.work_ns += double(o.end - o.start) / std::max(1.0, o.level / double(best));
  }
  return out;
}

}  // namespace tfdiag
