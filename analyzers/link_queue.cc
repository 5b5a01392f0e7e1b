#include "analyzers/link_queue.h"

#include <fmt/format.h>

#include <algorithm>

#include "analyzers/analysis_input.h"
#include "core/duration.h"

namespace tfdiag {

namespace {

// The extra queueing (ns) a worker step meets at step `s` against the measured step `now`: per
// PS, its answers' and its gradients' (a worker pulls, computes, then pushes: the two add), the
// most of any PS (a worker pulls from every PS at once: the slowest answer decides).
double ExtraNs(const std::vector<LinkLoad>& loads, double per_ns, double w, double now, double s) {
  std::vector<std::pair<int, double>> by_ps;
  for (const LinkLoad& l : loads) {
    const double t = l.bytes / per_ns;  // the bytes' time on an idle link, ns
    const double r_now = std::min(w * t / now, kMaxLinkLoad);
    const double r = w * t / s;
    const double extra = t * (1 / (1 - r) - 1 / (1 - r_now));
    auto it = std::find_if(by_ps.begin(), by_ps.end(),
                           [&](const std::pair<int, double>& e) { return e.first == l.ps; });
    if (it == by_ps.end()) {
      by_ps.emplace_back(l.ps, extra);
    } else {
      it->second += extra;
    }
  }
  double most = 0;
  for (const auto& e : by_ps) most = std::max(most, e.second);
  return most;
}

}  // namespace

LinkQueueStep QueueOnLinks(const std::vector<LinkLoad>& loads, int workers, double bytes_per_s,
                           double now_ns, double after_ns) {
  LinkQueueStep q;
  q.step_ns = after_ns;
  if (!(after_ns > 0 && after_ns < now_ns) || workers <= 0 || bytes_per_s <= 0 || loads.empty()) {
    return q;
  }
  const double per_ns = bytes_per_s / 1e9, w = workers;
  // The least step at which every link stays under kMaxLinkLoad.
  double floor_ns = 0;
  for (const LinkLoad& l : loads)
    floor_ns = std::max(floor_ns, w * l.bytes / per_ns / kMaxLinkLoad);
  double lo = std::max(after_ns, floor_ns), hi = now_ns;
  if (lo >= hi) {
    q.saturated = true;  // the links are past kMaxLinkLoad at the measured step already
  } else if (after_ns + ExtraNs(loads, per_ns, w, now_ns, lo) <= lo) {
    hi = lo;
    q.saturated = floor_ns > after_ns;  // the step the links need is past kMaxLinkLoad
  } else {
    for (int i = 0; i < 60 && hi - lo > 1; ++i) {
      const double mid = (lo + hi) / 2;
      (after_ns + ExtraNs(loads, per_ns, w, now_ns, mid) > mid ? lo : hi) = mid;
    }
  }
  q.step_ns = hi;
  for (const LinkLoad& l : loads) {
    const double t = l.bytes / per_ns;
    const double r = w * t / q.step_ns;
    if (r > q.rho) {
      q.rho = r;
      q.rho_now = w * t / now_ns;
      q.ps = l.ps;
      q.out = l.out;
    }
  }
  return q;
}

JobLinks ReadJobLinks(const AnalysisInput& in, const ReplayModel& m, double estimated) {
  JobLinks l;
  l.demand = PsNicBytes(in, m);
  l.bytes_per_s = estimated;
  if (l.bytes_per_s <= 0 && l.demand.known) l.bytes_per_s = JobNicRate(in, m, l.demand).bytes_per_s;
  l.assumed = l.bytes_per_s <= 0;
  if (l.assumed) l.bytes_per_s = kAssumedNicBytesPerS;
  return l;
}

LinkCheck CheckLinksAfterFix(const AnalysisInput& in, const ReplayModel& m, const JobLinks& links,
                             const std::vector<bool>& moved, double now_ns, double after_ns) {
  LinkCheck c;
  if (!links.demand.known) return c;
  std::vector<LinkLoad> loads;
  for (size_t i = 0; i < m.ps.size() && i < moved.size(); ++i) {
    if (moved[i]) continue;
    if (links.demand.out[i] > 0) loads.push_back({links.demand.out[i], int(i), true});
    if (links.demand.in[i] > 0) loads.push_back({links.demand.in[i], int(i), false});
  }
  c.q = QueueOnLinks(loads, int(m.workers.size()), links.bytes_per_s, now_ns, after_ns);
  if (c.q.ps < 0 || (links.assumed && c.q.rho_now >= kMaxLinkLoad)) {
    c.q = LinkQueueStep{};
    return c;
  }
  const std::string ps(in.capture.TaskLabelOf(m.ps[size_t(c.q.ps)].task));
  const char* what = c.q.out ? "answers" : "gradients";
  const double gbps = links.bytes_per_s * 8 / 1e9;
  if (c.q.saturated && !links.assumed) {
    // The step the link allows: the prediction is bounded there (as a PS saturated in CPU
    // bounds it, replay_impact.cc), not withheld.
    c.bound_ns = c.q.step_ns;
    c.weak = fmt::format(
        "bounded by {}'s NIC ({:.3g} Gb/s estimated from the capture), whose {} would fill over "
        "{:.0f}% of the {} step the replay gives (from {:.0f}% as captured): the step is at least "
        "{}",
        ps, gbps, what, 100 * kMaxLinkLoad, FormatDurationShort(after_ns), 100 * c.q.rho_now,
        FormatDurationShort(c.q.step_ns));
  } else if (c.q.step_ns > (1 + kMaxLinkQueueShare) * after_ns) {
    c.weak = fmt::format(
        "{}'s NIC ({}) would queue its {} longer at the new load ({:.0f}% -> {:.0f}% busy): the "
        "processor-sharing mean gives {}, which the replay without links leaves out",
        ps,
        links.assumed ? fmt::format("assumed {:.3g} Gb/s: no NIC figure in the capture", gbps)
                      : fmt::format("{:.3g} Gb/s estimated from the capture", gbps),
        what, 100 * c.q.rho_now, 100 * c.q.rho, FormatDurationShort(c.q.step_ns));
  }
  return c;
}

}  // namespace tfdiag
