#include "analyzers/outlook.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "analyzers/analysis_input.h"
#include "analyzers/nic_rate.h"
#include "analyzers/outlook_choose_links.h"
#include "analyzers/outlook_links.h"
#include "analyzers/outlook_nic_words.h"
#include "analyzers/outlook_nic_worst.h"
#include "analyzers/outlook_scaled.h"
#include "analyzers/outlook_sync.h"
#include "analyzers/outlook_sync_burst.h"
#include "analyzers/outlook_verdict.h"
#include "analyzers/replay.h"
#include "analyzers/replay_concurrency.h"
#include "analyzers/replay_nic_bytes.h"
#include "analyzers/replay_ps_nodes.h"
#include "analyzers/step_graph_throughput.h"
#include "core/duration.h"

namespace tfdiag {

namespace {

// The finding the report's `Fix first` line names (report/text_findings.cc FixFirst): the
// trusted prediction that saves the most; nullptr when none saves anything.
const Finding* FixFirstFinding(const std::vector<Finding>& findings) {
  const Finding* best = nullptr;
  for (const Finding& f : findings) {
    if (!f.impact.trusted() || f.impact.saving_pct <= 0) continue;
    if (best == nullptr || f.impact.saving_pct > best->impact.saving_pct) best = &f;
  }
  return best;
}

// What set a throughput: the replay itself, or the last of the bounds after it that cut it
// (each cut replaces the one before, so exactly one is named: issue 44 item 3's review).
enum class Bound { kReplay, kSyncBurst, kSlowHost, kNic, kRecvLink, kLock };

// The replayed job: steps/ns over all workers (model units) and, after the bounds, steps/s.
struct Rate {
  double replay = 0;  // worker steps per ns in the replay
  double steps_per_s = 0;
  Bound bound = Bound::kReplay;
  int slow_ps = -1;  // SlowHostCap's PS (-1 a new one)
  int nic_ps = -1;
  double nic_rho = 0;  // the busiest PS NIC's utilisation at this rate (estimated bandwidth only)
  // A PS's receive link (RecvLinkCap, outlook_links.h): recv_ps its PS (-1: a new one),
  // recv_share its receive share in the capture (after the fix).
  int recv_ps = -1;
  double recv_share = 0;
  bool recv_convoy = false;  // set by asynchronous workers in a convoy (ConvoyStretch)
  int lock_ps = -1;          // a variable's mutex (LockCap): its PS
};

}  // namespace

Outlook ComputeOutlook(const AnalysisInput& in, const ReplayModel& m,
                       const std::vector<Finding>& findings, const ImpactRules& rules) {
  Outlook o;
  if (m.workers.empty() || m.ps.empty() || m.measured_step_ns <= 0) {
    return o;  // nothing to scale: no section, null in JSON
  }
  const int n = int(m.workers.size());
  o.captured_workers = n;
  const double step = m.worker_median_step_ns > 0 ? m.worker_median_step_ns : m.measured_step_ns;
  // Each worker's steps over their time, summed (CapturedThroughput); the workers over their
  // median step where a worker has fewer than three steps.
  std::vector<uint32_t> worker_tasks;
  for (const ReplayModel::Worker& w : m.workers) worker_tasks.push_back(w.task);
  const double done = in.graph != nullptr ? CapturedThroughput(*in.graph, worker_tasks) : 0;
  o.captured_steps_per_s = done > 0 ? done : double(n) * 1e9 / step;
  // A PS's receives are network, not CPU: where they hold no thread (replay_concurrency.h
  // ReceivesAreWaits) the replay model leaves them out of the PS's demand and threads.
  ReplayModel cap = m;
  bool receives_out = false;
  for (const TaskStats& t : in.stats.tasks) {
    receives_out =
        receives_out || (t.kind == JobKind::kPs && replay_detail::ReceivesAreWaits(in.capture, t));
  }
  // The trust gate: the model the outlook replays must reproduce the capture as it is, as a
  // prediction's must (kMaxBaselineMiss, analyzers/replay.h): the plain replay, or the replay over
  // the PS links (below) where the plain one misses.
  const Baseline plain_base = ReplayBaseline(cap);
  const bool plain_fits = plain_base.replay_ns > 0 && std::abs(plain_base.miss) <= kMaxBaselineMiss;

  // Threads: the process's CPUs where live samples give them (TF's inter-op pool defaults to
  // the cores), else the concurrency the PS's ops reached in the capture.
  std::vector<bool> cpus_known(m.ps.size(), false);
  for (size_t p = 0; p < cap.ps.size(); ++p) {
    const std::string label(in.capture.TaskLabelOf(cap.ps[p].task));
    for (const ProcessStats& ps : in.processes) {
      if (ps.task != label || ps.cpus <= 0) continue;
      int t = std::max(1, int(std::floor(ps.cpus + 0.5)));
      if (ps.threads_max > 0) t = std::min(t, ps.threads_max);
      cap.ps[p].threads = std::max(cap.ps[p].threads, t);
      cpus_known[p] = true;
    }
  }
  // PS tasks of one job are deployed alike (one image, one pod spec, TF's inter-op pool sized to
  // the same cores): a PS without CPU figures serves on as many threads as the busiest-threaded
  // PS of the job was seen using. A lightly loaded PS shows one thread in the capture whatever
  // its pool, and after a fix that moves work to it (partitioning) it would be replayed at one
  // (issue 44, mechanism 1: 56.3 -> 28.8 ms predicted, 20.4 ms real on PS with 2-4 threads).
  int job_threads = 1;
  for (const ReplayModel::Ps& p : cap.ps) job_threads = std::max(job_threads, p.threads);
  bool threads_shared = false;
  for (size_t p = 0; p < cap.ps.size(); ++p) {
    if (cpus_known[p] || cap.ps[p].threads >= job_threads) continue;
    cap.ps[p].threads = job_threads;
    threads_shared = true;
  }
  const OutlookLinks ol = ChooseOutlookLinks(in, cap, plain_fits);
  if (!plain_fits && !ol.replayed) {
    o.withheld = fmt::format(
        "the replay of the capture as it is misses the measured step by {:.0f}% ({} against the "
        "workers' median step {}){}: a model that does not reproduce the job as captured does not "
        "predict it at other worker counts",
        std::abs(100 * plain_base.miss), FormatDurationShort(plain_base.replay_ns),
        FormatDurationShort(plain_base.measured_ns), ol.refused);
    return o;
  }
  const Baseline base = ol.replayed ? ol.base : plain_base;
  const NicDemand bytes = ol.replayed ? ol.demand : PsNicBytes(in, cap);
  const std::vector<PsLinkEvidence> links = PsLinks(in, cap);
  const NicRateEstimate nic_est = ol.replayed ? ol.nic : JobNicRate(in, cap, bytes);
  const bool nic_estimated = nic_est.bytes_per_s > 0;
  // Under SyncReplicasOptimizer, the burst after the barrier on the busiest PS link grows with
  // the workers where the replay holds it fixed (outlook_sync_burst.h; not after going
  // asynchronous: the workers drift apart), and shows the link's bandwidth.
  SyncBurst burst = ReadSyncBurst(cap, bytes);
  // A link carries no more than its bandwidth: the busiest PS NIC's bytes at the captured
  // throughput are a floor under the estimate or the assumption (gen2 report3 801, 813, 824: 1
  // Gb/s links estimated at 0.57-0.65 Gb/s, the outlook under the captured throughput).
  int carried_ps = -1;
  const double carried = o.captured_steps_per_s * WorstNicBytes(cap, bytes, Fix{}, &carried_ps);
  const double nic_guess = nic_estimated           ? nic_est.bytes_per_s
                           : burst.bytes_per_s > 0 ? burst.bytes_per_s
                                                   : kAssumedNicBytesPerS;
  const bool nic_floored = carried > nic_guess;
  // Below what the link carried, the guess gives way to the least rate the PS's receives moved
  // bytes at while in flight (ReceiveBusyFloor, outlook_nic_worst.h), at least the carried rate.
  int floor_ps = -1;
  const double busy_floor =
      nic_floored ? ReceiveBusyFloor(bytes, links, o.captured_steps_per_s, &floor_ps) : 0;
  const std::string floor_task =
      floor_ps >= 0 ? std::string(in.capture.TaskLabelOf(cap.ps[size_t(floor_ps)].task)) : "";
  const double nic_bw = std::max({nic_guess, carried, busy_floor});
  const std::string nic_words =
      busy_floor > carried ? fmt::format(
                                 "estimated {:.2g} Gb/s from the rate {}'s receives moved bytes "
                                 "at in the capture",
                                 nic_bw * 8 / 1e9, floor_task)
      : nic_floored
          ? fmt::format("at least the {:.2g} Gb/s it carried in the capture", nic_bw * 8 / 1e9)
      : nic_estimated || burst.bytes_per_s > 0
          ? fmt::format("estimated {:.2g} Gb/s", nic_bw * 8 / 1e9)
          : fmt::format("assumed {:.0f} Gb/s", nic_bw * 8 / 1e9);
  const Finding* first = FixFirstFinding(findings);
  Fix fix;
  if (first != nullptr) {
    std::string what;
    fix = FindingFix(cap, *first, rules, &what);
    if (!what.empty()) o.fix_rule = first->rule_id, o.fix_subject = first->subject;
  }
  const bool with_fix = !o.fix_rule.empty();
  // PS hosts that stay slow after Fix first: the slowdowns other findings' fixes would remove
  // (slow-ps-host, a CPU quota), for SlowHostCap.
  std::vector<std::pair<uint32_t, double>> slow_hosts;
  for (const Finding& f : findings) {
    if (!with_fix || &f == first) continue;
    std::string what;
    const Fix other = FindingFix(cap, f, rules, &what);
    if (what.empty()) continue;
    for (const auto& [t, x] : other.host_speedup) {
      if (x > 1) slow_hosts.emplace_back(t, x);
    }
  }

  // With the NIC's bandwidth estimated, the replay runs each PS's answers and gradients over
  // links of that bandwidth shared by the transfers crossing them (ReplayModel::
  // link_bytes_per_ns), so the transfers slow down as workers are added; the hard bandwidth
  // bound below still applies.
  if (ol.replayed && !nic_floored) {
    cap = ol.linked;
  } else if (nic_estimated) {
    SetLinks(bytes, nic_bw, /*as_captured=*/true, &cap);
  }
  if (cap.link_bytes_per_ns > 0) burst = ReadSyncBurst(cap, bytes);  // less what links run
  // After Fix first, the replay's throughput is scaled to agree with Fix first's own prediction
  // at the captured count (fix_scale, set below): the model variant its prediction replayed (the
  // links, or no wait held) may differ from the one the outlook replays.
  double fix_scale = 1;
  // The busiest link's share of the burst after `f` (1 as is): by bytes where the capture
  // sizes them, else by the busiest PS's op time (LoadAfter).
  auto burst_scale = [&](const Fix& f) {
    if (!MovesWork(f)) return 1.0;
    int p = -1;
    const double now = WorstNicBytes(cap, bytes, Fix{}, &p);
    if (now > 0) return WorstNicBytes(cap, bytes, f, &p) / now;
    const PsLoad a = LoadAfter(cap, Fix{}), b = LoadAfter(cap, f);
    const double x = *std::max_element(a.demand.begin(), a.demand.end());
    return x > 0 ? *std::max_element(b.demand.begin(), b.demand.end()) / x : 1.0;
  };
  double step_now = 0;  // the replay's step as is at the captured count
  auto rate = [&](int workers, const Fix& f) {
    Rate r;
    const ReplayModel s = Scaled(cap, workers, !f.to_async);
    // Where the burst's growth below scales the busiest link's queue, the replay holds the
    // workers' transfers as measured (Fix::hold_burst_queue), so the queue is not scaled twice.
    Fix g = f;
    g.hold_burst_queue = burst.set;
    double t = ReplayThroughputStep(s, g, ReplaySteps(s));
    if (burst.set && !f.to_async && t > 0) {
      const double add = SyncBurstGrowthNs(burst, workers, n, burst_scale(f));
      if (add > 0 && step_now > 0 && add >= t - step_now) r.bound = Bound::kSyncBurst;
      t = std::max(t + add, t / 8);
    }
    r.replay = t > 0 ? double(workers) / t : 0;
    if (&f == &fix) r.replay *= fix_scale;
    return r;
  };
  // A table read whole by the workers every step fills the PS's transmit link, which the
  // capture neither sizes nor shows: where it saturates cannot be told (gen3 report 712 and 720,
  // +67% to +186% at 2x and 4x before this).
  const std::string whole = bytes.known ? std::string() : WholeTableRead(findings);
  if (!whole.empty()) {
    o.withheld = WholeTableReadWithheld(in, cap, whole);
    return o;
  }
  if (burst.set) {
    const ReplayModel s0 = Scaled(cap, n, true);
    step_now = ReplayThroughputStep(s0, Fix{}, ReplaySteps(s0));
  }
  const double replay_now = rate(n, Fix{}).replay;
  if (replay_now <= 0) {
    o.withheld = "the replay of the capture gives no steps";
    return o;
  }
  const double calibration = o.captured_steps_per_s / (replay_now * 1e9);
  // Fix first's prediction is the trusted figure at the captured count, replayed on the model
  // variant its gates chose (ComputeImpacts: the links, or no wait held where the held waits
  // fail a gate); the outlook replays its own, so its throughput after the fix is scaled to
  // agree there. Set on gen3 report7 (1920: 347 steps/s after hot-ps's partition at 48 workers
  // where hot-ps predicted 755, its twin 775; after-FF points within 15% 21 -> 24 of 34) and
  // gen2 report8 (11 -> 12 of 18).
  if (with_fix && first->impact.step_ns > 0 && first->impact.step_ns_after_fix > 0) {
    const double fix_now = rate(n, fix).replay;
    if (fix_now > 0) {
      fix_scale = first->impact.step_ns / first->impact.step_ns_after_fix / (fix_now / replay_now);
    }
  }
  // The model at `workers` with each PS's work per worker step as the replay runs it after `f`:
  // under sync the apply is once per global step (Scaled), after going asynchronous once per
  // worker step at its share of the aggregated apply (PlanPs in replay_plan.cc: push_ns times
  // the workers times Ps::async_apply_share).
  auto per_step = [&](int workers, const Fix& f) {
    ReplayModel s = Scaled(cap, workers, !f.to_async);
    if (s.sync && f.to_async) {
      for (ReplayModel::Ps& p : s.ps) {
        p.push_ns *= double(s.workers.size()) * std::clamp(p.async_apply_share, 0.0, 1.0);
      }
    }
    return s;
  };
  // `r` after the bounds beside the replay, for `f` at `workers`; `fixed_sps` the throughput at
  // the captured count after `f` (the captured one for no fix), which a synchronous convoy grows
  // from (RecvLinkCap). Each bound that cuts the throughput replaces the one named before it.
  auto finish = [&](Rate r, const Fix& f, int workers, double fixed_sps) {
    const double slow_cap = SlowHostCap(per_step(workers, f), f, slow_hosts, &r.slow_ps);
    if (slow_cap < r.replay) r.replay = slow_cap, r.bound = Bound::kSlowHost;
    r.steps_per_s = r.replay * 1e9 * calibration;
    // Per direction, a PS NIC carries at most its bandwidth.
    const double worst = WorstNicBytes(cap, bytes, f, &r.nic_ps);
    const double nic = worst > 0 ? nic_bw / worst : INFINITY;
    if (nic_estimated) r.nic_rho = r.steps_per_s * worst / nic_bw;
    if (nic < r.steps_per_s) r.steps_per_s = nic, r.bound = Bound::kNic;
    // After going asynchronous on the link the burst showed: workers that pulled together keep
    // meeting there, and the link stops carrying more at kRecvLinkAsyncMax of it
    // (outlook_links.h), as a PS's receive link does.
    const double async_link = kRecvLinkAsyncMax * nic;
    if (f.to_async && burst.bytes_per_s > 0 && !nic_estimated && async_link < r.steps_per_s) {
      r.steps_per_s = async_link, r.bound = Bound::kNic;
    }
    // Each PS's receive link, from the share of the capture it was receiving.
    int rp = -1;
    double rs = 0;
    bool convoy = false;
    const double link = RecvLinkCap(cap, links, f, workers, n, o.captured_steps_per_s, fixed_sps,
                                    cap.sync && !f.to_async, &rp, &rs, &convoy);
    if (link < r.steps_per_s) {
      r.steps_per_s = link, r.bound = Bound::kRecvLink, r.recv_ps = rp, r.recv_share = rs;
      r.recv_convoy = convoy;
    }
    // Each variable's mutex (use_locking applies) in an asynchronous job.
    const double lock = LockCap(cap, links, f, o.captured_steps_per_s, cap.sync && !f.to_async,
                                rules.saturated_busy, &rp);
    if (lock < r.steps_per_s) r.steps_per_s = lock, r.bound = Bound::kLock, r.lock_ps = rp;
    return r;
  };
  auto efficiency = [&](int workers, double sps) {
    return sps / o.captured_steps_per_s / (double(workers) / n);
  };
  // Worker counts: 1x, 2x, 4x, then doubling to 32x while the replay stays within ~2e7
  // services (ReplaySteps' bound at its 10 steps) and scaling has not long stopped.
  const double ps_n = double(cap.ps.size());
  auto affordable = [&](int w) { return w <= 4096 && double(w) * ps_n * 10 <= 2e7; };
  std::vector<std::pair<int, Rate>> asis;
  // The throughput at the captured count after Fix first, before the links' bound (which does
  // not bind there): under sync the convoy after the fix grows from it.
  const double fix_1x = with_fix ? finish(rate(n, fix), fix, n, o.captured_steps_per_s).steps_per_s
                                 : o.captured_steps_per_s;
  auto fixed_sps = [&](bool after) { return after ? fix_1x : o.captured_steps_per_s; };
  for (int k = 1; k <= 32; k *= 2) {
    const int w = n * k;
    if (k > 4 && !affordable(w)) break;
    OutlookPoint pt;
    pt.workers = w;
    const Rate r = finish(rate(w, Fix{}), Fix{}, w, fixed_sps(false));
    pt.steps_per_s = r.steps_per_s;
    pt.efficiency = efficiency(w, r.steps_per_s);
    if (with_fix)
      pt.steps_per_s_after_fix = finish(rate(w, fix), fix, w, fixed_sps(true)).steps_per_s;
    o.points.push_back(pt);
    asis.emplace_back(w, r);
    o.checked_up_to = w;
    if (k >= 4 && pt.efficiency < 0.3) break;
  }

  // The saturation point: bisect between the last replayed count at or above the threshold and
  // the first below it, to within ~3% of the count.
  // How the as-is saturation was found, for the confidence: "recv" (a receive link's share),
  // "convoy" (asynchronous workers in a convoy), "lock" (a variable's mutex), "" otherwise.
  std::string sat_how;
  auto name = [&](OutlookSaturation* s, int workers, const Rate& r, const Fix& f) {
    if (s == &o.saturates_at) {
      sat_how = r.bound == Bound::kLock        ? "lock"
                : r.bound == Bound::kSyncBurst ? "burst"
                : r.bound != Bound::kRecvLink  ? ""
                : r.recv_convoy                ? "convoy"
                                               : "recv";
    }
    s->workers = workers;
    const PsLoad l = LoadAfter(per_step(workers, f), f);
    int best = -1;
    double u = 0;
    for (size_t p = 0; p < l.demand.size(); ++p) {
      const double x = l.demand[p] * r.replay / double(l.threads[p]);
      if (x > u) u = x, best = int(p);
    }
    // The busiest resource where efficiency falls: a PS NIC once it is the busiest at 60% or
    // more (a shared link slows every transfer well before it is full), else a PS's CPU at 80%.
    if (r.bound == Bound::kSlowHost) {
      s->kind = "ps-cpu";
      s->task = r.slow_ps >= 0 ? in.capture.TaskLabelOf(cap.ps[size_t(r.slow_ps)].task)
                               : std::string("a new PS");
      s->resource = fmt::format("{} CPU (a slow host, kept after the fix)", s->task);
      s->utilisation = 1.0;
      return;
    }
    if (r.bound == Bound::kSyncBurst && burst.ps >= 0) {
      s->kind = "ps-nic";
      s->task = in.capture.TaskLabelOf(cap.ps[size_t(burst.ps)].task);
      s->resource = SyncBurstResource(burst, s->task);
      s->utilisation = 1.0;
      return;
    }
    if (r.bound == Bound::kLock && r.lock_ps >= 0) {
      const PsLinkEvidence& e = links[size_t(r.lock_ps)];
      s->kind = "ps-lock";
      s->task = in.capture.TaskLabelOf(cap.ps[size_t(r.lock_ps)].task);
      s->resource = fmt::format(
          "{} variable {}'s mutex (use_locking applies, one at a time: held {:.0f}% of the "
          "capture)",
          s->task, e.lock_variable, 100 * e.lock_share);
      s->utilisation = 1.0;
      return;
    }
    if (r.bound == Bound::kRecvLink) {
      s->kind = "ps-nic";
      s->task = r.recv_ps >= 0 ? in.capture.TaskLabelOf(cap.ps[size_t(r.recv_ps)].task)
                               : std::string("every PS");
      s->resource =
          fmt::format("{} NIC (its receive link: gradients arriving {:.0f}% of the capture{})",
                      s->task, 100 * r.recv_share,
                      cap.sync && !f.to_async ? ", pulled and pushed in bursts"
                      : r.recv_convoy ? ", pulled and pushed in bursts by workers in a convoy"
                                      : "");
      s->utilisation = 1.0;
      return;
    }
    const bool nic_bound = r.bound == Bound::kNic;
    if (r.nic_ps >= 0 && (nic_bound || r.nic_rho >= std::max(0.6, u))) {
      s->kind = "ps-nic";
      s->task = MovesWork(f) ? "every PS" : in.capture.TaskLabelOf(cap.ps[size_t(r.nic_ps)].task);
      s->resource = fmt::format("{} NIC ({})", s->task, nic_words);
      s->utilisation = nic_bound ? 1.0 : std::min(1.0, r.nic_rho);
      return;
    }
    s->utilisation = std::min(1.0, u);
    if (best >= 0 && u >= 0.8) {
      s->kind = "ps-cpu";
      s->task = in.capture.TaskLabelOf(cap.ps[size_t(best)].task);
      s->resource = fmt::format("{} CPU ({} thread{})", s->task, l.threads[size_t(best)],
                                l.threads[size_t(best)] == 1 ? "" : "s");
    } else if (m.sync && !f.to_async) {
      s->kind = "sync-barrier";
      s->resource =
          fmt::format("the sync barrier (each step waits for the slowest of {} workers)", workers);
    } else {
      s->kind = "other";
      s->resource = "no single resource (waits the replay spreads over the PS)";
    }
  };
  auto saturation = [&](const Fix& f, bool after, OutlookSaturation* s) {
    int lo = n, hi = 0;
    for (const OutlookPoint& pt : o.points) {
      const double sps = after ? pt.steps_per_s_after_fix : pt.steps_per_s;
      const double base_sps =
          after ? o.points.front().steps_per_s_after_fix : o.captured_steps_per_s;
      const double eff = sps / base_sps / (double(pt.workers) / n);
      if (eff >= kOutlookMinEfficiency) {
        lo = pt.workers;
      } else {
        hi = pt.workers;
        break;
      }
    }
    if (hi == 0) return;
    const double base_sps = after ? o.points.front().steps_per_s_after_fix : o.captured_steps_per_s;
    Rate at_hi = finish(rate(hi, f), f, hi, fixed_sps(after));
    while (hi - lo > std::max(1, lo / 32)) {
      const int mid = lo + (hi - lo) / 2;
      const Rate r = finish(rate(mid, f), f, mid, fixed_sps(after));
      if (r.steps_per_s / base_sps / (double(mid) / n) >= kOutlookMinEfficiency) {
        lo = mid;
      } else {
        hi = mid, at_hi = r;
      }
    }
    name(s, hi, at_hi, f);
  };
  saturation(Fix{}, false, &o.saturates_at);
  if (with_fix) saturation(fix, true, &o.saturates_at_after_fix);

  // What the capture could not measure.
  const int64_t per_worker = m.steps / std::max<int64_t>(1, n);
  std::vector<std::string> weak, low;
  bool threads_assumed = false;
  for (size_t p = 0; p < cap.ps.size(); ++p) threads_assumed |= !cpus_known[p];
  if (threads_assumed) {
    o.assumptions.push_back(fmt::format(
        "PS threads: the concurrency each PS's ops reached in the capture (no thread or core "
        "counts in it){}; a PS with more free cores may serve more at once",
        threads_shared ? fmt::format(", at least the {} the busiest-threaded PS reached (PS "
                                     "deployed alike)",
                                     job_threads)
                       : ""));
  }
  NicAssumed na;
  na.known = bytes.known;
  na.mirrored = bytes.mirrored;
  na.estimated = nic_estimated;
  na.sync = m.sync;
  na.bytes_per_s = nic_bw;
  na.est = nic_est;
  na.burst_bytes_per_s = burst.bytes_per_s;
  na.floored = nic_floored;
  na.busy_floor = busy_floor > carried;
  na.carried_bytes_per_s = carried;
  if (nic_floored) na.carried_task = in.capture.TaskLabelOf(cap.ps[size_t(carried_ps)].task);
  na.floor_task = floor_task;
  AppendNicAssumptions(na, &o.assumptions);
  if (receives_out) {
    o.assumptions.push_back(
        "PS receives: the RecvTensor rows on the PS (gradients arriving) run beside its other ops, "
        "so they are taken as network time, not as its CPU's work or threads");
  }
  const std::string recv_links = RecvLinksAssumption(in, cap, links, nic_estimated);
  if (!recv_links.empty()) o.assumptions.push_back(recv_links);
  if (with_fix && std::abs(fix_scale - 1) > 0.05) {
    o.assumptions.push_back(fmt::format(
        "after Fix first: the outlook's replay of the fix is scaled by {:.2f} at every worker "
        "count, to agree at {} workers with Fix first's own prediction (replayed on the model its "
        "evidence chose: the PS links, or no wait held)",
        fix_scale, n));
  }
  o.assumptions.push_back(
      PsPacked(m.ps_node)
          ? "nodes: each PS's NIC replayed as its own, though the PS's nodes (the pod list or "
            "the pods' processes) put some PS on one node (the outlook does not model PS sharing "
            "a NIC; the PS links' convoy does); added workers on machines of their own"
      : m.ps_node.empty()
          ? "nodes: each PS on a node of its own (the capture does not say which PS share a "
            "node's cores or NIC); added workers on machines of their own"
          : "nodes: each PS on a node of its own (the pod list's or the pods' processes' "
            "nodes); added workers on machines of their own");
  // The burst (above) reads the held wait as link time that grows with the workers; the
  // capture cannot tell it from a per-transfer latency, which does not grow (review v65b item 1:
  // an indepsim job on 100 Gb/s with 0.25-0.4 ms latency read -10%/-26% at 2x/4x, 0% before), so
  // the wait stays unexplained for the confidence: the guess does not clear its own warning.
  const double unexplained = UnexplainedWaitShare(m);
  if (per_worker < 3) low.push_back(fmt::format("only {} step(s) per worker", per_worker));
  if (unexplained > 0.15) {
    low.push_back(fmt::format("{:.0f}% of the step is wait the PS model does not explain, {}",
                              100 * unexplained,
                              burst.set ? "read as the burst after the sync barrier"
                                        : "held fixed as workers are added"));
  }
  // The replay's throughput at the captured count above the measured one (its median step
  // matched): its PS are busier than the capture's, and it saturates them early. gen3 and gen2
  // tune/check sets and the independent report11/12: only indep 20020 (+26%, its held waits fitted
  // to the out-of-order replay; -14%/-26% at 2x/4x with confidence high) and gen2 report7 1614
  // (+13%; -10%/-29%) exceed kMaxBaselineMiss, both under-predicted.
  if (replay_now * 1e9 / o.captured_steps_per_s - 1 > kMaxBaselineMiss) {
    low.push_back(fmt::format(
        "the replay of the capture as is gives {:.0f}% more steps/s than measured (its median "
        "step matches): its PS are busier than the capture's, so they saturate early in it",
        100 * (replay_now * 1e9 / o.captured_steps_per_s - 1)));
  }
  if (std::abs(base.miss) > 0.05) {
    weak.push_back(fmt::format("the replay of the capture as is is {:+.0f}% off the measured step",
                               100 * base.miss));
  }
  const OutlookSaturation& sat = o.saturates_at;
  if (burst.set) {
    o.assumptions.push_back(
        SyncBurstAssumption(burst, in.capture.TaskLabelOf(cap.ps[size_t(burst.ps)].task)));
    low.push_back(kSyncBurstWeak);
  }
  if (sat_how == "lock") {
    weak.push_back(
        "the saturating mutex is inferred from overlapping apply rows of one variable "
        "(use_locking)");
  } else if (sat_how == "convoy") {
    weak.push_back(
        "the workers' convoy is read from the PS receives stretched by sharing (every PS's "
        "alike, or one PS's link carrying most of the workers' sends), and its bursts are taken "
        "to grow with the workers as under SyncReplicasOptimizer (tuned on simulated jobs)");
  } else if (sat_how == "recv" && m.sync) {
    weak.push_back(
        "the saturating receive link's stretched share is measured, and the barrier's convoy is "
        "taken to grow with the workers (pulls and pushes k times as long at k times the "
        "workers)");
  } else if (sat_how == "recv") {
    weak.push_back(fmt::format(
        "the saturating receive link's share is measured, where it stops carrying more is the "
        "share a convoy of workers leaves it on simulated jobs ({:.0f}% asynchronous)",
        100 * kRecvLinkAsyncMax));
  } else if (sat_how == "burst") {
  } else if (sat.kind == "ps-nic" && !nic_estimated && burst.bytes_per_s <= 0) {
    low.push_back("the saturating NIC's bandwidth is assumed");
  } else if (sat.kind == "ps-nic") {
    weak.push_back("the saturating NIC's bandwidth is estimated from transfer times");
  } else if (!bytes.known) {
    weak.push_back("no transfer sizes: the PS NICs are not bounded");
  }
  if (sat.kind == "ps-cpu") {
    for (size_t p = 0; p < cap.ps.size(); ++p) {
      if (in.capture.TaskLabelOf(cap.ps[p].task) != sat.task || cpus_known[p]) continue;
      const double busy = (cap.ps[p].pull_ns + cap.ps[p].push_ns) * n /
                          double(std::max(1, cap.ps[p].threads)) / m.measured_step_ns;
      if (busy < 0.5) {
        weak.push_back(
            fmt::format("{}'s threads are the {} its ops reached at {:.0f}% load in the capture",
                        sat.task, cap.ps[p].threads, 100 * busy));
      }
    }
  }
  o.confidence = !low.empty() ? "low" : !weak.empty() ? "medium" : "high";
  for (const std::string& x : low) weak.insert(weak.begin(), x);
  o.confidence_why = fmt::format("{}", fmt::join(weak, "; "));
  o.set = true;

  o.verdict = OutlookVerdict(o);
  return o;
}

}  // namespace tfdiag
