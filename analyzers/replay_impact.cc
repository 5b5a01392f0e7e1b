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
#include "analyzers/ps_count_spread.h"
#include "analyzers/ps_links_convoy.h"
#include "analyzers/replay.h"
#include "analyzers/replay_dispatch.h"
#include "analyzers/replay_fix_reach.h"
#include "analyzers/replay_impact_gates.h"
#include "analyzers/replay_impact_job.h"
#include "analyzers/replay_impact_weak.h"
#include "analyzers/replay_node_cpu.h"
#include "analyzers/replay_plan.h"
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
  // Each PS's bytes as the load's spread reads them (ps_count_spread.h SpreadBytes), read on the
  // first fix adding PS that it may predict.
  std::optional<std::vector<double>> spread_bytes;
  std::string spread_bytes_source;
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
    // PS spread over nodes of their own (ps-colocation) moves nothing but their NICs' sharing,
    // which only the convoy reads (ReplayModel::ps_node): elsewhere it is withheld. A hot-ps
    // partition spreads its PS's link time over every PS, read from the convoy alone (session 45,
    // LinkConvoy::PartitionedNs: on the spent gen2 sets 15 partitions withheld before predicted, 12
    // within 25% of their twins).
    std::string no_convoy =
        "no PS links: " + (job.no_links.empty() ? std::string("none estimated") : job.no_links);
    if ((r.adds_ps || fix.spread_ps || fix.partition_only()) && job.linked.link_bytes_per_ns > 0 &&
        fix.recv_cut.empty() &&
        PredictFromConvoy(m, job.linked, job.linked_base, fix, job.spread, what, plan.estimated,
                          job.checks, rules.convoy, &im, &no_convoy,
                          job.nic.workers > 0 && !job.in_time)) {
      continue;
    }
    if (fix.spread_ps) {
      withhold(fmt::format(
          "PS that share a node's NIC are modelled only where the PS links are in a convoy, which "
          "the capture's step is not ({})",
          no_convoy));
      // What a shared NIC can lengthen is the workers' time on the network: the transfers the
      // replay holds and the wait the PS queues do not explain (which holds any transfer the
      // capture does not tie to a PS). The rest of the step, PS op time in the queues and the
      // workers' own compute and input, a NIC of its own does not touch (docs/domain: PS packed
      // on one node share its NIC, whose bandwidth saturates), so the fix buys at most that share.
      // Spent sets: every packed job whose spread buys >= 5% had it at 9.7% or more (gen2 report4
      // 1029: 9.7%, 8% bought), and the ten under 5% bought 2% or less. A PS whose ops wait on
      // their sockets (its sends inside its op time) would hide NIC time in the PS queue: the
      // generators' PS do not, so that case is unchecked.
      const double network = std::clamp(job.transfer + job.unexplained, 0.0, 1.0);
      if (replay_detail::EnoughToPredict(m) && network < 1) {
        im.low_ns = im.step_ns * (1 - network);
        im.floor_from = fmt::format(
            "the workers' transfers and the waits the PS queues do not explain, all that a NIC "
            "shared with other PS can lengthen, are {:.1f}% of the step",
            100 * network);
      }
      continue;
    }
    // The trust gates before the fix is replayed (replay_impact_gates.h).
    if (std::string why = replay_detail::WithheldBeforeReplay(m, job, r, fix); !why.empty()) {
      // Where the PS model explains too little of the waits for a replay, a fix adding PS may
      // still be read from how the PS load spreads (ps_count_spread.h).
      if (replay_detail::UnexplainedGate(r) && r.adds_ps) {
        if (!spread_bytes) spread_bytes = SpreadBytes(in, m, &spread_bytes_source);
        std::string no_spread;
        if (PredictFromLoadSpread(m, *spread_bytes, spread_bytes_source, fix, r.scale_ns,
                                  r.unexplained_here, r.base.miss, job.spread, rules.spread, what,
                                  job.checks, &im, &no_spread)) {
          continue;
        }
        why += "; nor from the PS load's spread: " + no_spread;
      }
      withhold(std::move(why));
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
    std::string replay_weak;
    if (fix.to_async && m.sync && !throughput && m.workers.size() >= 2 && after > 0) {
      const std::vector<double> means = ReplayWorkerMeanSteps(*r.model, fix, job.steps);
      size_t fast = 0, slow = 0;
      for (const double x : means) {
        fast += x < (1 - kSplitRateShare) * after ? 1 : 0;
        slow += x > (1 + kSplitRateShare) * after ? 1 : 0;
      }
      if (fast > 0 && slow > 0 && 4 * fast >= means.size() && 4 * slow >= means.size()) {
        replay_weak = fmt::format(
            "once asynchronous the workers step at their own rates: {} of {} replayed more than "
            "{:.0f}% under the median step and {} more than {:.0f}% over it, so the median falls "
            "between them",
            fast, means.size(), 100 * kSplitRateShare, slow, 100 * kSplitRateShare);
      }
    }
    // The sync burst's queue scaled (replay_plan.h HeldTransferScale) is read from the transfers'
    // spread, not seen on a NIC: where holding it as measured moves the prediction over 2%, the
    // prediction is at most medium, naming both (indep report27 35006, spent: 2 -> 4 PS, `high`,
    // -9.7% -> -13.7% off its twin with the queue scaled, 4.6% from the held replay).
    constexpr double kMaxBurstQueueMove = 0.02;
    if (const double scale = replay_detail::HeldTransferScale(*r.model, fix);
        !throughput && after > 0 && scale < 1) {
      Fix held = fix;
      held.hold_burst_queue = true;
      const double after_held = ReplayMedianStep(*r.model, held, job.steps);
      if (std::abs(after_held - after) > kMaxBurstQueueMove * after) {
        replay_detail::AddReason(
            &replay_weak,
            fmt::format(
                "each worker's transfers beyond the workers' shortest are taken as its wait in "
                "the sync burst's queue on the busiest PS's NIC and shrink to {:.2f} of it with "
                "its bytes; held as measured the replay gives {}",
                scale, FormatDurationShort(r.scale_ns * after_held / r.pnow)));
      }
    }
    // Sensitivity to what the capture cannot show: a fix that adds part ops (partitioning, a new
    // PS count) charges each its PS's fixed cost per op, taken from its NoOps (a few us) or, where
    // larger, the intercept its dense variables' ops show (analyzers/op_fixed_cost.h); TF's
    // executor dispatch per op is about 10-20 us, so the fix is replayed again at
    // kPartOpDispatchNs per op. Where the two differ by more than 25% the prediction is withheld,
    // by more than 10% it is at most medium (independent suite, tune seeds: a 6 -> 8 PS job of
    // 5.8 ms steps predicted 5.7 ms, its twin, 15 us per part op, 12.1 ms).
    double sensitivity = 0;
    if (fix.ps_count > 0 || !fix.partition.empty()) {
      const ReplayModel dear = AtDispatchCost(*r.model);
      const double after_dear = ReplayMedianStep(dear, fix, job.steps);
      sensitivity = after > 0 ? std::abs(after_dear - after) / after : 0;
      // A new PS count cuts every variable into parts: each pull and push becomes many small ops
      // on every PS, and where the capture's load is too light to show the order its PS serve
      // in (ReplayModel::order_unseen), a PS taking a random waiting op, as TF's inter-op pool
      // does, holds each request until nearly all the ops queued beside it are done. The fix is
      // replayed so too, at both op costs, each against that order's replay of the job as is;
      // the farthest from the prediction is the sensitivity (independent suite report21, spent:
      // 29003, 12 -> 7 PS, FIFO 28.8 ms, out of order at 20 us per part op 43.8 ms, twin 40.8;
      // 29006, 16 -> 5 PS, twin +66%, predicted +6%).
      if (fix.ps_count > 0 && after > 0 && OrderUnseenReadings(*r.model)) {
        ReplayModel any, any_dear_model;
        AnyOrderReadings(*r.model, &any, &any_dear_model);
        const double any_now = ReplayMedianStep(any, Fix{}, job.steps);
        if (any_now > 0) {
          const double scale = r.pnow / any_now;
          const double any_after = scale * ReplayMedianStep(any, fix, job.steps);
          const double any_dear = scale * ReplayMedianStep(any_dear_model, fix, job.steps);
          const double far =
              std::abs(any_dear - after) >= std::abs(any_after - after) ? any_dear : any_after;
          const double order_sensitivity = std::abs(far - after) / after;
          if (order_sensitivity > kMaxPartOpSensitivity) {
            withhold(fmt::format(
                "the fix cuts every variable into parts served as many small ops, and the "
                "capture's load is too light to show the order its PS serve them in: served in "
                "arrival order the replay gives {}, taking a random waiting op (as TF's inter-op "
                "threads do){} {} ({:.0f}% apart)",
                FormatDurationShort(r.scale_ns * after / r.pnow),
                far == any_dear
                    ? fmt::format(" at {} per part op", FormatDurationShort(kPartOpDispatchNs))
                    : std::string(),
                FormatDurationShort(r.scale_ns * far / r.pnow), 100 * order_sensitivity));
            continue;
          }
          sensitivity = std::max(sensitivity, order_sensitivity);
        }
      }
      if (sensitivity > kMaxPartOpSensitivity) {
        withhold(fmt::format(
            "the fix adds part ops whose fixed cost the capture does not show: at {} per part op "
            "(TF's executor dispatch) the replay gives {}, at the cost per op the PS's NoOps (or "
            "its dense variables' ops) show {} ({:.0f}% apart)",
            FormatDurationShort(kPartOpDispatchNs),
            FormatDurationShort(r.scale_ns * after_dear / r.pnow),
            FormatDurationShort(r.scale_ns * after / r.pnow), 100 * sensitivity));
        continue;
      }
    }
    // Trust, measured (4): the receive link (replay_impact_gates.h).
    if (std::string why = replay_detail::WithheldByReceiveLink(in, m, r, fix, after,
                                                               rules.saturated_busy, &recv_shares);
        !why.empty()) {
      withhold(std::move(why));
      continue;
    }
    // Trust, measured (5): the wait beside a partition (replay_impact_gates.h).
    if (std::string why = replay_detail::WithheldByPartitionWait(m, job, r, fix, after);
        !why.empty()) {
      withhold(std::move(why));
      continue;
    }
    im.method = "replay";
    im.step_ns_after_fix = r.scale_ns * after / r.pnow;
    // A PS saturated in the capture, or at the predicted step, that the fix leaves as it is
    // (replay_impact_gates.h).
    double floor_ns = 0;
    bool at_saturation = false;
    std::string bound = replay_detail::BoundBySaturatedPs(in, m, fix, rules.saturated_busy, r,
                                                          after, &im, &floor_ns, &at_saturation);
    // Or one the fix makes busier (FixPlan::busy_floor_ns: sync -> async). At most one of the two
    // binds today: going asynchronous touches every PS, so BoundBySaturatedPs finds none the fix
    // leaves as it is.
    if (floor_ns <= 0) {
      bound =
          replay_detail::BoundByBusierPs(m, fix, plan, r, &im, &floor_ns, &at_saturation) + bound;
    }
    // The PS the fix leaves as it is (or makes busier) saturates at the predicted step: the step
    // at its saturation point (replay_impact_gates.h PredictsAtSaturation), where the PS queue
    // explains the workers' waits; else a floor, not a prediction: withheld, the floor kept for the
    // severity.
    if (floor_ns > 0 && !at_saturation) {
      im.method = "none";
      im.step_ns_after_fix = im.step_ns;
      withhold(bound);
      // Only from a capture the replay could predict from (replay_impact_weak.h EnoughToPredict):
      // a replay that lacks data never lowers a severity (issue 35).
      if (replay_detail::EnoughToPredict(m)) im.low_ns = floor_ns;
      continue;
    }
    if (at_saturation) {  // at most medium, the bound its reason (not in `why` twice)
      im.step_ns_after_fix = floor_ns;
      replay_weak += (replay_weak.empty() ? "" : "; ") + bound;
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
    // The node's CPUs at the predicted step (analyzers/replay_node_cpu.h): tasks sharing a node
    // do at most its CPUs' worth of work at once, so where they would need more CPUs than it has,
    // the step is at least their CPU time per step (as captured: the CPUs they used x the step)
    // over its CPUs. Only for a fix that moves the tasks' work or adds to it: one that cuts it (a
    // PS's demand, a worker's compute or receives, the accumulator and token ops going
    // asynchronous drops) or moves a task off the node (a slow host, a straggler's machine)
    // needs less of the node than the capture used. And only where every task with CPU samples
    // is on the one node: elsewhere a fix that re-places PS work moves it between nodes.
    const bool cuts_work = !fix.ps_demand_cut.empty() || !fix.compute_cut.empty() ||
                           !fix.recv_cut.empty() || !fix.host_speedup.empty() ||
                           !fix.median_workers.empty() || fix.to_async;
    std::string cpu_floor;
    if (!cuts_work && im.step_ns_after_fix < im.step_ns) {
      const NodeCpuAfter node = BusiestNodeAfter(in, im.step_ns, im.step_ns_after_fix);
      const double floor_cpu = node.cpus > 0 ? im.step_ns * node.used / node.cpus : 0;
      if (!node.node.empty() && node.nodes == 1 && node.after > node.cpus &&
          floor_cpu > im.step_ns_after_fix) {
        cpu_floor = fmt::format(
            "; bounded by {}'s {} CPUs: the job's tasks there used {:.2f} of them over the "
            "capture, and the same work at the predicted {} would need {:.2f}, so the step is at "
            "least their CPU time per step over the CPUs",
            node.node, node.cpus, node.used, FormatDurationShort(im.step_ns_after_fix), node.after);
        im.step_ns_after_fix = floor_cpu;
        im.cpu_bounded = true;
      }
    }
    im.saving_pct = 100 * (im.step_ns - im.step_ns_after_fix) / im.step_ns;
    const double u = std::max(0.01, std::abs(r.base.miss) + job.spread);
    im.low_ns = im.cpu_bounded ? im.step_ns_after_fix : im.step_ns_after_fix * (1 - u);
    im.high_ns = std::max(im.step_ns_after_fix * (1 + u), link_check.q.step_ns);
    if (at_saturation) {  // the spread of twins about the saturation point (not under a CPU floor)
      if (!im.cpu_bounded) {
        im.low_ns = std::min(im.low_ns, im.step_ns_after_fix * replay_detail::kSaturationLow);
      }
      im.high_ns = std::max(im.high_ns, im.step_ns_after_fix * replay_detail::kSaturationHigh);
    }
    // Evidence behind the prediction.
    const replay_detail::ImpactConfidence conf = replay_detail::ImpactWeakReasons(
        in, m, job, r, fix, plan, im, sensitivity, replay_weak, link_check.weak);
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
    im.why += (at_saturation ? std::string() : bound) + cpu_floor;
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
    // A withheld prediction with a floor (a PS the fix leaves as it is saturates): what the fix
    // buys is at most the floor's saving.
    if (f.severity > Severity::kLow && !im.withheld.empty() && im.low_ns > 0 && im.step_ns > 0) {
      const double most = 100 * (im.step_ns - im.low_ns) / im.step_ns;
      if (most >= kMaxSavingPct) continue;
      const Severity was = f.severity;
      f.severity = Severity::kLow;
      f.evidence.push_back(
          {"step time its fix can buy at most (severity low: under 5%)", std::max(0.0, most), "%"});
      f.summary += fmt::format(
          "; severity low, not {}: its fix can buy at most {:.0f}% of the step ({}; under 5% is "
          "no fix)",
          SeverityName(was), std::max(0.0, most),
          im.floor_from.empty() ? std::string("a PS it leaves as it is saturates first")
                                : im.floor_from);
      continue;
    }
    // A finding whose own evidence is under its rule's bar from a profile alone
    // (kLowUnlessPredictedLabel: hot-ps under profile_far_limit_pct) is LOW unless its fix is
    // predicted, by a prediction made with confidence medium or high.
    const bool predicted = im.trusted() && im.withheld.empty() && im.step_ns > 0;
    if (f.severity > Severity::kLow && !predicted) {
      const Figure* weak = nullptr;
      for (const Figure& x : f.evidence) {
        if (x.label.rfind(kLowUnlessPredictedLabel, 0) == 0 &&
            (weak == nullptr || x.value > weak->value))
          weak = &x;
      }
      if (weak != nullptr) {
        const Severity was = f.severity;
        f.severity = Severity::kLow;
        f.summary += fmt::format(
            "; severity low, not {}: {:.0f}% of its nearest limit from the profile's figures, "
            "under its rule's bar for a profile, and its fix is not predicted",
            SeverityName(was), weak->value);
        continue;
      }
    }
    if (f.severity <= Severity::kLow || !predicted || im.cpu_bounded) continue;
    if (im.saving_pct >= kMaxSavingPct) continue;
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
