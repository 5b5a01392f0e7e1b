#include "analyzers/outlook_choose_links.h"

#include <fmt/format.h>

#include <cmath>

#include "analyzers/recv_link_time.h"
#include "analyzers/replay_nic_bytes.h"

namespace tfdiag {

OutlookLinks ChooseOutlookLinks(const AnalysisInput& in, const ReplayModel& m, bool plain_fits) {
  OutlookLinks r;
  if (plain_fits) return r;
  ChosenLinks c = ChooseLinks(in, m);
  if (c.linked.link_bytes_per_ns <= 0 || c.nic.bytes_per_s <= 0) {
    if (!c.recv_refused.empty()) r.refused = fmt::format(" (no PS links: {})", c.recv_refused);
    return r;
  }
  if (c.base.replay_ns <= 0 || std::abs(c.base.miss) > kMaxBaselineMiss) {
    r.refused = fmt::format(" (over the PS links, {:+.0f}%)", 100 * c.base.miss);
    return r;
  }
  r.replayed = true;
  r.in_time = c.in_time;
  r.nic = c.nic;
  r.base = c.base;
  // The demand the links were set from, as ChooseLinks read it.
  if (c.in_time) {
    r.demand = RecvLinkTimeDemand(in, m, nullptr);
  } else if (c.nic.workers == 0) {
    r.demand = PsNicBytesBesideControl(in, m);
  } else {
    r.demand = PsNicBytes(in, m);
  }
  r.linked = std::move(c.linked);
  return r;
}

}  // namespace tfdiag
