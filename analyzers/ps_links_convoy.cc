#include "analyzers/ps_links_convoy.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "analyzers/format_range.h"
#include "analyzers/ps_link_saturated.h"
#include "core/duration.h"
#include "core/median.h"

namespace tfdiag {

double LinkConvoy::SavingAt(int n) const {
  if (n <= 0 || busiest_ns <= 0) return 0;
  // The links' part of the step is at most all of it: above 1, the two directions overlap.
  const double saving = std::min(1.0, link_share) * (1 - sum_ns / double(n) / busiest_ns);
  return std::clamp(saving, 0.0, std::max(0.0, wait_share));
}

ConvoyLimits ConvoyLimitsOf(const Rule& rule) {
  ConvoyLimits l;
  auto read = [&](const char* name, double* out) {
    if (const RuleParam* p = rule.FindParam(name)) *out = p->value / 100;
  };
  read("convoy_min_link_pct", &l.min_link);
  read("convoy_max_link_pct", &l.max_link);
  read("convoy_min_wait_pct", &l.min_wait);
  read("convoy_even_min_link_pct", &l.even_min_link);
  read("convoy_even_min_wait_pct", &l.even_min_wait);
  return l;
}

LinkConvoy ReadLinkConvoy(const ReplayModel& m, const ReplayModel& l, const Baseline& base,
                          const ConvoyLimits& lim) {
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
  // Each PS's link time per worker step both ways (answers out, then gradients in), and its busier
  // direction alone: a full-duplex NIC carries one worker's gradients in while it sends another's
  // answers out.
  auto read = [&](bool one_way, double* busiest, double* sum, double* least) {
    *busiest = *sum = 0;
    *least = -1;
    for (const ReplayModel::Ps& p : l.ps) {
      const double bytes = one_way ? std::max(p.in_bytes, p.out_bytes) : p.in_bytes + p.out_bytes;
      const double ns = bytes / l.link_bytes_per_ns;
      *busiest = std::max(*busiest, ns);
      *least = *least < 0 ? ns : std::min(*least, ns);
      *sum += ns;
    }
  };
  double least_ns = -1;
  read(false, &r.busiest_ns, &r.sum_ns, &least_ns);
  r.link_share = double(m.workers.size()) * r.busiest_ns / m.measured_step_ns;
  // Both ways over the band's top: the directions overlap; the busier one alone may be the convoy.
  if (r.link_share > lim.max_link) {
    double b = 0, s = 0, lo = -1;
    read(true, &b, &s, &lo);
    const double share = double(m.workers.size()) * b / m.measured_step_ns;
    if (share >= lim.min_link && share <= lim.max_link) {
      r.one_way = true;
      r.both_share = r.link_share;
      r.busiest_ns = b, r.sum_ns = s, least_ns = lo, r.link_share = share;
    }
  }
  r.even = m.ps.size() > 1 && r.busiest_ns > 0 && least_ns >= lim.even_min_link * r.busiest_ns;
  std::vector<double> waits;
  for (const ReplayModel::Worker& w : m.workers) {
    waits.push_back((w.recv_ns + w.tail_ns + w.pull_xfer_ns + w.push_xfer_ns) / m.measured_step_ns);
  }
  r.wait_share = MedianInPlace(&waits);
  if (r.link_share < lim.min_link || r.link_share > lim.max_link) {
    r.why_not = fmt::format(
        "the workers x the busiest PS's link time per worker step are {:.0f}% of the step, "
        "outside {:.0f}-{:.0f}%",
        100 * r.link_share, 100 * lim.min_link, 100 * lim.max_link);
    return r;
  }
  const double least_wait = r.even ? lim.even_min_wait : lim.min_wait;
  if (r.wait_share < least_wait * r.link_share) {
    r.why_not = fmt::format(
        "the workers wait on receives and transfers {:.0f}% of the step, under {:.0f}% of the "
        "{:.0f}% the busiest PS's links carry ({} links)",
        100 * r.wait_share, 100 * least_wait, 100 * r.link_share, r.even ? "even" : "uneven");
    return r;
  }
  r.convoy = true;
  return r;
}

bool PredictFromConvoy(const ReplayModel& m, const ReplayModel& linked, const Baseline& linked_base,
                       const Fix& fix, double spread, const std::string& what,
                       const std::string& estimated, const std::string& checks,
                       const ConvoyLimits& lim, Impact* im_out) {
  const LinkConvoy cv = ReadLinkConvoy(m, linked, linked_base, lim);
  // No convoy: a link saturated one way may still bound the step (ps_link_saturated.h).
  if (!cv.convoy) {
    return PredictFromSaturatedLink(m, linked, fix, spread, what, estimated, checks, lim.max_link,
                                    im_out);
  }
  Impact& im = *im_out;
  SetLinksPrediction(m, 1 - cv.SavingAt(fix.ps_count), linked_base.miss, spread, &im);
  im.why = fmt::format(
      "the PS links in a convoy: the workers x the busiest PS's link time per worker step ({}{}) "
      "are {:.0f}% of the step and the workers' held waits and transfers {:.0f}% of it, so each "
      "step waits for every worker's turn on that link; {}: the links' time spread over {} PS, "
      "the busiest link's {} becomes {} per worker step: median step {} -> {} ({}); {} "
      "confidence: the convoy's share is read from the capture and its saving computed from it, "
      "not replayed (set on gen3 report6, its even-links and one-way readings on gen3 report8 "
      "and gen2 report9; checked on gen3 report7 and gen2 report8){}; the links replay of "
      "the capture as is gives {:+.0f}%; {}",
      FormatDurationShort(cv.busiest_ns),
      cv.one_way ? fmt::format(", its busier direction: its NIC carries answers out and gradients "
                               "in at once, both ways {:.0f}% of the step",
                               100 * cv.both_share)
                 : std::string(),
      100 * cv.link_share, 100 * cv.wait_share, what, fix.ps_count,
      FormatDurationShort(cv.busiest_ns), FormatDurationShort(cv.sum_ns / double(fix.ps_count)),
      FormatDurationShort(im.step_ns), FormatDurationShort(im.step_ns_after_fix),
      FormatRange(im.low_ns, im.high_ns), im.confidence, estimated.empty() ? "" : "; " + estimated,
      100 * linked_base.miss, checks);
  return true;
}

}  // namespace tfdiag
