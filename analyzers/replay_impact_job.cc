// ReadImpactJob and ChooseImpactReplay (analyzers/replay_impact_job.h), moved out of
// analyzers/replay_impact.cc's ComputeImpacts as they were.
#include "analyzers/replay_impact_job.h"

#include <fmt/format.h>

#include <cmath>
#include <utility>

#include "analyzers/replay_fixes.h"
#include "analyzers/replay_nic_bytes.h"
#include "analyzers/replay_ps_nodes.h"
#include "analyzers/replay_waits.h"

namespace tfdiag::replay_detail {

ImpactJob ReadImpactJob(const AnalysisInput& in, const ReplayModel& m, const ImpactRules& rules) {
  ImpactJob job;
  job.steps = ReplaySteps(m);
  job.base = ReplayBaseline(m);
  // The gates' limits: kMaxUnexplainedShare, kMaxBaselineMiss, kMaxFixedTransferShare,
  // kMaxPartOpSensitivity (analyzers/replay.h).
  job.unexplained = UnexplainedWaitShare(m);
  // Step-to-step spread: half the interquartile range, as a share of the median step.
  job.spread = m.measured_step_ns > 0 ? (m.step_q3_ns - m.step_q1_ns) / 2 / m.measured_step_ns : 0;
  // The transfers the replay holds fixed (each answer's and push's measured transfer): the
  // median worker's share of the step. A network near its capacity stretches them with the
  // load a fix moves, which the replay does not model (issue 44).
  job.transfer = FixedTransferShare(m);
  // The network as a resource (issue 44 item 2): where the transfers the FIFO replay holds fixed
  // are more than kMaxFixedTransferShare of the step (its predictions would be withheld) and the
  // capture sizes the PS answers, the NIC bandwidth is estimated from them (analyzers/nic_rate.h)
  // and the fixes are replayed with each PS NIC as a link shared by the transfers crossing it; only
  // what the links do not explain of each measured transfer stays fixed (`held`). That replay of
  // the capture as is must match the measured step within 10% on its own (the links' queueing is
  // not fitted to the step), else the FIFO replay's gates apply. kMaxFixedTransferShare: tuned on
  // the independent suite's tune seeds (bench/twins/indep: transfers 15.6% of the step, sync ->
  // async predicted 32% off).
  // The bandwidth: the PS receive links' own where they show it (ChooseLinks, analyzers/
  // replay_nic_bytes.h), else from the answers' transfers (JobNicRate). The sizes: the answers'
  // beside the applies' control edges (PsNicBytesBesideControl; gen3 report4 1320, withheld before:
  // 72% of the step wait on one PS's NIC; predicted +7% of its twin, medium).
  // The network also where the transfers held fixed and the wait the PS queue does not explain
  // are together over kMaxUnexplainedShare: a PS link's queueing is wait the FIFO PS model does
  // not explain, and that replay holds it while a fix re-places the PS work (gen3 report15 3529,
  // spent: 3 PS packed on one 5 Gb/s NIC, transfers 10% and unexplained wait 20% of the step;
  // with the links in time, the replay as is +6%, ps-worker-ratio +35% -> +27% off its twin and
  // straggler-worker -17% -> -13%; no prediction moved on gen2 report16, indep report19-20).
  // (Both shares are >= 0, so an unexplained wait over kMaxUnexplainedShare alone is this too.)
  const bool network = job.transfer > kMaxFixedTransferShare ||
                       job.transfer + job.unexplained > kMaxUnexplainedShare;
  if (network) {
    ChosenLinks chosen = ChooseLinks(in, m);
    job.in_time = chosen.in_time;
    job.nic = chosen.nic;
    job.linked = std::move(chosen.linked);
    job.linked_base = chosen.base;
    job.recv_refused = std::move(chosen.recv_refused);
  }
  job.links = network && job.linked.link_bytes_per_ns > 0 && job.linked_base.replay_ns > 0 &&
              std::abs(job.linked_base.miss) <= kMaxBaselineMiss;
  // With links, the wait they explain is not unexplained: per worker, the links' time for the
  // largest answer and gradient (ReplayModel::link_explained_*_ns, at the captured load) beyond
  // the measured transfers is queueing on a NIC that the FIFO model saw as wait; the median over
  // the workers of what is left is the share the unexplained-wait gate weighs for fixes
  // replayed with the links.
  job.unexplained_links = job.links ? UnexplainedOverLinks(job.linked) : job.unexplained;
  job.held_links = job.links ? HeldTransferShare(job.linked) : job.transfer;
  // The replays with no waits held (QueuedWaits), built only where a gate would withhold. Not
  // where the replay as is misses the measured step with the waits held: the capture's waits are
  // then not what the model makes of them, and a variant that matches the step alone is no
  // evidence that they are (gen2 report3, not tuned on: 803 and 819, replayed with none held
  // +14% and -40% off their twins; report4 1008, +1%). The exception: the busiest PS's CPU bounds
  // the throughput (ps_count_saturated.h: its checks include an even PS load and the held-waits
  // miss at most ImpactRules::cpu_bound's max_held_miss), where a fix adding PS is replayed on the
  // PS queues alone within that miss; on PS threads whose cores the capture shows only, as any such
  // fix.
  job.cpu = ReadPsCpuBound(in, m, job.base.miss, rules.cpu_bound);
  job.cpu_bound = job.cpu.bound;
  // A fix adding PS spreads every variable evenly; replayed on the PS queues alone only where
  // the PS already share the load about evenly (ImpactRules::cpu_bound's min_evenness, ps-worker-
  // ratio's cpu_bound_min_evenness_pct): where one carries most of
  // it, its queue's out-of-order waits are not the others' (gen2 report9 2009: ps:0 46% of 5 PS'
  // load, 5 -> 12 PS replayed with no wait held -56% off its twin).
  job.even_ps = m.ps.size() == 1 || PsLoadEvenness(m) >= rules.cpu_bound.min_evenness;
  // The PS queues after a fix adding PS are the captured ones only on PS of one thread or of
  // cores the capture shows, with the load even (the queues-alone replay's guards, and the
  // waits-held replay's where the PS queues make the pull wait no receive op spans).
  // Threads that ran at once as fast as alone show cores for each (ReplayModel::ps_min_cores;
  // gen2 report24 5201, spent: 2 threads on 2 cores, 7 -> 11 PS withheld, replayed -27%, its
  // twin -28%).
  job.cores_shown = m.ps_threads == 1 || m.ps_cores > 0 || m.ps_min_cores >= m.ps_threads;
  job.added_queues_known = job.cores_shown && job.even_ps;
  job.own_nics = !m.ps_node.empty() && !PsPacked(m.ps_node);
  job.uneven_load = fmt::format(
      "the fix spreads the load of PS that share it unevenly (their utilisations sum to {:.1f} "
      "times the busiest's, {} PS)",
      PsLoadEvenness(m) * double(m.ps.size()), m.ps.size());
  // The workers' pull wait that no receive op spans (replay_waits.h), which the replay with the
  // waits held makes from the PS queues, not held: as the queues alone make every wait.
  job.unspanned_pull = replay_detail::UnspannedPullShare(in, m);
  if (job.unexplained > kMaxUnexplainedShare ||
      (job.cpu_bound && std::abs(job.base.miss) > kMaxBaselineMiss)) {
    job.queued_fifo = WithNoWaitsHeld(m);
  }
  if (job.linked.link_bytes_per_ns > 0 &&
      (!job.links || job.unexplained_links > kMaxUnexplainedShare)) {
    job.queued_links = WithNoWaitsHeld(job.linked);
  }
  // What the links were read as: a bandwidth and its source, or (in time) each PS's receive busy
  // time as its load, with no bandwidth read (review v62 item 1).
  job.links_as = job.in_time
                     ? std::string(
                           "PS links in their own time (each PS's receive link's busy time per "
                           "worker step as its load; no bandwidth read)")
                     : std::string();
  job.nic_from = job.nic.workers > 0
                     ? fmt::format("{} worker(s)' last answers", job.nic.workers)
                     : std::string("the PS receives (bytes over the receive link's busy time)");
  // Why the network could not be replayed (for a withheld prediction).
  job.no_links =
      job.links ? std::string("what the PS NICs replayed as links do not explain")
      : job.nic.bytes_per_s <= 0
          ? fmt::format(
                "the NIC bandwidth could not be estimated: {}; and the capture does not size the "
                "PS answers, or ties none of them to a worker's wait in half the workers' median "
                "steps, so each answer's and push's measured transfer is held as it is",
                job.recv_refused.empty() ? std::string("the PS receive links show none")
                                         : job.recv_refused)
      : job.in_time
          ? fmt::format(
                "with the {}, the replay of the capture as is misses the measured step "
                "by {:.0f}%",
                job.links_as, std::abs(100 * job.linked_base.miss))
          : fmt::format(
                "with the PS NICs replayed as links of {:.2g} Gb/s estimated from {}, "
                "the replay of the capture as is misses the measured step by {:.0f}%",
                job.nic.bytes_per_s * 8 / 1e9, job.nic_from, std::abs(100 * job.linked_base.miss));
  job.network =
      !job.links ? fmt::format("transfers held fixed {:.1f}% of the step", 100 * job.transfer)
      : job.in_time
          ? fmt::format(
                "transfers {:.1f}% of the step, replayed over the {} (the replay as is with "
                "them: {:+.0f}%), {:.1f}% of the step held fixed",
                100 * job.transfer, job.links_as, 100 * job.linked_base.miss, 100 * job.held_links)
          : fmt::format(
                "transfers {:.1f}% of the step, replayed over PS NICs of {:.2g} Gb/s{} estimated "
                "from {} (the replay as is with them: {:+.0f}%), {:.1f}% of the step held "
                "fixed",
                100 * job.transfer, job.nic.bytes_per_s * 8 / 1e9,
                job.linked.worker_links ? " (the workers' NICs too)" : "", job.nic_from,
                100 * job.linked_base.miss, 100 * job.held_links);
  // The checks on evidence the replay is not fitted to, named with their figures in each
  // prediction's `why` (issue 44 item 1).
  job.checks = fmt::format(
      "checks: PS waits explained {:.0f}% (wait the PS queue does not explain {:.1f}% of the "
      "step), steps vary +-{:.1f}%, {}, PS threads {} on {}",
      100 * (1 - job.unexplained), 100 * job.unexplained, 100 * job.spread, job.network,
      m.ps_threads,
      m.ps_cores > 0       ? fmt::format("{} core(s) (ops slowed under load)", m.ps_cores)
      : m.ps_min_cores > 0 ? fmt::format("at least {} core(s) (ops as fast {} at once as alone)",
                                         m.ps_min_cores, m.ps_min_cores)
                           : std::string("cores not shown by the ops"));
  // The applies' lock, where the model reads it (ReplayModel::apply_locks).
  if (m.apply_locks) {
    job.checks += fmt::format(
        ", applies one at a time under their variable's lock on {} PS ({:.0f}% of those PS's "
        "applies' op time was waiting on it; the replay with the lock explains the capture "
        "better than without)",
        m.lock_ps, 100 * m.lock_wait_share);
  } else if (m.lock_seen_ps > 0 && m.lock_unexplained < 0) {
    job.checks += fmt::format(
        ", applies that wait on their variable's lock on {} PS not read as a lock (the replay "
        "without it reproduces the capture)",
        m.lock_seen_ps);
  } else if (m.lock_seen_ps > 0) {
    job.checks += fmt::format(
        ", applies that wait on their variable's lock on {} PS not read as a lock (with it the "
        "replay still leaves {:.0f}% of the step unexplained, or explains the capture no better)",
        m.lock_seen_ps, 100 * m.lock_unexplained);
  }
  return job;
}

ImpactReplay ChooseImpactReplay(const ReplayModel& m, const ImpactJob& job, const Fix& fix,
                                const FixPlan& plan) {
  ImpactReplay r;
  // A fix that cuts the measured receive time itself (gather-on-worker, oversharding:
  // recv_cut) acts on the transfers as measured: the FIFO replay.
  // Nor a fix that moves the work onto fewer PS (analyzers/replay_fixes.h FewerPs).
  r.use_links = job.links && fix.recv_cut.empty() && !FewerPs(m, fix);
  r.model = r.use_links ? &job.linked : &m;
  r.base = r.use_links ? job.linked_base : job.base;
  r.held = r.use_links ? job.held_links : job.transfer;  // the share held fixed
  r.unexplained_here = r.use_links ? job.unexplained_links : job.unexplained;
  // A fix that removes exposed receive time itself (gather-on-worker, oversharding: recv_cut)
  // acts on that wait directly, and is replayed. So does going asynchronous: the exposed
  // receive wait under SyncReplicasOptimizer is the burst after the barrier, which the
  // asynchronous replay drops (analyzers/replay_plan.cc).
  r.drops_wait = !fix.recv_cut.empty() || (fix.to_async && m.sync);
  // Where the held waits fail a gate, the replay with none held (QueuedWaits) in their place.
  // A fix that adds PS moves the queues onto PS the capture does not show: over the links,
  // NICs of hosts it has no transfers of (gen2 report4 1006: three PS packed on one node's
  // NIC, 3 -> 28 PS predicted +51% slow with every new PS at the packed PS's 3.3 Gb/s); on PS
  // threads busy throughout, cores behind the threads that their ops' slowdown does not show
  // (1014: 8 threads on 1 core, 4 -> 12 PS predicted 57% fast). Such a fix is replayed with no
  // waits held in FIFO on PS of one thread or of cores shown, and over the links only where
  // every PS's node is known and none holds two (ImpactJob::own_nics): the rate the links read
  // is then one PS's own NIC's, which each PS the fix adds on a node of its own gets too (spent
  // sets, not tuned on: gen2 report19 4024, 3 -> 19 PS, -2% off its twin; report9 2013, -10%;
  // both withheld before, and nothing else moved on gen2 report4, 9, 11, 18-20 or gen3
  // report17-19).
  r.adds_ps = fix.ps_count > int(m.ps.size());
  const QueuedWaits& queued_fifo = job.queued_fifo;
  const QueuedWaits& queued_links = job.queued_links;
  const double transfer = job.transfer;
  // Where the busiest PS's CPU bounds the throughput (ps_count_saturated.h), a fix adding PS
  // is replayed on the PS queues alone also where the replay with the waits held misses the
  // measured step by up to ImpactRules::cpu_bound's max_held_miss: the queue, served in whatever
  // order, makes those waits; still only on PS of one thread or of cores shown, the load even.
  const bool bound_ps = r.adds_ps && job.cpu_bound && !r.use_links;
  if (fix.recv_cut.empty() && (std::abs(r.base.miss) <= kMaxBaselineMiss || bound_ps) &&
      ((r.unexplained_here > kMaxUnexplainedShare && !r.drops_wait) ||
       r.held > kMaxFixedTransferShare || std::abs(r.base.miss) > kMaxBaselineMiss)) {
    if (r.adds_ps && (queued_links.ok || (queued_fifo.ok && transfer <= kMaxFixedTransferShare))) {
      r.not_queued = fmt::format(
          "; with no wait held the replay as is gives {:+.0f}%, but the fix adds PS whose {} "
          "the capture does not show",
          100 * (queued_links.ok ? queued_links : queued_fifo).base.miss,
          !queued_links.ok    ? "cores behind their threads"
          : m.ps_node.empty() ? "hosts' NICs (the PS nodes are not known: no pod list ties each PS "
                                "to one node)"
                              : "hosts' NICs (some PS share a node's NIC)");
      if (queued_fifo.ok && transfer <= kMaxFixedTransferShare && job.cores_shown && !job.even_ps) {
        r.not_queued = fmt::format("; with no wait held the replay as is gives {:+.0f}%, but {}",
                                   100 * queued_fifo.base.miss, job.uneven_load);
      }
    }
    if (queued_links.ok && !FewerPs(m, fix) && (!r.adds_ps || job.own_nics)) {
      r.queued = &queued_links;
    } else if (queued_fifo.ok && transfer <= kMaxFixedTransferShare &&
               (!r.adds_ps || job.added_queues_known)) {
      r.queued = &queued_fifo;
    }
    if (r.queued != nullptr) r.not_queued.clear();
  }
  if (r.queued != nullptr) {
    r.use_links = r.queued == &queued_links;
    r.model = &r.queued->model;
    r.base = r.queued->base;
    r.held = r.use_links ? HeldTransferShare(r.queued->model) : transfer;
    r.unexplained_here = 0;
  }
  // A fix model that knows the job's steps fall in modes the replay does not reproduce
  // (FixPlan::mean_step_ns: a PS stopped for whole CFS periods) judges the replay as is against
  // the mean step where it misses the median, and the prediction is scaled from the mean.
  r.median_base = r.base;
  if (plan.mean_step_ns > 0 && r.base.replay_ns > 0 && std::abs(r.base.miss) > kMaxBaselineMiss) {
    const double miss = (r.base.replay_ns - plan.mean_step_ns) / plan.mean_step_ns;
    if (std::abs(miss) <= kMaxBaselineMiss) {
      r.mean_base = {r.base.replay_ns, plan.mean_step_ns, miss};
      r.base = r.mean_base;
      r.on_mean = true;
    }
  }
  r.scale_ns = r.on_mean ? r.mean_base.measured_ns : m.measured_step_ns;
  r.pnow = r.base.replay_ns;
  return r;
}

}  // namespace tfdiag::replay_detail
