// ComputeImpacts (analyzers/replay.h): each finding's fix turned into a replay, the replay of the
// capture as is checked against the measured step first (issue 35), and the prediction given
// with its range and confidence, or withheld with the reason.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <utility>

#include "analyzers/format_range.h"
#include "analyzers/link_queue.h"
#include "analyzers/ps_links_convoy.h"
#include "analyzers/replay.h"
#include "analyzers/replay_concurrency.h"
#include "analyzers/replay_dispatch.h"
#include "analyzers/replay_fix_reach.h"
#include "analyzers/replay_impact_job.h"
#include "analyzers/replay_impact_weak.h"
#include "core/duration.h"

namespace tfdiag {

Fix FindingFix(const ReplayModel& m, const Finding& f, const ImpactRules& rules,
               std::string* what) {
  FixPlan plan = rules.plan ? rules.plan(m, f) : FixPlan{};
  *what = std::move(plan.what);
  return what->empty() ? Fix{} : std::move(plan.fix);
}

void ComputeImpacts(const AnalysisInput& in, const ReplayModel& m, const ImpactRules& rules,
                    std::vector<Finding>* findings) {
  const replay_detail::ImpactJob job = replay_detail::ReadImpactJob(in, m, rules);
  // The PS NICs' load and bandwidth for the links' queueing check (analyzers/link_queue.h), read
  // on the first prediction that needs it: under sync, JobNicRate fits the rate by replays.
  std::optional<JobLinks> job_links;
  // Each PS's receives in flight over its own span (replay_concurrency.h ReceiveBusyShare, two
  // sweeps of its ops where TaskStats did not keep them apart), read once for the link check (4)
  // of every prediction; -1 not read yet.
  std::vector<double> recv_shares(m.ps.size(), -1);
  for (Finding& f : *findings) {
    Impact& im = f.impact;
    im.set = true;
    im.step_ns = m.measured_step_ns;
    im.step_ns_after_fix = m.measured_step_ns;
    im.method = "none";
    im.confidence = "low";
    // The finding's rule's fix model (each in its rule's file; the registry hands it over).
    FixPlan plan = rules.plan ? rules.plan(m, f) : FixPlan{};
    const Fix fix = std::move(plan.fix);
    const std::string what = std::move(plan.what), why_none = std::move(plan.why);
    if (what.empty()) {
      im.why = in.capture.ops.empty()
                   ? "no timeline: a manifest or live samples alone do not show the step to replay"
               : !why_none.empty() ? why_none
                                   : "the replay does not model this fix yet";
      continue;
    }
    // A prediction withheld: the reason, and in `why` the fix modelled and the checks.
    const auto withhold = [&im, &what, &job](std::string reason) {
      im.withheld = std::move(reason);
      im.why = im.withheld + "; the fix modelled: " + what + "; " + job.checks;
    };
    const replay_detail::ImpactReplay r = replay_detail::ChooseImpactReplay(m, job, fix, plan);
    // The step the prediction is scaled from, and the base of its saving (Impact::step_ns).
    im.step_ns = im.step_ns_after_fix = r.scale_ns;
    if (m.workers.empty() || r.pnow <= 0) {
      im.why = "the capture has no worker steps to replay";
      continue;
    }
    im.baseline_miss_pct = 100 * r.base.miss;
    // The PS links in a convoy, or one saturated one way: a fix adding PS predicted from them
    // (ps_links_convoy.h, ps_link_saturated.h) wherever the links were built, not only where
    // the FIFO transfers are over kMaxFixedTransferShare: each checks its own links replay of
    // the capture as is (gen3 report7 1901, 1920: withheld before, -2% and +3% of their twins).
    if (r.adds_ps && job.linked.link_bytes_per_ns > 0 && fix.recv_cut.empty() &&
        PredictFromConvoy(m, job.linked, job.linked_base, fix, job.spread, what, plan.estimated,
                          job.checks, rules.convoy, &im)) {
      continue;
    }
    // Trust, measured: a model that does not reproduce the job as captured predicts nothing.
    if (std::abs(r.base.miss) > kMaxBaselineMiss) {
      withhold(
          fmt::format(
              "the replay of the capture as it is misses the measured step by {:.0f}% ({} against "
              "the workers' median step {})",
              std::abs(100 * r.base.miss), FormatDurationShort(r.pnow),
              FormatDurationShort(r.base.measured_ns)) +
          r.not_queued);
      continue;
    }
    // Trust, measured (2): the as-is replay matches by construction once each worker keeps the
    // wait the PS model does not explain as a fixed delay; when that unexplained wait is a large
    // share of the step, a fix acts on time the model holds fixed (a fix that moves the
    // workers' arrivals at a PS changes that PS's queue too), and the prediction is withheld
    // rather than misstated.
    // A fix that removes exposed receive time itself (gather-on-worker, oversharding: recv_cut)
    // acts on that wait directly, and is replayed.
    if (r.unexplained_here > kMaxUnexplainedShare && !r.drops_wait) {
      withhold(
          fmt::format(
              "the PS model explains too little of the workers' waits: {} of the median {} step is "
              "wait that a PS serving requests {} at their op time{} does not explain "
              "(its network, gaps between its ops, or requests served out of arrival order)",
              FormatDurationShort(r.unexplained_here * m.measured_step_ns),
              FormatDurationShort(m.measured_step_ns),
              m.any_order && !r.use_links ? "in no particular order" : "in arrival order",
              r.use_links ? " and the PS NICs replayed as links" : "") +
          r.not_queued);
      continue;
    }
    // Trust, measured (3): the transfers held fixed (the FIFO replay's, or what the links do not
    // explain). Where they are a large share of the step, a fix that moves load between NICs,
    // or makes workers pull at other times, changes them, and no prediction is made.
    if (r.held > kMaxFixedTransferShare && fix.recv_cut.empty()) {
      withhold(fmt::format(
          "the transfers held fixed are {:.0f}% of the median {} step: above {:.0f}%, a fix "
          "that moves load between NICs or changes when workers pull changes them ({})",
          100 * r.held, FormatDurationShort(m.measured_step_ns), 100 * kMaxFixedTransferShare,
          job.no_links));
      continue;
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
    if (r.adds_ps && r.queued == nullptr && !r.use_links &&
        job.unspanned_pull > replay_detail::kReplacedWaitShare && !job.added_queues_known) {
      withhold(
          fmt::format(
              "{:.0f}% of the median {} step is the workers' wait for pulls that no receive op "
              "spans, which the replay makes from the PS queues alone",
              100 * job.unspanned_pull, FormatDurationShort(m.measured_step_ns)) +
          (job.cores_shown ? "; but " + job.uneven_load
                           : std::string("; but the fix adds PS whose cores behind their threads "
                                         "the capture does not show")));
      continue;
    }
    // A fix judged on the job's throughput (an asynchronous job's straggler slows only itself):
    // what it buys is the job's steps/s of all workers, shown as the step at that throughput
    // (issue 35).
    const bool throughput = plan.throughput;
    const double after = throughput ? r.pnow * ReplayThroughputStep(*r.model, fix, job.steps) /
                                          ReplayThroughputStep(*r.model, Fix{}, job.steps)
                                    : ReplayMedianStep(*r.model, fix, job.steps);
    // Once asynchronous, the barrier no longer holds the workers to one step: workers of unequal
    // speed step at their own rates, and where a quarter of them or more step over
    // kSplitRateShare under the replayed median and a quarter over it above, the median step
    // falls in the gap between them, where which steps lie either side decides it (gen2 report12
    // 2625: 2 workers, one at half speed, going asynchronous predicted -15% off its twin, high).
    // At most medium.
    constexpr double kSplitRateShare = 0.10;
    std::string split_rates;
    if (fix.to_async && m.sync && !throughput && m.workers.size() >= 2 && after > 0) {
      const std::vector<double> means = ReplayWorkerMeanSteps(*r.model, fix, job.steps);
      size_t fast = 0, slow = 0;
      for (const double x : means) {
        fast += x < (1 - kSplitRateShare) * after ? 1 : 0;
        slow += x > (1 + kSplitRateShare) * after ? 1 : 0;
      }
      if (fast > 0 && slow > 0 && 4 * fast >= means.size() && 4 * slow >= means.size()) {
        split_rates = fmt::format(
            "once asynchronous the workers step at their own rates: {} of {} replayed more than "
            "{:.0f}% under the median step and {} more than {:.0f}% over it, so the median falls "
            "between them",
            fast, means.size(), 100 * kSplitRateShare, slow, 100 * kSplitRateShare);
      }
    }
    // Sensitivity to what the capture cannot show: a fix that adds part ops (partitioning, a new
    // PS count) charges each its PS's fixed cost per op, taken from its NoOps (a few us); TF's
    // executor dispatch per op is about 10-20 us, so the fix is replayed again at
    // kPartOpDispatchNs per op. Where the two differ by more than 25% the prediction is withheld,
    // by more than 10% it is at most medium (independent suite, tune seeds: a 6 -> 8 PS job of
    // 5.8 ms steps predicted 5.7 ms, its twin, 15 us per part op, 12.1 ms).
    double sensitivity = 0;
    if (fix.ps_count > 0 || !fix.partition.empty()) {
      const ReplayModel dear = AtDispatchCost(*r.model);
      const double after_dear = ReplayMedianStep(dear, fix, job.steps);
      sensitivity = after > 0 ? std::abs(after_dear - after) / after : 0;
      if (sensitivity > kMaxPartOpSensitivity) {
        withhold(fmt::format(
            "the fix adds part ops whose fixed cost the capture does not show: at {} per part op "
            "(TF's executor dispatch) the replay gives {}, at the PS's NoOp time {} ({:.0f}% "
            "apart)",
            FormatDurationShort(kPartOpDispatchNs),
            FormatDurationShort(r.scale_ns * after_dear / r.pnow),
            FormatDurationShort(r.scale_ns * after / r.pnow), 100 * sensitivity));
        continue;
      }
    }
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
        if (recv_shares[i] < 0) {
          const TimeNs own_span = TimeNs(double(t->busy_ns) * 100 / t->busy_pct);
          recv_shares[i] = replay_detail::ReceiveBusyShare(in.capture, *t, own_span);
        }
        const double share = recv_shares[i];
        const double u = share * r.pnow / after;
        if (u > need) need = u, full = t, full_share = share;
      }
      if (full != nullptr && need > rules.saturated_busy) {
        withhold(fmt::format(
            "{} receives gradients {:.0f}% of the capture (its receives in flight); at the {} "
            "step the replay predicts its link would be receiving {:.0f}% of the time, over the "
            "{:.0f}% at which a PS is saturated: the link bounds the step, and the replay does not "
            "size it from the receives",
            full->label, 100 * full_share, FormatDurationShort(r.scale_ns * after / r.pnow),
            100 * need, 100 * rules.saturated_busy));
        continue;
      }
    }
    // Trust, measured (5): a partition moves the work of the PS the workers queue at, and the
    // wait the PS model does not explain (held fixed: Worker::recv_ns, tail_ns) sits beside that
    // queue; where it is more than kMaxUnexplainedShare of the predicted step (not only of the
    // measured one, the gate above), whether it stays decides the prediction, and none is made
    // (gen2 report12 2626: 21% of a 63.9 ms step held, 37% of the predicted 36.7 ms, +61% off its
    // twin; 2614: 26% held, +44%; gen3 report11 2713: 13% held, 16% of the predicted step, +16%).
    if (!fix.partition.empty() && r.queued == nullptr) {
      // The in-order PS queue's (the checks' figure), over links too: what the links explain of
      // it is queueing on the NICs of the PS the partition unloads as well (2614: 26% of the step,
      // less over the links).
      const double held_wait_ns =
          std::max(job.unexplained, r.unexplained_here) * m.measured_step_ns;
      const double after_ns = r.scale_ns * after / r.pnow;
      if (after_ns > 0 && held_wait_ns > kMaxUnexplainedShare * after_ns) {
        withhold(fmt::format(
            "{} of the median {} step is wait the PS queue does not explain{}, held fixed: "
            "{:.0f}% of the {} step the replay predicts, over {:.0f}%; the fix moves the work of "
            "the PS that wait may sit behind, so whether it stays decides the prediction",
            FormatDurationShort(held_wait_ns), FormatDurationShort(m.measured_step_ns),
            r.use_links ? " (the PS NICs replayed as links explain part of it)" : "",
            100 * held_wait_ns / after_ns, FormatDurationShort(after_ns),
            100 * kMaxUnexplainedShare));
        continue;
      }
    }
    im.method = "replay";
    im.step_ns_after_fix = r.scale_ns * after / r.pnow;
    // A PS saturated in the capture that the fix leaves as it is bounds the step at the
    // measured one: the calibration (measured / replay as is) is not carried across that bound.
    double sat_u = 0;
    const int sat = SaturatedUntouchedPs(m, fix, rules.saturated_busy, &sat_u, im.step_ns);
    std::string bound;
    if (sat >= 0 && im.step_ns_after_fix < im.step_ns) {
      im.step_ns_after_fix = im.step_ns;
      bound = fmt::format(
          "; bounded by {}, saturated in the capture ({:.0f}% of the step is its op time, on {} "
          "thread(s)), whose work the fix leaves as it is: it serves no faster after the fix (the "
          "replay alone gives {})",
          in.capture.TaskLabelOf(m.ps[size_t(sat)].task), 100 * sat_u, m.ps[size_t(sat)].threads,
          FormatDurationShort(r.scale_ns * after / r.pnow));
    } else if (sat < 0) {
      // The same bound after the fix: a PS the fix leaves as it is that would be saturated at
      // the predicted step serves it at most at saturated_busy, so the step is at least its op
      // time per worker step x the workers / its threads / saturated_busy (independent suite,
      // tune seed 1016: ps:0 87% busy, prefetch predicted -10% at 97% of the new step, the
      // prefetched twin 0%).
      double post_u = 0;
      const int post =
          SaturatedUntouchedPs(m, fix, rules.saturated_busy, &post_u, im.step_ns_after_fix);
      if (post >= 0) {
        const double floor_ns = im.step_ns_after_fix * post_u / rules.saturated_busy;
        bound = fmt::format(
            "; bounded by {}, whose work the fix leaves as it is: at the replay's {} it would be "
            "busy {:.0f}% of the step on {} thread(s), over the {:.0f}% at which a PS is "
            "saturated, so the step is at least {}",
            in.capture.TaskLabelOf(m.ps[size_t(post)].task),
            FormatDurationShort(im.step_ns_after_fix), 100 * post_u, m.ps[size_t(post)].threads,
            100 * rules.saturated_busy, FormatDurationShort(floor_ns));
        im.step_ns_after_fix = floor_ns;
      }
    }
    // The PS links at the predicted step (analyzers/link_queue.h): a check, not the prediction.
    // Not for a fix that cuts the bytes themselves (a worker's gather, sparse applies: their
    // sizes after the fix are not the captured ones), nor under SyncReplicasOptimizer kept,
    // whose pulls after the barrier are a burst, not the steady arrivals it assumes (nic_rate.h).
    const bool cuts_bytes = !fix.recv_cut.empty() || !fix.compute_cut.empty() ||
                            !fix.ps_demand_add.empty() || !fix.ps_demand_cut.empty();
    LinkCheck link_check;
    if (!r.use_links && !cuts_bytes && (!m.sync || fix.to_async) &&
        im.step_ns_after_fix < im.step_ns) {
      std::vector<bool> moved(m.ps.size());
      for (size_t i = 0; i < m.ps.size(); ++i) moved[i] = MovesPsBytes(fix, m.ps[i].task);
      if (!job_links) {
        job_links =
            ReadJobLinks(in, m, job.nic.bytes_per_s > 0 && !job.in_time ? job.nic.bytes_per_s : 0);
      }
      link_check = CheckLinksAfterFix(in, m, *job_links, moved, im.step_ns, im.step_ns_after_fix);
      if (link_check.bound_ns > im.step_ns_after_fix) im.step_ns_after_fix = link_check.bound_ns;
    }
    im.saving_pct = 100 * (im.step_ns - im.step_ns_after_fix) / im.step_ns;
    const double u = std::max(0.01, std::abs(r.base.miss) + job.spread);
    im.low_ns = im.step_ns_after_fix * (1 - u);
    im.high_ns = std::max(im.step_ns_after_fix * (1 + u), link_check.q.step_ns);
    // Evidence behind the prediction.
    const replay_detail::ImpactConfidence conf = replay_detail::ImpactWeakReasons(
        in, m, job, r, fix, plan, im, sensitivity, split_rates, link_check.weak);
    const std::string& weak = conf.weak;
    im.confidence = !conf.enough ? "low" : weak.empty() ? "high" : "medium";
    im.why = fmt::format(
        "replayed {} worker(s) x {} PS ({} per PS on {} of its ops at once, pull before and "
        "applies after compute{}), {}: {} step {} -> {} ({}); the replay of the capture as is "
        "gives {} ({:+.0f}%)",
        m.workers.size(), m.ps.size(),
        r.model->any_order && r.model->link_bytes_per_ns <= 0
            ? "out of arrival order, as the steps' spread shows,"
            : "FIFO",
        m.ps.empty() ? 1 : m.ps[0].threads,
        m.sync ? ", the aggregated applies once every worker's push is in" : "", what,
        r.on_mean ? "mean" : "median", FormatDurationShort(im.step_ns),
        FormatDurationShort(im.step_ns_after_fix), FormatRange(im.low_ns, im.high_ns),
        FormatDurationShort(r.pnow), 100 * r.base.miss);
    im.why += bound;
    if (!weak.empty()) im.why += fmt::format("; {} confidence: {}", im.confidence, weak);
    im.why += "; " + job.checks;
    // What the fix buys never changes the finding's severity, which comes from the rule's own
    // evidence (issue 35; analyzers/analysis.cc). Fewer PS (idle-ps, ps-worker-ratio): what the fix
    // buys is the PS tasks it frees, which the step time does not show.
    const size_t freed = !fix.drop_ps.empty() ? fix.drop_ps.size()
                         : fix.ps_count > 0 && size_t(fix.ps_count) < m.ps.size()
                             ? m.ps.size() - size_t(fix.ps_count)
                             : 0;
    if (freed > 0) im.why += fmt::format("; the fix frees {} PS task(s)", freed);
  }
}

void LowerSeverityByImpact(std::vector<Finding>* findings) {
  // A fix buying under 5% is what the independent suite (bench/twins/indep) and issue 44 call
  // no fix ("healthy"). The printed range is not used: it is widened by the steps' own spread
  // (their interquartile range), which is noise of single steps, not of the median predicted.
  constexpr double kMaxSavingPct = 5;
  for (Finding& f : *findings) {
    const Impact& im = f.impact;
    if (f.severity <= Severity::kLow || !im.trusted() || !im.withheld.empty()) continue;
    if (im.step_ns <= 0 || im.saving_pct >= kMaxSavingPct) continue;
    const Severity was = f.severity;
    f.severity = Severity::kLow;
    f.evidence.push_back(
        {"step time its fix is predicted to buy (severity low: under 5%)", im.saving_pct, "%"});
    f.summary += fmt::format(
        "; severity low, not {}: its fix is predicted to buy {:.0f}% of the step (replay, "
        "confidence {}; under 5% is no fix)",
        SeverityName(was), std::max(0.0, im.saving_pct), im.confidence);
  }
}

}  // namespace tfdiag
