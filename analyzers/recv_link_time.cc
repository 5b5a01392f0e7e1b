#include "analyzers/recv_link_time.h"

#include <fmt/format.h>

#include <algorithm>

#include "analyzers/analysis_input.h"
#include "analyzers/replay_nic_bytes.h"
#include "analyzers/task_stats.h"

namespace tfdiag {

NicDemand RecvLinkTimeDemand(const AnalysisInput& in, const ReplayModel& m, std::string* refused) {
  NicDemand d;
  std::string why;
  if (m.steps <= 0 || m.ps.empty()) {
    if (refused != nullptr) *refused = "the capture has no worker steps";
    return d;
  }
  PsReceiveIntervals recv = PsReceives(in, m);
  const TimeNs latency = ReceiveLatency(recv);
  if (latency < 0) {
    if (refused != nullptr) *refused = "the PS show no receive ops";
    return d;
  }
  d.known = true;
  double best_share = 0;
  double best_twice = 1;  // the busiest link's time with twice the latency taken off, its share
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
    std::vector<std::pair<TimeNs, TimeNs>> twice = iv;
    for (auto& [a, b] : twice) a = std::min(b, a + latency);
    const double ns = double(UnionLength(&iv));
    if (last > first && ns / double(last - first) > best_share) {
      best_share = ns / double(last - first);
      best_twice = double(UnionLength(&twice)) / ns;
    }
    AddPsDemand(-1, ns / double(m.steps), busy, &d);
  }
  if (!d.known) {
    why = "a PS with work shows no receive op";
  } else if (best_share < kMinRecvLinkTimeBusy) {
    why = fmt::format(
        "no PS receive link is busy {:.0f}% of its receives' span (the busiest {:.0f}%)",
        100 * kMinRecvLinkTimeBusy, 100 * best_share);
    d.known = false;
  } else if (best_share < kMinRecvLinkBusy && 1 - best_twice > kMaxRecvLinkLatencyShare) {
    // Under kMinRecvLinkBusy the latency taken off weighs: the reading stands only where taking
    // it off twice moves the busiest link's time by at most kMaxRecvLinkLatencyShare.
    why = fmt::format(
        "the busiest PS receive link is busy {:.0f}% of its receives' span (under {:.0f}%), and "
        "its time rests on the latency taken off: twice it leaves {:.0f}% (under {:.0f}%)",
        100 * best_share, 100 * kMinRecvLinkBusy, 100 * best_twice,
        100 * (1 - kMaxRecvLinkLatencyShare));
    d.known = false;
  }
  if (refused != nullptr) *refused = why;
  return d;
}

}  // namespace tfdiag
