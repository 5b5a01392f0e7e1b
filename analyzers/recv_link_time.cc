#include "analyzers/recv_link_time.h"

#include <fmt/format.h>

#include <algorithm>

#include "analyzers/analysis_input.h"
#include "analyzers/capture_queries.h"
#include "analyzers/op_names.h"
#include "analyzers/replay_nic_bytes.h"
#include "analyzers/task_stats.h"

namespace tfdiag {

NicDemand RecvLinkTimeDemand(const AnalysisInput& in, const ReplayModel& m, std::string* refused) {
  NicDemand d;
  std::string why;
  const Capture& c = in.capture;
  if (m.steps <= 0 || m.ps.empty()) {
    if (refused != nullptr) *refused = "the capture has no worker steps";
    return d;
  }
  StringTest is_recv(c, IsRecvOpType);
  std::vector<std::vector<std::pair<TimeNs, TimeNs>>> recv(m.ps.size());
  TimeNs latency = -1;
  for (size_t p = 0; p < m.ps.size(); ++p) {
    const TaskStats* t = in.stats.Find(c.TaskLabelOf(m.ps[p].task));
    if (t == nullptr) continue;
    ForEachOpOfTask(c, *t, [&](const OpRow& op) {
      if (!is_recv(c.OpType(op))) return;
      recv[p].emplace_back(op.start, op.end());
      if (latency < 0 || op.end() - op.start < latency) latency = op.end() - op.start;
    });
  }
  if (latency < 0) {
    if (refused != nullptr) *refused = "the PS show no receive ops";
    return d;
  }
  d.known = true;
  double best_share = 0;
  for (size_t p = 0; p < m.ps.size(); ++p) {
    auto& iv = recv[p];
    const bool busy = m.ps[p].pull_ns + m.ps[p].push_ns > 0;
    if (iv.empty()) {
      AddPsDemand(busy ? -1 : 0, -1, busy, &d);
      continue;
    }
    TimeNs first = iv[0].first, last = iv[0].second;
    for (auto& [a, b] : iv) {
      first = std::min(first, a), last = std::max(last, b);
      a = std::min(b, a + latency);
    }
    const double ns = double(UnionLength(&iv));
    if (last > first) best_share = std::max(best_share, ns / double(last - first));
    AddPsDemand(-1, ns / double(m.steps), busy, &d);
  }
  if (!d.known) {
    why = "a PS with work shows no receive op";
  } else if (best_share < kMinRecvLinkBusy) {
    why = fmt::format(
        "no PS receive link is busy {:.0f}% of its receives' span (the busiest {:.0f}%)",
        100 * kMinRecvLinkBusy, 100 * best_share);
    d.known = false;
  }
  if (refused != nullptr) *refused = why;
  return d;
}

}  // namespace tfdiag
