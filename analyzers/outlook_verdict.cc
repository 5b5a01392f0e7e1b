#include "analyzers/outlook_verdict.h"

#include <fmt/format.h>

#include <algorithm>

#include "analyzers/analysis_input.h"

namespace tfdiag {

std::string OutlookVerdict(const Outlook& o) {
  const int n = o.captured_workers;
  const OutlookPoint* x4 = nullptr;
  for (const OutlookPoint& p : o.points) {
    if (p.workers == n * 4) x4 = &p;
  }
  const OutlookSaturation& sat = o.saturates_at;
  std::string v;
  if (sat.workers > 0) {
    v = fmt::format(
        "Adding workers pays up to about {} workers: {} saturates at {} (scaling efficiency "
        "under {:.0f}%)",
        std::max(n, sat.workers - 1), sat.resource, sat.workers, 100 * kOutlookMinEfficiency);
  } else {
    v = fmt::format(
        "Scales: efficiency stays at or above {:.0f}% up to {} workers{}",
        100 * kOutlookMinEfficiency, o.checked_up_to,
        x4 != nullptr ? fmt::format(" ({:.0f}% at {})", 100 * x4->efficiency, x4->workers) : "");
  }
  if (!o.fix_rule.empty()) {
    const OutlookSaturation& s = o.saturates_at_after_fix;
    v += s.workers > 0 ? fmt::format("; after Fix first ({}), {} saturates at {}", o.fix_rule,
                                     s.resource, s.workers)
                       : fmt::format("; after Fix first ({}), no saturation up to {}", o.fix_rule,
                                     o.checked_up_to);
  }
  return v;
}

std::string RecvLinksAssumption(const AnalysisInput& in, const ReplayModel& m,
                                const std::vector<PsLinkEvidence>& links, bool nic_estimated) {
  int busiest_link = -1;
  for (size_t p = 0; p < links.size(); ++p) {
    if (links[p].recv_share <= 0 || links[p].recv_load < 1) continue;
    if (busiest_link < 0 || links[p].recv_share > links[size_t(busiest_link)].recv_share) {
      busiest_link = int(p);
    }
  }
  if (busiest_link >= 0) {
    return fmt::format(
        "PS receive links: each PS whose receives carry at least a worker's sends is receiving "
        "its captured share ({} the most, {:.0f}%) times the throughput's growth, and stops "
        "carrying more at {}",
        in.capture.TaskLabelOf(m.ps[size_t(busiest_link)].task),
        100 * links[size_t(busiest_link)].recv_share,
        m.sync
            ? std::string("the convoy after the barrier (pulls and pushes k times as long at "
                          "k times the workers, their stretched part)")
            : fmt::format(
                  "{:.0f}% (where a convoy of workers leaves it on simulated jobs){}",
                  100 * kRecvLinkAsyncMax,
                  !nic_estimated && ConvoyStretch(links) >= kConvoyMinStretch
                      ? fmt::format(", or earlier as a convoy: the PS receives stretch alike "
                                    "(at least {:.0f}% of a receive shared), so the workers pull "
                                    "and push together, k times as long at k times the workers",
                                    100 * ConvoyStretch(links))
                      : std::string()));
  }
  return "";
}

}  // namespace tfdiag
