#include "analyzers/ps_links_convoy.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "analyzers/format_range.h"
#include "analyzers/ps_link_saturated.h"
#include "analyzers/replay_fix_reach.h"
#include "analyzers/replay_ps_nodes.h"
#include "core/duration.h"
#include "core/median.h"

namespace tfdiag {

namespace {

// The busiest node's link time per worker step of PS placed on `node` with link times `out`,
// `in` (ns each way), both ways summed, or the busier direction alone where `one_way`.
double BusiestNodeNs(const std::vector<int>& node, const std::vector<double>& out,
                     const std::vector<double>& in, bool one_way) {
  std::map<int, std::pair<double, double>> by;
  for (size_t p = 0; p < node.size() && p < out.size() && p < in.size(); ++p) {
    by[node[p]].first += out[p];
    by[node[p]].second += in[p];
  }
  double most = 0;
  for (const auto& [n, t] : by) {
    most = std::max(most, one_way ? std::max(t.first, t.second) : t.first + t.second);
  }
  return most;
}

// The step saved, share of the step, where the busiest link's time per worker step becomes
// `after_ns` (busiest_ns > 0), before any bound: ConvoyShare() x (1 - after_ns / busiest_ns).
double UnboundedSaving(const LinkConvoy& c, double after_ns) {
  return c.ConvoyShare() * (1 - after_ns / c.busiest_ns);
}

// UnboundedSaving within [0, MostSaving()]. What SavingFor and both readings of
// SpreadReadingsAgree take.
double SavingOver(const LinkConvoy& c, double after_ns) {
  return std::clamp(UnboundedSaving(c, after_ns), 0.0, c.MostSaving());
}

}  // namespace

double LinkConvoy::PartitionedNs(const Fix& fix) const {
  if (fix.partition.empty() || out_ns.size() != in_ns.size() || ps_task.size() != out_ns.size()) {
    return 0;
  }
  std::vector<double> out = out_ns, in = in_ns;
  double out_moved = 0, in_moved = 0;
  for (size_t p = 0; p < out.size(); ++p) {
    const double s = PartitionByteShare(fix, ps_task[p]);
    out_moved += s * out[p], in_moved += s * in[p];
    out[p] *= 1 - s, in[p] *= 1 - s;
  }
  if (out_moved + in_moved <= 0) return 0;
  const double n = double(out.size());
  for (size_t p = 0; p < out.size(); ++p) out[p] += out_moved / n, in[p] += in_moved / n;
  if (PsPacked(ps_node) && ps_node.size() == out.size()) {
    const double now = BusiestNodeNs(ps_node, out_ns, in_ns, one_way);
    return now > 0 ? busiest_ns * BusiestNodeNs(ps_node, out, in, one_way) / now : 0;
  }
  double most = 0;
  for (size_t p = 0; p < out.size(); ++p) {
    most = std::max(most, one_way ? std::max(out[p], in[p]) : out[p] + in[p]);
  }
  return most;
}

double LinkConvoy::BusiestAfterNs(const Fix& fix) const {
  if (fix.partition_only()) return PartitionedNs(fix);
  const bool packed = PsPacked(ps_node) && ps_node.size() == out_ns.size();
  if (!packed) {
    if (fix.spread_ps || fix.ps_count <= 0) return 0;
    return sum_ns / double(fix.ps_count);
  }
  if (!fix.spread_ps && fix.ps_count <= 0) return 0;
  const double now = BusiestNodeNs(ps_node, out_ns, in_ns, one_way);
  if (now <= 0) return 0;
  const std::vector<int> after = PsNodesAfter(ps_node, fix);
  std::vector<double> out = out_ns, in = in_ns;
  if (!fix.spread_ps) {
    double out_sum = 0, in_sum = 0;
    for (size_t p = 0; p < out_ns.size(); ++p) out_sum += out_ns[p], in_sum += in_ns[p];
    const double n = double(after.size());
    out.assign(after.size(), out_sum / n);
    in.assign(after.size(), in_sum / n);
  }
  return busiest_ns * BusiestNodeNs(after, out, in, one_way) / now;
}

double LinkConvoy::BusiestAloneNs() const {
  if (!PsPacked(ps_node) || ps_node.size() != out_ns.size()) return 0;
  const std::map<int, int> per_node = PsPerNode(ps_node);
  double most = 0;
  for (size_t p = 0; p < ps_node.size(); ++p) {
    const double ns = one_way ? std::max(out_ns[p], in_ns[p]) : out_ns[p] + in_ns[p];
    most = std::max(most, ns / double(per_node.at(ps_node[p])));
  }
  return most;
}

bool LinkConvoy::SpreadReadingsAgree(double step_ns, double* shared, double* alone) const {
  *shared = *alone = 0;
  Fix spread;
  spread.spread_ps = true;
  const double after_ns = BusiestAfterNs(spread), alone_ns = BusiestAloneNs();
  if (busiest_ns <= 0 || after_ns <= 0 || alone_ns <= 0 || step_ns <= 0) return false;
  auto step_at = [&](double ns) { return step_ns * (1 - SavingOver(*this, ns)); };
  *shared = step_at(after_ns), *alone = step_at(alone_ns);
  const double lower = std::min(*shared, *alone);
  return lower > 0 && std::abs(*shared - *alone) <= kMaxSpreadReadingsApart * lower;
}

double LinkConvoy::ConvoyShare() const {
  return std::clamp(std::max(link_share, wait_share), 0.0, 1.0);
}

double LinkConvoy::MostSaving() const {
  const double most = worker_nics ? std::min(wait_share, 1 - own_share - worker_share) : wait_share;
  return std::max(0.0, most);
}

double LinkConvoy::SavingFor(const Fix& fix) const {
  const double after = BusiestAfterNs(fix);
  if (after <= 0 || busiest_ns <= 0) return 0;
  return SavingOver(*this, after);
}

double LinkConvoy::SavingAt(int n) const {
  if (n <= 0) return 0;
  Fix fix;
  fix.ps_count = n;
  return SavingFor(fix);
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
  read("convoy_one_way_min_link_pct", &l.one_way_min_link);
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
  if (base.replay_ns <= 0 || std::abs(base.miss) > kMaxPredictedBaselineMiss) {
    r.why_not =
        fmt::format("over the PS links the replay of the capture as is misses it by {:.0f}%",
                    std::abs(100 * base.miss));
    return r;
  }
  r.loose_fit = std::abs(base.miss) > kMaxBaselineMiss;
  // Each PS's link time per worker step both ways (answers out, then gradients in), and its busier
  // direction alone: a full-duplex NIC carries one worker's gradients in while it sends another's
  // answers out.
  r.ps_node = l.ps_node;
  for (const ReplayModel::Ps& p : l.ps) {
    r.out_ns.push_back(p.out_bytes / l.link_bytes_per_ns);
    r.in_ns.push_back(p.in_bytes / l.link_bytes_per_ns);
    r.ps_task.push_back(p.task);
  }
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
    if (share >= std::min(lim.min_link, lim.one_way_min_link) && share <= lim.max_link) {
      r.one_way = true;
      r.under_band = share < lim.min_link;
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
  // What each worker's own NIC and compute keep after a fix of the PS (LinkConvoy::MostSaving).
  r.worker_nics = l.worker_links;
  std::vector<double> own;
  for (const ReplayModel::Worker& w : m.workers) {
    const bool input_apart = !w.prefetched && !w.pull_beside_input;
    own.push_back((w.compute_ns + (input_apart ? w.input_ns : 0)) / m.measured_step_ns);
  }
  r.own_share = MedianInPlace(&own);
  for (size_t p = 0; p < r.out_ns.size(); ++p) {
    r.worker_share += (r.out_ns[p] + r.in_ns[p]) / m.measured_step_ns;
  }
  if ((r.link_share < lim.min_link && !r.under_band) || r.link_share > lim.max_link) {
    r.why_not = fmt::format(
        "the workers x the busiest PS's link time per worker step are {:.0f}% of the step, "
        "outside {:.0f}-{:.0f}%",
        100 * r.link_share, 100 * lim.min_link, 100 * lim.max_link);
    return r;
  }
  // The waits asked for are a share of what the links hold the workers in, at most the whole step:
  // links over it overlap their two directions, and no worker waits longer than its step less its
  // own compute (gen3 report38 8316, spent: link share 107%, the workers waiting 89%; 91% was
  // asked and no convoy read, though 16 -> 32 PS bought 68%).
  const double least_wait = r.even ? lim.even_min_wait : lim.min_wait;
  const double held = std::min(r.link_share, 1.0);
  if (r.wait_share < least_wait * held) {
    r.why_not = fmt::format(
        "the workers wait on receives and transfers {:.0f}% of the step, under {:.0f}% of the "
        "{:.0f}% the busiest PS's links carry{} ({} links)",
        100 * r.wait_share, 100 * least_wait, 100 * r.link_share,
        r.link_share > 1 ? " (of the whole step at most)" : "", r.even ? "even" : "uneven");
    return r;
  }
  r.convoy = true;
  return r;
}

bool PredictFromConvoy(const ReplayModel& m, const ReplayModel& linked, const Baseline& linked_base,
                       const Fix& fix, double spread, const std::string& what,
                       const std::string& estimated, const std::string& checks,
                       const ConvoyLimits& lim, Impact* im_out, std::string* why_not,
                       bool rate_from_answers) {
  LinkConvoy cv = ReadLinkConvoy(m, linked, linked_base, lim);
  const bool partition = fix.partition_only();
  // A loose fit reads a PS count alone (LinkConvoy::loose_fit).
  if (cv.convoy && cv.loose_fit && (partition || fix.spread_ps)) {
    cv.convoy = false;
    cv.why_not = fmt::format(
        "over the PS links the replay of the capture as is misses it by {:.0f}%: over {:.0f}%, "
        "only a PS count is read from the convoy",
        std::abs(100 * linked_base.miss), 100 * kMaxBaselineMiss);
  }
  if (why_not != nullptr) {
    *why_not =
        cv.convoy ? "the convoy's links move no time for this fix" : "no convoy: " + cv.why_not;
  }
  // No convoy: a link saturated one way may still bound the step (ps_link_saturated.h); it
  // models no PS moved between nodes, and is not read for a partition (set on PS-count fixes).
  if (!cv.convoy) {
    if (fix.spread_ps || partition) return false;
    return PredictFromSaturatedLink(m, linked, fix, spread, what, estimated, checks, lim.max_link,
                                    im_out, nullptr, rate_from_answers);
  }
  const double after_ns = cv.BusiestAfterNs(fix);
  if (after_ns <= 0) return false;
  // A spread read both ways (BusiestAloneNs): where they put the step far apart, which the
  // capture cannot settle, no prediction.
  if (fix.spread_ps) {
    double shared = 0, alone = 0;
    if (!cv.SpreadReadingsAgree(m.measured_step_ns, &shared, &alone)) {
      Impact& im = *im_out;
      im.withheld = fmt::format(
          "the PS links are in a convoy (the workers x the busiest PS's link time per worker step "
          "are {:.0f}% of the step), but what a NIC of its own buys each PS hinges on the NIC's "
          "speed, which no profile records: read as each PS's own rate, the busiest NIC's {} "
          "becomes {} (median step {} -> {}); read as its share of the NIC its node's PS "
          "shared, {} ({}): more than {:.0f}% apart",
          100 * cv.link_share, FormatDurationShort(cv.busiest_ns), FormatDurationShort(after_ns),
          FormatDurationShort(m.measured_step_ns), FormatDurationShort(shared),
          FormatDurationShort(cv.BusiestAloneNs()), FormatDurationShort(alone),
          100 * kMaxSpreadReadingsApart);
      im.why = im.withheld + "; the fix modelled: " + what + "; " + checks;
      return true;
    }
  }
  const bool packed = PsPacked(cv.ps_node) && cv.ps_node.size() == cv.out_ns.size();
  std::string moved;
  if (fix.spread_ps) {
    moved = "each PS's link time on a NIC of its own";
  } else if (partition) {
    moved = fmt::format("the hot variables' share of their PS's link time spread over all {} PS",
                        cv.out_ns.size());
  } else if (packed) {
    moved = fmt::format(
        "the links' time spread over {} PS, the PS kept on the nodes they share now and each PS "
        "added on a node of its own (PS on one node share its NIC: the PS's nodes as the pod list "
        "or the processes give them)",
        fix.ps_count);
  } else {
    moved = fmt::format("the links' time spread over {} PS", fix.ps_count);
  }
  Impact& im = *im_out;
  const double saving = cv.SavingFor(fix);
  SetLinksPrediction(m, 1 - saving, linked_base.miss, spread, &im);
  // Read one way under the band: the directions' overlap, which the capture does not show,
  // decides the convoy (kOneWayUnderBandSpread).
  if (cv.under_band) {
    im.confidence = "low";
    im.low_ns = std::min(im.low_ns, im.step_ns_after_fix * (1 - kOneWayUnderBandSpread));
    im.high_ns = std::max(im.high_ns, im.step_ns_after_fix * (1 + kOneWayUnderBandSpread));
  }
  std::string floor;
  if (cv.worker_nics && cv.MostSaving() < cv.wait_share &&
      UnboundedSaving(cv, after_ns) > cv.MostSaving()) {
    floor = fmt::format(
        "; the step keeps each worker's own NIC, which carries every PS's answers and gradients "
        "({} per worker step at the PS links' rate: the replay of the capture as is took the "
        "workers' NICs as links), and its compute and input ({})",
        FormatDurationShort(cv.worker_share * m.measured_step_ns),
        FormatDurationShort(cv.own_share * m.measured_step_ns));
  }
  im.why = fmt::format(
      "the PS links in a convoy: the workers x the busiest PS's link time per worker step ({}{}) "
      "are {:.0f}% of the step and the workers' held waits and transfers {:.0f}% of it, so each "
      "step waits for every worker's turn on that link; {}: {}, the busiest {}'s {} becomes {} "
      "per worker step{}: median step {} -> {} ({}); {} "
      "confidence: the convoy's share is read from the capture and its saving computed from it, "
      "not replayed (set on gen3 report6, its even-links and one-way readings on gen3 report8 "
      "and gen2 report9; checked on gen3 report7 and gen2 report8{}){}; the links replay of "
      "the capture as is gives {:+.0f}%; {}",
      FormatDurationShort(cv.busiest_ns),
      cv.one_way ? fmt::format(", its busier direction: its NIC carries answers out and gradients "
                               "in at once, both ways {:.0f}% of the step{}",
                               100 * cv.both_share,
                               cv.under_band ? "; one way under the band, so how far the two "
                                               "directions overlap, which no profile shows, "
                                               "decides it: low confidence, the range widened"
                                             : "")
                 : std::string(),
      100 * cv.link_share, 100 * cv.wait_share, what, moved, packed ? "NIC" : "link",
      FormatDurationShort(cv.busiest_ns), FormatDurationShort(after_ns), floor,
      FormatDurationShort(im.step_ns), FormatDurationShort(im.step_ns_after_fix),
      FormatRange(im.low_ns, im.high_ns), im.confidence,
      fix.spread_ps ? "; the spread's two readings of the NIC within 25% of each other, set on "
                      "gen2 report17-18"
      : packed      ? "; the busiest node's NIC where PS share nodes, set on gen2 report18"
                    : "",
      estimated.empty() ? "" : "; " + estimated, 100 * linked_base.miss, checks);
  return true;
}

}  // namespace tfdiag
