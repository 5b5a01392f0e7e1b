// The trust gates and the saturated PS's bounds of ComputeImpacts (analyzers/replay_impact.cc),
// moved out of it as they were (analyzers/replay_impact_gates.h).
#include "analyzers/replay_impact_gates.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "analyzers/replay_concurrency.h"
#include "analyzers/replay_cores.h"
#include "analyzers/replay_fix_reach.h"
#include "analyzers/replay_impact_weak.h"
#include "core/duration.h"

namespace tfdiag::replay_detail {

bool HeldTransfersOnceAsync(const ReplayModel& m, const ImpactReplay& r, const Fix& fix) {
  return fix.to_async && m.sync && r.held > kMaxFixedTransferShare;
}

bool KeepsPullTiming(const ReplayModel& m, const Fix& fix) {
  if (!fix.prefetch_only()) return false;
  for (uint32_t task : fix.prefetch_workers) {
    const auto w = std::find_if(m.workers.begin(), m.workers.end(),
                                [&](const ReplayModel::Worker& x) { return x.task == task; });
    if (w == m.workers.end() || !w->pull_beside_input) return false;
  }
  return true;
}

bool UnexplainedGate(const ImpactReplay& r) {
  return std::abs(r.base.miss) <= kMaxPredictedBaselineMiss &&
         r.unexplained_here > kMaxUnexplainedShare && !r.drops_wait;
}

std::string WithheldBeforeReplay(const ReplayModel& m, const ImpactJob& job, const ImpactReplay& r,
                                 const Fix& fix) {
  // Trust, measured: a model that does not reproduce the job as captured predicts nothing.
  if (std::abs(r.base.miss) > kMaxPredictedBaselineMiss) {
    return fmt::format(
               "the replay of the capture as it is misses the measured step by {:.0f}% ({} against "
               "the workers' median step {})",
               std::abs(100 * r.base.miss), FormatDurationShort(r.pnow),
               FormatDurationShort(r.base.measured_ns)) +
           r.not_queued;
  }
  // Trust, measured (2): the as-is replay matches by construction once each worker keeps the
  // wait the PS model does not explain as a fixed delay; when that unexplained wait is a large
  // share of the step, a fix acts on time the model holds fixed (a fix that moves the
  // workers' arrivals at a PS changes that PS's queue too), and the prediction is withheld
  // rather than misstated.
  // A fix that removes exposed receive time itself (gather-on-worker, oversharding: recv_cut)
  // acts on that wait directly, and is replayed.
  if (UnexplainedGate(r)) {
    return fmt::format(
               "the PS model explains too little of the workers' waits: {} of the median {} step "
               "is wait that a PS serving requests {} at their op time{} does not explain (its "
               "network, gaps between its ops, or requests served out of arrival order)",
               FormatDurationShort(r.unexplained_here * m.measured_step_ns),
               FormatDurationShort(m.measured_step_ns),
               m.any_order && !r.use_links ? "in no particular order" : "in arrival order",
               r.use_links ? " and the PS NICs replayed as links" : "") +
           r.not_queued;
  }
  // Trust, measured (3): the transfers held fixed (the FIFO replay's, or what the links do not
  // explain). Where they are a large share of the step, a fix that moves load between NICs,
  // or makes workers pull at other times, changes them, and no prediction is made. Not for
  // SyncReplicasOptimizer's removal (HeldTransfersOnceAsync): it weakens the prediction instead;
  // nor for a prefetch of workers that pull beside their input (KeepsPullTiming).
  if (r.held > kMaxFixedTransferShare && fix.recv_cut.empty() &&
      !HeldTransfersOnceAsync(m, r, fix) && !KeepsPullTiming(m, fix)) {
    return fmt::format(
               "the transfers held fixed are {:.0f}% of the median {} step: above {:.0f}%, a fix "
               "that moves load between NICs or changes when workers pull changes them ({})",
               100 * r.held, FormatDurationShort(m.measured_step_ns), 100 * kMaxFixedTransferShare,
               job.no_links) +
           r.not_queued;
  }
  // The queues-alone replay's guards for a fix adding PS (above), on the replay with the waits
  // held where the PS queues make more than kReplacedWaitShare of the step for pulls no receive
  // op spans (gen2, whose receive ops span only the transfer): on PS threads whose cores the
  // capture does not show, or a load the PS share unevenly, those queues after the fix are not
  // the captured ones (gen2 report11 2400, 1 -> 18 PS on 3 threads, 67% of the step: -64% off
  // its twin; 2407, 1 -> 34 PS on 8 threads, 25%: +159%; report9 2009, 5 PS of 1 thread, ps:0
  // 46% of the load, 36%: -42%; report4 1014, 48%: -25%). Not where the receive ops span the
  // wait (the independent suite), nor where the PS answer before the compute needs it (gen2
  // report11 2418, 3 -> 5 PS on 5 threads, 0%: -3%, as before).
  if (r.adds_ps && r.queued == nullptr && !r.use_links && job.unspanned_pull > kReplacedWaitShare &&
      !job.added_queues_known) {
    return fmt::format(
               "{:.0f}% of the median {} step is the workers' wait for pulls that no receive op "
               "spans, which the replay makes from the PS queues alone",
               100 * job.unspanned_pull, FormatDurationShort(m.measured_step_ns)) +
           (job.cores_shown ? "; but " + job.uneven_load
                            : std::string("; but the fix adds PS whose cores behind their threads "
                                          "the capture does not show"));
  }
  return std::string();
}

std::string WithheldByReceiveLink(const AnalysisInput& in, const ReplayModel& m,
                                  const ImpactReplay& r, const Fix& fix, double after,
                                  double saturated_busy, std::vector<double>* recv_shares) {
  // Trust, measured (4): a PS's receives (the gradients arriving over its link, where the replay
  // takes them for the link's: replay_concurrency.h ReceiveBusyShare) fill a share of the
  // capture that a shorter step compresses. Where the fix
  // leaves the PS's bytes where they are and the predicted step would need its link more than
  // saturated_busy of the time, the link, which the replay does not size from the receives,
  // bounds the step, and no prediction is made (gen2 dev seeds 100 and 117: going asynchronous
  // predicted -51% and -52%, twins -5% and -7%, the PS receiving 44-51% of the capture).
  if (after < r.pnow) {
    const TaskStats* full = nullptr;
    double need = 0, full_share = 0;
    for (size_t i = 0; i < m.ps.size(); ++i) {
      const ReplayModel::Ps& p = m.ps[i];
      const TaskStats* t = in.stats.Find(in.capture.TaskLabelOf(p.task));
      if (t == nullptr || MovesPsBytes(fix, p.task) || t->busy_pct <= 0) continue;
      if ((*recv_shares)[i] < 0) {
        const TimeNs own_span = TimeNs(double(t->busy_ns) * 100 / t->busy_pct);
        (*recv_shares)[i] = ReceiveBusyShare(in.capture, *t, own_span);
      }
      const double share = (*recv_shares)[i];
      const double u = share * r.pnow / after;
      if (u > need) need = u, full = t, full_share = share;
    }
    if (full != nullptr && need > saturated_busy) {
      return fmt::format(
          "{} receives gradients {:.0f}% of the capture (its receives in flight); at the {} "
          "step the replay predicts its link would be receiving {:.0f}% of the time, over the "
          "{:.0f}% at which a PS is saturated: the link bounds the step, and the replay does not "
          "size it from the receives",
          full->label, 100 * full_share, FormatDurationShort(r.scale_ns * after / r.pnow),
          100 * need, 100 * saturated_busy);
    }
  }
  return std::string();
}

std::string WithheldByPartitionWait(const ReplayModel& m, const ImpactJob& job,
                                    const ImpactReplay& r, const Fix& fix, double after) {
  // Trust, measured (5): a partition moves the work of the PS the workers queue at, and the
  // wait the PS model does not explain (held fixed: Worker::recv_ns, tail_ns) sits beside that
  // queue; where it is more than kMaxUnexplainedShare of the predicted step (not only of the
  // measured one, the gate above), whether it stays decides the prediction, and none is made
  // (gen2 report12 2626: 21% of a 63.9 ms step held, 37% of the predicted 36.7 ms, +61% off its
  // twin; 2614: 26% held, +44%; gen3 report11 2713: 13% held, 16% of the predicted step, +16%).
  // A new PS count re-partitions every variable over the PS (the fix text's
  // fixed_size_partitioner(num_ps)): it moves that work too. Its replay scales the wait with the
  // PS queue (ReplayMedianStep) but over the PS links, where the wait is held as it is (gen2
  // report39 8212 and report41 8610, spent: 30% and 26% of the predicted step held, +69% and
  // +34% off their twins).
  const bool held_through_count = fix.ps_count > 0 && r.use_links;
  if ((!fix.partition.empty() || held_through_count) && r.queued == nullptr) {
    // The in-order PS queue's (the checks' figure), over links too: what the links explain of
    // it is queueing on the NICs of the PS the partition unloads as well (2614: 26% of the step,
    // less over the links).
    const double held_wait_ns = std::max(job.unexplained, r.unexplained_here) * m.measured_step_ns;
    const double after_ns = r.scale_ns * after / r.pnow;
    if (after_ns > 0 && held_wait_ns > kMaxUnexplainedShare * after_ns) {
      return fmt::format(
          "{} of the median {} step is wait the PS queue does not explain{}, held fixed: "
          "{:.0f}% of the {} step the replay predicts, over {:.0f}%; the fix moves the work of "
          "the PS that wait may sit behind, so whether it stays decides the prediction",
          FormatDurationShort(held_wait_ns), FormatDurationShort(m.measured_step_ns),
          r.use_links ? " (the PS NICs replayed as links explain part of it)" : "",
          100 * held_wait_ns / after_ns, FormatDurationShort(after_ns), 100 * kMaxUnexplainedShare);
    }
  }
  return std::string();
}

namespace {

// The words for a step bounded at a PS's saturation point: `busy` names the PS and how busy it
// would be ("..., so the step is"), `floor_ns` the step at which it is `limit` busy (ratio),
// `step_ns` the step as is. `at_saturation`: the floor is the prediction (the reason for medium);
// otherwise the reason to withhold, with the most the fix buys.
std::string SaturationWords(const std::string& busy, double limit, double floor_ns, double step_ns,
                            bool at_saturation) {
  const char* past =
      "how far past that the step lands depends on how the PS serves past saturation, which the "
      "capture does not show";
  if (at_saturation) {
    return fmt::format(
        "the step predicted where {} taken at least where it is {:.0f}% busy ({}); {} (the range "
        "reaches {:.0f}% under it and {:.0f}% over, where the twins of spent sets landed but one)",
        busy, 100 * limit, FormatDurationShort(floor_ns), past, 100 * (1 - kSaturationLow),
        100 * (kSaturationHigh - 1));
  }
  return fmt::format("{} at least {} (the fix buys at most {:.0f}%), and {}", busy,
                     FormatDurationShort(floor_ns),
                     std::max(0.0, 100 * (step_ns - floor_ns) / step_ns), past);
}

}  // namespace

bool PredictsAtSaturation(const ReplayModel& m, const Fix& fix, double unexplained) {
  return unexplained <= kMaxUnexplainedShare && fix.host_speedup.empty() && EnoughToPredict(m);
}

std::string BoundBySaturatedPs(const AnalysisInput& in, const ReplayModel& m, const Fix& fix,
                               double saturated_busy, const ImpactReplay& r, double after,
                               Impact* im, double* floor_ns, bool* at_saturation) {
  *floor_ns = 0;
  *at_saturation = false;
  // A PS saturated in the capture that the fix leaves as it is bounds the step at the
  // measured one: the calibration (measured / replay as is) is not carried across that bound.
  double sat_u = 0, sat_add = 0;
  const int sat = SaturatedUntouchedPs(m, fix, saturated_busy, &sat_u, im->step_ns, &sat_add);
  // A PS whose work the fix changes only by a gather moved beside its table (Fix::ps_demand_add)
  // is judged on its work after the fix, and the text says so.
  auto work_after = [](double add) {
    return add == 0 ? std::string("whose work the fix leaves as it is")
                    : fmt::format(
                          "whose work the fix changes only by the gathers it moves ({}{} "
                          "per worker step)",
                          add > 0 ? "+" : "-", FormatDurationShort(std::abs(add)));
  };
  std::string bound;
  if (sat >= 0 && im->step_ns_after_fix < im->step_ns) {
    im->step_ns_after_fix = im->step_ns;
    bound = fmt::format(
        "; bounded by {}, saturated in the capture ({:.0f}% of the step is its op time{}, on {} "
        "thread(s)), {}: it serves no faster after the fix (the replay alone gives {})",
        in.capture.TaskLabelOf(m.ps[size_t(sat)].task), 100 * sat_u,
        sat_add == 0 ? "" : " after the fix", m.ps[size_t(sat)].threads, work_after(sat_add),
        FormatDurationShort(r.scale_ns * after / r.pnow));
  } else if (sat < 0) {
    // The same bound after the fix: a PS the fix leaves as it is that would be saturated at
    // the predicted step serves it at most at saturated_busy, so the step is at least its op
    // time per worker step x the workers / its threads / saturated_busy (independent suite,
    // tune seed 1016: ps:0 87% busy, prefetch predicted -10% at 97% of the new step, the
    // prefetched twin 0%). How far past that floor the step lands depends on how the PS serves
    // past saturation, which a capture of it unsaturated does not show: gen3 report12 2918 and
    // 2925 (spent), their twins 2.06x and 1.46x the floor (2925's slower than the job as is),
    // indep report17 25008's 0.85x (session 60's binary; session 35's read 46%, 30% and 19%). Where
    // the PS queue explains the waits (PredictsAtSaturation), the floor is the prediction, at most
    // medium; elsewhere (2918) it is none: withheld, its saving a ceiling that may still lower the
    // finding's severity (LowerSeverityByImpact).
    double post_u = 0, post_add = 0;
    const int post =
        SaturatedUntouchedPs(m, fix, saturated_busy, &post_u, im->step_ns_after_fix, &post_add);
    if (post >= 0) {
      *floor_ns = im->step_ns_after_fix * post_u / saturated_busy;
      *at_saturation = PredictsAtSaturation(m, fix, r.unexplained_here);
      const std::string busy = fmt::format(
          "{}, {}, saturates: at the replay's {} it would be busy {:.0f}% of the step on {} "
          "thread(s), over the {:.0f}% at which a PS is saturated, so the step is",
          in.capture.TaskLabelOf(m.ps[size_t(post)].task), work_after(post_add),
          FormatDurationShort(im->step_ns_after_fix), 100 * post_u, m.ps[size_t(post)].threads,
          100 * saturated_busy);
      bound = SaturationWords(busy, saturated_busy, *floor_ns, im->step_ns, *at_saturation);
    }
  }
  return bound;
}

std::string BoundByBusierPs(const ReplayModel& m, const Fix& fix, const FixPlan& plan,
                            const ImpactReplay& r, Impact* im, double* floor_ns,
                            bool* at_saturation) {
  if (plan.busy_floor_ns <= 0 || im->step_ns_after_fix <= 0 ||
      plan.busy_floor_ns <= im->step_ns_after_fix) {
    return std::string();
  }
  *floor_ns = plan.busy_floor_ns;
  // Threads over the cores fitted from the ops' slowdown (replay_cores.h): the PS's capacity is
  // its cores, and its ops slow further under the added load, so the floor is optimistic (indep
  // report25 and 26, spent: 33004 and 34023, 8 threads on 4 and 2 cores, the floor 20% and 24%
  // under their twins; 41010, 2 threads on 1 core, 3% under). A floor over the step as is: the fix
  // buys nothing before the PS saturates, and how much slower it makes the step the floor does not
  // tell, the applies' time per push it is read from overstating it (34013, 34014, 38021, 40023,
  // 42013, 45006: floors 1-48% over the step, their twins from 2.4% faster to 22% slower). Both
  // are withheld, the floor kept as the most the fix buys: each of those six twins bought under
  // 5%, so the finding LOW that the floor makes it (LowerSeverityByImpact) is right on each.
  const bool fitted = ThreadsOverFittedCores(m);
  const bool buys = *floor_ns < im->step_ns;
  *at_saturation = buys && !fitted && PredictsAtSaturation(m, fix, r.unexplained_here);
  const double busy_pct = 100 * plan.busy_floor_ns * plan.busy_limit / im->step_ns_after_fix;
  if (!*at_saturation) {
    im->floor_from = fmt::format("{} would be {:.0f}% busy at {}", plan.busy_what,
                                 100 * plan.busy_limit, FormatDurationShort(*floor_ns));
  }
  const std::string busy = fmt::format(
      "{}, saturates: at the replay's {} it would be busy {:.0f}% of the step, over the {:.0f}% "
      "at which a PS is saturated{}, so the step is",
      plan.busy_what, FormatDurationShort(im->step_ns_after_fix), busy_pct, 100 * plan.busy_limit,
      fitted ? " (its capacity then the fitted cores', and its ops slower under the added load)"
             : "");
  return SaturationWords(busy, plan.busy_limit, *floor_ns, im->step_ns, *at_saturation);
}

}  // namespace tfdiag::replay_detail
