#include "analyzers/outlook_sync_burst.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/duration.h"
#include "core/median.h"

namespace tfdiag {

SyncBurst ReadSyncBurst(const ReplayModel& m, const NicDemand& d) {
  SyncBurst b;
  if (!m.sync || m.workers.empty() || m.measured_step_ns <= 0) return b;
  const bool sized = d.known && d.out.size() == m.ps.size() && d.in.size() == m.ps.size();
  // Per worker: the answers' time beyond the PS's service (the held receive wait and the last
  // answer's measured transfer), the gradients' measured transfer; less what the replay's own
  // links (SetLinks) already run of them, which grows with their queues.
  // A measured transfer the same for every worker (to kSyncBurstFixedSpread) is a fixed link
  // time, not a share of a burst: a worker's place in a shared burst sets how long its
  // transfer takes.
  double lo = INFINITY, hi = 0;
  for (const ReplayModel::Worker& w : m.workers) {
    lo = std::min(lo, w.pull_xfer_ns), hi = std::max(hi, w.pull_xfer_ns);
  }
  const bool shared = hi > 0 && hi - lo > kSyncBurstFixedSpread * hi;
  std::vector<double> pull, push, held;
  for (const ReplayModel::Worker& w : m.workers) {
    held.push_back(w.recv_ns);
    if (!shared) {
      pull.push_back(w.recv_ns);
      push.push_back(0);
      continue;
    }
    pull.push_back(w.recv_ns + std::max(0.0, w.pull_xfer_ns - m.link_explained_out_ns));
    // A gradient has its variable's shape: its transfer at least the answer's, where the
    // capture's push measure (bounded by the shortest idle time) reads less.
    push.push_back(std::max(
        {0.0, w.push_xfer_ns - m.link_explained_in_ns, w.pull_xfer_ns - m.link_explained_out_ns}));
  }
  const double median = MedianInPlace(&pull);
  std::sort(pull.begin(), pull.end());
  const double lower = pull[pull.size() / 4];
  if (median < kSyncBurstMinShare * m.measured_step_ns || lower < kSyncBurstMinAlike * median) {
    return b;
  }
  b.pull_ns = median;
  const double pushed = MedianInPlace(&push);
  if (sized) {
    for (size_t p = 0; p < m.ps.size(); ++p) {
      if (d.out[p] > 0 && (b.ps < 0 || d.out[p] > d.out[size_t(b.ps)])) b.ps = int(p);
    }
  }
  if (b.ps >= 0) {
    const size_t p = size_t(b.ps);
    // The gradients: their measured transfer where the capture ties one, else as long as the
    // answers times their bytes over the answers'.
    b.push_ns = pushed > 0 ? pushed : median * std::max(0.0, d.in[p]) / d.out[p];
    b.bytes_per_s = double(m.workers.size()) * d.out[p] / (median * 1e-9);
  } else {
    // No sizes: the PS with the most op time per worker step, the gradients as the answers (a
    // gradient has its variable's shape).
    for (size_t p = 0; p < m.ps.size(); ++p) {
      const double x = m.ps[p].pull_ns + m.ps[p].push_ns;
      if (b.ps < 0 || x > m.ps[size_t(b.ps)].pull_ns + m.ps[size_t(b.ps)].push_ns) b.ps = int(p);
    }
    b.push_ns = pushed > 0 ? pushed : median;
  }
  b.unexplained_ns = MedianInPlace(&held) + (pushed > 0 ? 0 : b.push_ns);
  b.set = b.ps >= 0;
  return b;
}

double SyncBurstGrowthNs(const SyncBurst& b, int workers, int captured, double bytes_scale) {
  if (!b.set || captured <= 0) return 0;
  const double k = double(workers) * std::max(0.0, bytes_scale) / double(captured);
  return (b.pull_ns + b.push_ns) * std::max(-1.0, k - 1);
}

std::string SyncBurstResource(const SyncBurst& b, std::string_view task) {
  return fmt::format(
      "{} NIC (the burst after the sync barrier: every worker's answers and gradients at once{})",
      task,
      b.bytes_per_s > 0
          ? fmt::format(", {:.2g} Gb/s as the capture's burst shows it", b.bytes_per_s * 8 / 1e9)
          : std::string());
}

std::string SyncBurstAssumption(const SyncBurst& b, std::string_view task) {
  return fmt::format(
      "sync burst: the answers' time beyond the PS's service ({} of the median step: the receive "
      "wait the PS model does not explain and the last answer's transfer) is taken as their "
      "burst after the barrier on {}'s link, and the gradients' ({}) as theirs, both k times as "
      "long at k times the workers",
      FormatDurationShort(b.pull_ns), task, FormatDurationShort(b.push_ns));
}

}  // namespace tfdiag
