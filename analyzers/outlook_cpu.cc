#include "analyzers/outlook_cpu.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "analyzers/capture_queries.h"

namespace tfdiag {

bool IsReceiveOpType(std::string_view type) {
  return type == "RecvTensor" || type == "_Recv" || type == "_HostRecv";
}

namespace {

using Span = std::pair<TimeNs, TimeNs>;

// `v` (any order) as sorted disjoint spans.
std::vector<Span> Union(std::vector<Span> v) {
  std::sort(v.begin(), v.end());
  std::vector<Span> u;
  for (const Span& s : v) {
    if (!u.empty() && s.first <= u.back().second) {
      u.back().second = std::max(u.back().second, s.second);
    } else {
      u.push_back(s);
    }
  }
  return u;
}

double Length(const std::vector<Span>& u) {
  double x = 0;
  for (const Span& s : u) x += double(s.second - s.first);
  return x;
}

// The time two sorted disjoint span lists share.
double Shared(const std::vector<Span>& a, const std::vector<Span>& b) {
  double x = 0;
  for (size_t i = 0, j = 0; i < a.size() && j < b.size();) {
    x += double(
        std::max<TimeNs>(0, std::min(a[i].second, b[j].second) - std::max(a[i].first, b[j].first)));
    if (a[i].second < b[j].second) {
      ++i;
    } else {
      ++j;
    }
  }
  return x;
}

}  // namespace

PsCpuOps PsCpuWithoutReceives(const Capture& c, const TaskStats& t) {
  PsCpuOps r;
  StringTest is_recv(c, IsReceiveOpType);
  std::vector<std::pair<TimeNs, int>> edges;  // (time, +1 start / -1 end)
  std::vector<Span> recv, other;
  ForEachOpOfTask(c, t, [&](const OpRow& op) {
    if (op.dur() <= 0) return;
    if (is_recv(c.OpType(op)) || is_recv(c.Node(op).name)) {
      r.recv_ns += double(op.dur());
      recv.emplace_back(op.start, op.end());
      return;
    }
    r.other_ns += double(op.dur());
    other.emplace_back(op.start, op.end());
    edges.emplace_back(op.start, 1);
    edges.emplace_back(op.end(), -1);
  });
  if (!recv.empty() && !other.empty()) {
    const std::vector<Span> ru = Union(std::move(recv)), ou = Union(std::move(other));
    const TimeNs first = std::min(ru.front().first, ou.front().first);
    const TimeNs last = std::max(ru.back().second, ou.back().second);
    const double cover = last > first ? Length(ru) / double(last - first) : 0;
    const double inside = Shared(ru, ou) / std::max(1.0, Length(ou));
    r.receives_async = cover > 0 && inside >= 0.5 * cover;
  }
  // Ends before starts at one instant: an op ending when another starts does not overlap it.
  std::sort(edges.begin(), edges.end());
  std::vector<double> at_level(2, 0);
  int level = 0;
  for (size_t i = 0; i < edges.size(); ++i) {
    level += edges[i].second;
    if (i + 1 < edges.size() && level > 0) {
      if (size_t(level) >= at_level.size()) at_level.resize(size_t(level) + 1, 0);
      at_level[size_t(level)] += double(edges[i + 1].first - edges[i].first);
    }
  }
  double busy = 0;
  for (size_t k = 1; k < at_level.size(); ++k) busy += at_level[k];
  double at_least = 0;
  for (size_t k = at_level.size() - 1; k >= 1 && busy > 0; --k) {
    at_least += at_level[k];
    if (at_least >= 0.05 * busy) {
      r.threads = int(k);
      break;
    }
  }
  return r;
}

}  // namespace tfdiag
