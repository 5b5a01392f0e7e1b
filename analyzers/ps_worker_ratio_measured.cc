#include "analyzers/ps_worker_ratio_measured.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "analyzers/nic_rate.h"
#include "analyzers/ps_links_convoy.h"
#include "analyzers/replay_dispatch.h"
#include "analyzers/replay_fixes.h"
#include "analyzers/replay_queued_waits.h"

namespace tfdiag {

namespace {

// The candidate counts above the captured `ps`: +1, 1.5x, 2x, 3x, 4x (distinct, at most
// kMaxPsMultiple x and `rule`'s measured_max_ps).
std::set<int> Candidates(int ps, const Rule& rule) {
  std::set<int> out;
  const int cap = std::min(static_cast<int>(rule.Param("measured_max_ps")), kMaxPsMultiple * ps);
  for (double k : {1.0, 1.5, 2.0, 3.0, 4.0}) {
    const int n = k == 1.0 ? ps + 1 : static_cast<int>(std::lround(k * ps));
    if (n > ps && n <= cap) out.insert(n);
  }
  return out;
}

// The count among `saved` ((count, saving), counts ascending; r.placement_saving set): the
// smallest within measured_near_best_pct of the best whose own gain is
// measured_min_count_saving_pct, where the best buys measured_min_saving_pct with that much its
// own; else r.why_none.
void ChooseCount(const std::vector<std::pair<int, double>>& saved, const Rule& rule,
                 MeasuredPsCount* out) {
  MeasuredPsCount& r = *out;
  for (const auto& [n, s] : saved) {
    if (s > r.best_saving) r.best_saving = s, r.best_count = n;
  }
  const double own = r.best_saving - r.placement_saving;
  if (100 * r.best_saving < rule.Param("measured_min_saving_pct") ||
      100 * own < rule.Param("measured_min_count_saving_pct")) {
    r.why_none = fmt::format(
        "no PS count of {} tried buys {:.0f}% with {:.0f}% its own (the best {:.0f}%, {:.0f}% "
        "beyond re-partitioning over the PS there are)",
        r.tried, rule.Param("measured_min_saving_pct"), rule.Param("measured_min_count_saving_pct"),
        100 * r.best_saving, 100 * own);
    return;
  }
  const double near = rule.Param("measured_near_best_pct") / 100;
  for (const auto& [n, s] : saved) {
    if (s >= near * r.best_saving &&
        100 * (s - r.placement_saving) >= rule.Param("measured_min_count_saving_pct")) {
      r.count = n;
      r.saving = s;
      break;
    }
  }
}

// The candidates replayed on `mm` (the capture's model, or its links'), against its replay as
// is `base`: fills r's count, saving and the candidates tried (MeasurePsCount's measurement).
void MeasureCandidates(const ReplayModel& mm, const Baseline& base, const Rule& rule,
                       MeasuredPsCount* out) {
  MeasuredPsCount& r = *out;
  const int ps = static_cast<int>(mm.ps.size());
  // ReplaySteps bounds the PS request services of a replay (2e7) at the captured count; a
  // candidate count multiplies each worker's requests, so its steps are bounded the same way at
  // that count (10-40, as ReplaySteps).
  const int base_steps = ReplaySteps(mm);
  const double per_count = 2e7 / std::max(1.0, double(mm.workers.size()));
  const ReplayModel dear = AtDispatchCost(mm);
  // What re-partitioning every variable over the PS there are buys in the replay (the same
  // count): an evened-out placement, hot-ps's and slow-ps-host's cause, not the count's. A count
  // is suggested only where its own gain beyond it is at least measured_min_count_saving_pct
  // (gen3 report2 910: 16 -> 17 PS replayed -38%, all of it the even placement, which hides a
  // slow PS host; its twin -0%; 917: 2 -> 4 PS, 9 of 18 points the count's, twin -29%).
  Fix same;
  same.ps_count = ps;
  r.placement_saving = std::max(0.0, 1 - ReplayMedianStep(mm, same, base_steps) / base.replay_ns);
  std::vector<std::pair<int, double>> saved;  // (count, saving), counts ascending
  for (int n : Candidates(ps, rule)) {
    if (!PartOpsOutweighWork(mm, n).empty()) continue;
    Fix fix;
    fix.ps_count = n;
    const int steps = std::min(base_steps, static_cast<int>(std::clamp(per_count / n, 10.0, 40.0)));
    const double after = ReplayMedianStep(mm, fix, steps);
    const double after_dear = ReplayMedianStep(dear, fix, steps);
    ++r.tried;
    if (r.lo == 0) r.lo = n;
    r.hi = n;
    // ComputeImpacts withholds a count whose part ops' fixed cost moves it more than 25%; the
    // saving counted is the dearer of the two.
    if (after <= 0 || std::abs(after_dear - after) / after > kMaxPartOpSensitivity) continue;
    const double s = 1 - std::max(after, after_dear) / base.replay_ns;
    saved.emplace_back(n, s);
  }
  ChooseCount(saved, rule, &r);
}

// Why the PS links (`c`, ChooseLinks on `m`) cannot stand in for the FIFO replay of `m` in the
// measurement: ComputeImpacts' own conditions for replaying a fix that adds PS over the links
// (analyzers/replay_impact.cc: the transfers held fixed over kMaxFixedTransferShare in FIFO, a
// rate, the replay as is within kMaxBaselineMiss; what the links leave unexplained and held fixed
// within kMaxUnexplainedShare and kMaxFixedTransferShare), and the busiest PS's links loaded at
// least measured_min_ps_util_pct (its bytes both ways per worker step x workers / the rate / the
// step: a worker's pull and push cross them one after the other). "" where they can;
// `*link_util` that load.
std::string LinksRefused(const ReplayModel& m, const ChosenLinks& c, const Rule& rule,
                         double* link_util) {
  const ReplayModel& l = c.linked;
  if (l.link_bytes_per_ns <= 0) {
    return c.recv_refused.empty() ? "the PS links show no rate" : c.recv_refused;
  }
  if (FixedTransferShare(m) <= kMaxFixedTransferShare) {
    return "the transfers are too small a share of the step for the links to be replayed";
  }
  if (c.base.replay_ns <= 0 || std::abs(c.base.miss) > kMaxBaselineMiss) {
    return fmt::format("over the PS links the replay of the capture as is misses it by {:.0f}%",
                       std::abs(100 * c.base.miss));
  }
  if (const double u = UnexplainedOverLinks(l); u > kMaxUnexplainedShare) {
    return fmt::format("over the PS links {:.0f}% of the step is wait they do not explain",
                       100 * u);
  }
  if (const double h = HeldTransferShare(l); h > kMaxFixedTransferShare) {
    return fmt::format("over the PS links the transfers held fixed are {:.0f}% of the step",
                       100 * h);
  }
  for (const ReplayModel::Ps& p : l.ps) {
    *link_util = std::max(*link_util, (p.in_bytes + p.out_bytes) / l.link_bytes_per_ns *
                                          double(l.workers.size()) / m.measured_step_ns);
  }
  // The links, not the CPU, bound the step: a busy CPU whose FIFO replay holds too much fixed
  // is not measured over the links either (indep report11 19006: 8 PS busy 94% of their threads,
  // links 29%; 12 PS replayed over the links -30% off their twin).
  if (100 * *link_util < rule.Param("measured_min_ps_util_pct")) {
    return fmt::format("no PS's links are loaded {:.0f}% of the step (the busiest {:.0f}%)",
                       rule.Param("measured_min_ps_util_pct"), 100 * *link_util);
  }
  return "";
}

}  // namespace

std::string FifoRefused(const ReplayModel& m, const Baseline& base) {
  // ComputeImpacts' trust gates (analyzers/replay_impact.cc): its prediction of the count would
  // be withheld, and the what-if is no better.
  if (base.replay_ns <= 0 || std::abs(base.miss) > kMaxPredictedBaselineMiss) {
    return fmt::format("the replay of the capture as is misses the measured step by {:.0f}%",
                       std::abs(100 * base.miss));
  }
  if (UnexplainedWaitShare(m) > kMaxUnexplainedShare) {
    return "the PS model explains too little of the workers' waits";
  }
  // Transfers held fixed above kMaxFixedTransferShare: ComputeImpacts replays the count with the
  // PS NICs as links or withholds it; the FIFO what-if would name a count its own prediction
  // does not back.
  if (const double held = FixedTransferShare(m); held > kMaxFixedTransferShare) {
    return fmt::format("the transfers held fixed are {:.0f}% of the step", 100 * held);
  }
  return "";
}

MeasuredPsCount MeasurePsCount(const ReplayModel& m, const Rule& rule, const ChosenLinks* links,
                               const PsCpuBound* cpu) {
  MeasuredPsCount r;
  if (m.workers.empty() || m.ps.empty() || m.measured_step_ns <= 0) {
    r.why_none = "the capture has no worker steps to replay";
    return r;
  }
  for (const ReplayModel::Ps& p : m.ps) {
    r.busiest_util = std::max(r.busiest_util, PsUtilisation(m, p, m.measured_step_ns));
  }
  // Under SyncReplicasOptimizer the accumulators and the barrier, not the PS queue alone, pace the
  // step, and the replay of another PS count has missed (indep tune seed 4027: 1 -> 2 PS of 51
  // sync workers replayed -29%, its twin +29%).
  if (m.sync) {
    r.why_none = kSyncPacesStep;
    return r;
  }
  const Baseline base = ReplayBaseline(m);
  const std::string fifo = FifoRefused(m, base);
  // The busiest PS's CPU bounds the throughput (ps_count_saturated.h): its queue, whatever the
  // order it serves it in, makes the waits; the PS queues alone, where they reproduce the step
  // and pass the FIFO gates themselves, are replayed at each count, where the FIFO replay refuses
  // or passes only the prediction's gate (its miss between kMaxBaselineMiss and
  // kMaxPredictedBaselineMiss), as the prediction of the count does (replay_impact_job.cc, the
  // bound PS's replay).
  if (cpu != nullptr && cpu->bound && (!fifo.empty() || std::abs(base.miss) > kMaxBaselineMiss)) {
    const QueuedWaits q = WithNoWaitsHeld(m);
    if (q.ok && FixedTransferShare(q.model) <= kMaxFixedTransferShare) {
      r.cpu_bound = true;
      r.queued_miss = q.base.miss;
      MeasureCandidates(q.model, q.base, rule, &r);
      return r;
    }
  }
  if (fifo.empty()) {
    MeasureCandidates(m, base, rule, &r);
    return r;
  }
  // Where the FIFO replay cannot measure, the PS links may: a PS whose NIC, not its CPU, bounds
  // the step (gen3 report6 1701: 1 PS busy 1% of its thread, its 1 Gb/s link 97% of the step in
  // transfers; 2 PS buy 50%).
  if (links == nullptr) {
    r.why_none = fifo;
    return r;
  }
  const std::string over = LinksRefused(m, *links, rule, &r.busiest_link);
  if (over.empty()) {
    r.over_links = true;
    MeasureCandidates(links->linked, links->base, rule, &r);
    return r;
  }
  // The links in a convoy (analyzers/ps_links_convoy.h): the replay holds the workers' waits on
  // them fixed, the convoy explains them (gen3 report6 1709: 12 PS, the links' wait 72% of the
  // step unexplained by the replay; 24 PS buy 62%, the convoy says 64%).
  const LinkConvoy convoy = ReadLinkConvoy(m, links->linked, links->base, ConvoyLimitsOf(rule));
  if (!convoy.convoy) {
    r.why_none = fifo + "; " + over + "; no convoy: " + convoy.why_not;
    return r;
  }
  r.over_links = r.convoy = true;
  r.busiest_link = convoy.link_share;
  r.convoy_wait = convoy.wait_share;
  r.convoy_one_way = convoy.one_way;
  r.convoy_under_band = convoy.under_band;
  const int ps = static_cast<int>(m.ps.size());
  r.placement_saving = convoy.SavingAt(ps);
  std::vector<std::pair<int, double>> saved;
  for (int n : Candidates(ps, rule)) {
    if (!PartOpsOutweighWork(m, n).empty()) continue;
    ++r.tried;
    if (r.lo == 0) r.lo = n;
    r.hi = n;
    saved.emplace_back(n, convoy.SavingAt(n));
  }
  ChooseCount(saved, rule, &r);
  return r;
}

}  // namespace tfdiag
