#include "analyzers/ps_links_convoy.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/median.h"

namespace tfdiag {

double LinkConvoy::SavingAt(int n) const {
  if (n <= 0 || busiest_ns <= 0) return 0;
  // The links' part of the step is at most all of it: above 1, the two directions overlap.
  return std::max(0.0, std::min(1.0, link_share) * (1 - sum_ns / double(n) / busiest_ns));
}

LinkConvoy ReadLinkConvoy(const ReplayModel& m, const ReplayModel& l, const Baseline& base) {
  LinkConvoy r;
  if (m.workers.empty() || m.measured_step_ns <= 0 || l.link_bytes_per_ns <= 0) {
    r.why_not = "no PS links";
    return r;
  }
  if (m.sync) {
    r.why_not = "SyncReplicasOptimizer: the barrier, not the links, keeps the workers together";
    return r;
  }
  if (base.replay_ns <= 0 || std::abs(base.miss) > kMaxBaselineMiss) {
    r.why_not =
        fmt::format("over the PS links the replay of the capture as is misses it by {:.0f}%",
                    std::abs(100 * base.miss));
    return r;
  }
  for (const ReplayModel::Ps& p : l.ps) {
    const double ns = (p.in_bytes + p.out_bytes) / l.link_bytes_per_ns;
    r.busiest_ns = std::max(r.busiest_ns, ns);
    r.sum_ns += ns;
  }
  r.link_share = double(m.workers.size()) * r.busiest_ns / m.measured_step_ns;
  std::vector<double> waits;
  for (const ReplayModel::Worker& w : m.workers) {
    waits.push_back((w.recv_ns + w.tail_ns + w.pull_xfer_ns + w.push_xfer_ns) / m.measured_step_ns);
  }
  r.wait_share = MedianInPlace(&waits);
  if (r.link_share < kMinConvoyLinkShare || r.link_share > kMaxConvoyLinkShare) {
    r.why_not = fmt::format(
        "the workers x the busiest PS's link time per worker step are {:.0f}% of the step, "
        "outside {:.0f}-{:.0f}%",
        100 * r.link_share, 100 * kMinConvoyLinkShare, 100 * kMaxConvoyLinkShare);
    return r;
  }
  if (r.wait_share < kMinConvoyWaitOverLink * r.link_share) {
    r.why_not = fmt::format(
        "the workers wait on receives and transfers {:.0f}% of the step, under {:.0f}% of the "
        "{:.0f}% the busiest PS's links carry",
        100 * r.wait_share, 100 * kMinConvoyWaitOverLink, 100 * r.link_share);
    return r;
  }
  r.convoy = true;
  return r;
}

}  // namespace tfdiag
