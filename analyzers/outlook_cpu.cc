#include "analyzers/outlook_cpu.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "analyzers/capture_queries.h"

namespace tfdiag {

bool IsReceiveOpType(std::string_view type) {
  return type == "RecvTensor" || type == "_Recv" || type == "_HostRecv";
}

PsCpuOps PsCpuWithoutReceives(const Capture& c, const TaskStats& t) {
  PsCpuOps r;
  StringTest is_recv(c, IsReceiveOpType);
  std::vector<std::pair<TimeNs, int>> edges;  // (time, +1 start / -1 end)
  ForEachOpOfTask(c, t, [&](const OpRow& op) {
    if (op.dur() <= 0) return;
    if (is_recv(c.OpType(op)) || is_recv(c.Node(op).name)) {
      r.recv_ns += double(op.dur());
      return;
    }
    r.other_ns += double(op.dur());
    edges.emplace_back(op.start, 1);
    edges.emplace_back(op.end(), -1);
  });
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
