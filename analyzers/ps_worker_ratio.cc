#include "analyzers/ps_worker_ratio.h"

#include <fmt/format.h>

#include <algorithm>

#include "analyzers/op_names.h"
#include "analyzers/ps_worker_ratio_fewer.h"
#include "analyzers/ps_worker_ratio_measured.h"
#include "analyzers/replay_fixes.h"
#include "analyzers/replay_nic_bytes.h"

namespace tfdiag {

std::string InferModelKind(const Capture& c, std::string* why) {
  std::vector<bool> seen(c.strings.size(), false);
  std::string sparse;  // the first gather or sparse-apply type in op order
  c.ops.ForEach([&](const OpRow& op) {
    const StrId type = c.OpType(op);
    if (seen[type]) return true;
    seen[type] = true;
    if (IsGatherOpType(c.Str(type)) || IsSparseApplyOpType(c.Str(type))) {
      sparse = c.Str(type);
      return false;
    }
    return true;
  });
  if (!sparse.empty()) {
    *why = sparse + " ops ran";
    return "sparse";
  }
  *why = "no gather or sparse-apply op ran";
  return "dense";
}

namespace {

// The parameters of the measured count (ps_worker_ratio_measured.h), all required.
constexpr const char* kMeasuredParams[] = {
    "measured_min_ps_util_pct",   "measured_min_saving_pct", "measured_min_count_saving_pct",
    "measured_medium_saving_pct", "measured_near_best_pct",  "measured_max_ps"};

// Without a trace the model kind is unknown: only a ratio outside both bands (below the dense
// band's low end or above the sparse band's high end) is reported, from the manifests' replica
// counts (chief and master train too, so they count as workers).
std::vector<Finding> RunPsWorkerRatioK8s(const K8sDeployment& k, const Rule& rule) {
  std::vector<Finding> out;
  const int ps = k.Count("ps"), workers = k.Count("worker") + k.Count("chief") + k.Count("master");
  if (ps == 0 || workers == 0) return out;
  const double lo =
      std::min(rule.Param("dense_min_workers_per_ps"), rule.Param("sparse_min_workers_per_ps"));
  const double hi =
      std::max(rule.Param("dense_max_workers_per_ps"), rule.Param("sparse_max_workers_per_ps"));
  const double ratio = static_cast<double>(workers) / ps;
  if (ratio >= lo && ratio <= hi) return out;
  const K8sReplicaType* psr = nullptr;
  for (const K8sReplicaType& r : k.replicas) {
    if (r.role == "ps" && psr == nullptr) psr = &r;
  }
  Finding f = MakeFinding(rule, "manifest", psr->source.path + ".replicas");
  f.subject = psr->source.Where() + ".replicas";
  f.task = "ps";
  f.summary = fmt::format(
      "{} PS for {} workers ({:.2g} workers per PS) from the manifests' replica counts (model "
      "kind unknown without a trace; the usual band is {:.2g}-{:.2g}): {}",
      ps, workers, ratio, lo, hi, ratio < lo ? "too many PS" : "too few PS");
  f.evidence = {{"PS replicas", double(ps), "count"},
                {"worker replicas", double(workers), "count"},
                {"workers per PS", ratio, "ratio"}};
  out.push_back(std::move(f));
  return out;
}

}  // namespace

std::vector<Finding> RunPsWorkerRatio(const AnalysisInput& in, const Rule& rule) {
  std::vector<Finding> out;
  if (in.stats.num_ps == 0 && in.k8s != nullptr) return RunPsWorkerRatioK8s(*in.k8s, rule);
  const int ps = in.stats.num_ps, workers = in.stats.num_workers;
  if (ps == 0 || workers == 0) return out;
  std::string why;
  const std::string kind = InferModelKind(in.capture, &why);
  const double lo =
      rule.Param(kind == "sparse" ? "sparse_min_workers_per_ps" : "dense_min_workers_per_ps");
  const double hi =
      rule.Param(kind == "sparse" ? "sparse_max_workers_per_ps" : "dense_max_workers_per_ps");
  const double ratio = static_cast<double>(workers) / ps;
  const bool in_band = ratio >= lo && ratio <= hi;
  const bool too_many_ps = ratio < lo;
  // A hot PS (one doing at least half of all PS work, twice the next) explains idle PS: the fix
  // is to partition what it holds, not to remove PS (issue 29).
  const TaskStats* hot = nullptr;
  double next_share = 0;
  for (const TaskStats& t : in.stats.tasks) {
    if (t.kind != JobKind::kPs) continue;
    if (hot == nullptr || t.ps_share > hot->ps_share) {
      if (hot != nullptr) next_share = std::max(next_share, hot->ps_share);
      hot = &t;
    } else {
      next_share = std::max(next_share, t.ps_share);
    }
  }
  const bool hot_explains =
      hot != nullptr && ps > 1 && hot->ps_share >= 0.5 && hot->ps_share >= 2 * next_share;
  std::string verdict =
      too_many_ps ? "too many PS, expect idle PS" : "too few PS, expect saturated PS";
  // The band is a starting point, "then tune by measurement": too many PS shows as idle PS
  // (vivo: under 10% CPU). Where every PS is busy at least loaded_min_busy_pct of the capture,
  // none is idle, and fewer PS would take their load onto the rest: the measurement says too
  // few, so the suggestion is twice the PS (independent suite, tune seeds 3012 and 3038: 2 PS
  // busy 49-74% and 30-42% for 3-4 workers, the band's 1 PS costs 41% and 49%, 4 PS buy 40%
  // and 33%).
  // A PS is busy on its ops or on its receive link (the gradients arriving, recv_busy_pct) where
  // its receives carry bytes, not latency (their mean over kMaxReceiveLatencyNs): one whose NIC
  // carries the step is not idle however little CPU it uses (gen3 report14 3330, spent: 3 PS for
  // 8 workers on 2 Gb/s NICs, ops 6% of the capture, receive links about half of it, receives of
  // 60-90 ms; the band's 2 PS cost 44%, 6 buy 51%). Receives of a fraction of a millisecond are
  // the RPCs' latency (gen2 report14 3000, spent: 16 PS for 28 workers, receives 0.2 ms, half
  // the capture; 9 PS cost nothing). The same load decides "every PS that busy" where the band
  // says too few PS (at least twice the PS, below). The mean is over the RecvTensor rows
  // (TaskStats::recv_count, recv_ns): a PS whose receives are all _Recv rows is read on its ops.
  auto load = [](const TaskStats& t) {
    const bool bytes =
        t.recv_count > 0 && double(t.recv_ns) / double(t.recv_count) >= kMaxReceiveLatencyNs;
    return bytes ? std::max(t.busy_pct, t.recv_busy_pct) : t.busy_pct;
  };
  const TaskStats* least = nullptr;
  for (const TaskStats& t : in.stats.tasks) {
    if (t.kind == JobKind::kPs && (least == nullptr || load(t) < load(*least))) least = &t;
  }
  // Every PS busy at least loaded_min_busy_pct (none idle), and no hot PS to explain it.
  const bool all_busy = !hot_explains && least != nullptr &&
                        rule.FindParam("loaded_min_busy_pct") != nullptr &&
                        load(*least) >= rule.Param("loaded_min_busy_pct");
  const bool loaded = too_many_ps && all_busy;
  // The measurement (ps_worker_ratio_measured.h): where the band says nothing, too few PS, or
  // too many while none is idle, the PS count the replay says buys the most. Too many PS with an
  // idle one keep the band's fewer PS.
  // A rule set without all six measured_* parameters (an older or partial rules file) does not
  // measure: Rule::Param's 0 for a missing one would measure every job or make every count medium.
  const bool measures = std::all_of(std::begin(kMeasuredParams), std::end(kMeasuredParams),
                                    [&](const char* p) { return rule.FindParam(p) != nullptr; });
  // The what-if replays the PS queues the workers' receives were tied to: without the capture's
  // cross-task transfers (a TF2 profile without rendezvous keys) those are inferred, and the
  // count would rest on the inference (tests/prediction_formats_test.cc: allreduce-candidate
  // measured from its XPlane and trace JSON without keys alone).
  // A lone PS under the band's low end has no fewer to give up: the measurement says whether
  // more buy anything (gen3 report6 1701: 1 PS for 2 workers of a sparse model, its link 97% of
  // the step in transfers; 2 PS buy 50%).
  MeasuredPsCount meas;
  PsCpuBound cpu;
  if (in.graph != nullptr && !in.capture.edges.empty() && (!too_many_ps || loaded || ps == 1) &&
      measures) {
    ReplayModel built;
    const ReplayModel& m = in.model != nullptr ? *in.model : (built = BuildReplayModel(in));
    // The PS links, where ComputeImpacts builds them (the FIFO replay's gates refuse it).
    ChosenLinks links;
    const bool want_links = !m.workers.empty() && (FixedTransferShare(m) > kMaxFixedTransferShare ||
                                                   UnexplainedWaitShare(m) > kMaxUnexplainedShare);
    if (want_links) links = ChooseLinks(in, m);
    cpu = ReadPsCpuBound(in, m, ReplayBaseline(m).miss, PsCpuBoundLimitsOf(rule));
    meas = MeasurePsCount(m, rule, want_links ? &links : nullptr, &cpu);
  }
  if (in_band && meas.count == 0) return out;
  Finding f = MakeFinding(rule, "job", "ps");
  if (loaded) {
    verdict = fmt::format(
        "more PS than the band, but no PS is idle: the least busy, {}, is busy {:.0f}% of the "
        "capture (at least {:.0f}%){}, so fewer PS would saturate the rest; by measurement the "
        "job has too few PS",
        least->label, load(*least), rule.Param("loaded_min_busy_pct"),
        load(*least) > least->busy_pct ? " on its receive link (gradients arriving)" : "");
  }
  if (in_band) verdict = "inside the band, but the PS bound the step by measurement";
  if (too_many_ps && !loaded && meas.count > 0) {
    verdict =
        "more PS than the band, but a lone PS has none to give up, and it bounds the step by "
        "measurement";
  }
  if (hot_explains) {
    verdict = fmt::format(
        "{}; but {} does {:.0f}% of all PS work{}: the other PS idle because of it, so partition "
        "what it holds across the PS before changing their count",
        too_many_ps ? "more PS than the band"
        : in_band   ? "inside the band"
                    : "fewer PS than the band",
        hot->label, 100 * hot->ps_share,
        hot->variables.empty() ? "" : " (it holds " + hot->variables[0].name + ")");
    f.cause = "a hot PS explains the PS load";
  }
  f.summary = fmt::format(
      "{} PS for {} workers ({:.2g} workers per PS) in a {} model (inferred: {}); the usual band "
      "is {:.2g}-{:.2g} workers per PS: {}",
      ps, workers, ratio, kind, why, lo, hi, verdict);
  f.evidence = {{"PS tasks", double(ps), "count"},
                {"worker tasks", double(workers), "count"},
                {"workers per PS", ratio, "ratio"},
                {"band low", lo, "ratio"},
                {"band high", hi, "ratio"}};
  int suggested = too_many_ps ? std::max(1, static_cast<int>(workers / lo))
                              : static_cast<int>((workers + hi - 1) / hi);
  // How the count departs from the band, in the fix text: the measurement's reason, or the hot
  // PS's partitioning first.
  std::string first, reason;
  if (meas.count > 0) {
    // By measurement: the count that buys nearly all the replay's best saving, whatever the band
    // says (inside it, or too few PS, or too many with none idle).
    suggested = meas.count;
    f.evidence.push_back({"busiest PS's op time x workers / threads over the median step",
                          meas.busiest_util, "ratio"});
    if (meas.over_links) {
      f.evidence.push_back({"busiest PS's links' load", 100 * meas.busiest_link, "%"});
    }
    if (meas.cpu_bound) {
      f.evidence.push_back({"busiest PS's busy share of the capture", cpu.busy_pct, "%"});
      f.evidence.push_back(
          {"the PS queues replayed alone off the measured step", 100 * meas.queued_miss, "%"});
      f.evidence.push_back(
          {"the replay with the waits held off the measured step", 100 * cpu.held_miss, "%"});
    }
    f.evidence.push_back({meas.convoy ? "the links convoy's saving of the suggested count"
                                      : "replayed saving of the suggested count",
                          100 * meas.saving, "%"});
    const std::string bound =
        meas.convoy
            ? fmt::format(
                  "the workers x the busiest PS's link time per worker step ({}) are {:.0f}% of "
                  "the step and the workers wait {:.0f}% of it on receives and transfers: a "
                  "convoy on its links, which spreads over more PS as the link time does (its "
                  "CPU {:.0f}% of its threads' time); of",
                  !meas.convoy_one_way ? "its answers out and gradients in"
                  : meas.convoy_under_band
                      ? "its busier direction alone, both ways overlapping by how much no profile "
                        "shows: under the convoy band, so its saving is uncertain"
                      : "its busier direction alone: its NIC carries both at once",
                  100 * meas.busiest_link, 100 * meas.convoy_wait, 100 * meas.busiest_util)
        : meas.over_links
            ? fmt::format(
                  "the busiest PS's link carries {:.0f}% of the step in transfers (its CPU {:.0f}% "
                  "of its threads' time); replaying with the PS NICs as links shared by the "
                  "transfers crossing them",
                  100 * meas.busiest_link, 100 * meas.busiest_util)
        : meas.cpu_bound
            ? fmt::format(
                  "{}'s op time x {} workers / {} threads is {:.2f} times the job's mean step and "
                  "it is busy {:.0f}% of the capture: its CPU bounds the throughput, whatever "
                  "order it serves its queue in; the PS queues replayed alone (no worker wait "
                  "held) give the measured step within {:.0f}% (the waits held: {:+.0f}%); "
                  "replaying them",
                  cpu.label, workers, cpu.threads, cpu.util, cpu.busy_pct,
                  std::abs(100 * meas.queued_miss), 100 * cpu.held_miss)
            : fmt::format("the busiest PS serves {:.0f}% of its threads' time; replaying",
                          100 * meas.busiest_util);
    reason = fmt::format(
        " (by measurement: {} {} PS counts from {} to {}, every variable re-partitioned over "
        "each, {} PS buy {:.0f}% of the step, the most any buys being {:.0f}% at {} PS{})",
        bound, meas.tried, meas.lo, meas.hi, meas.count, 100 * meas.saving, 100 * meas.best_saving,
        meas.best_count,
        meas.count == meas.best_count
            ? ""
            : fmt::format("; the smallest count within {:.0f}% of it is named",
                          100 * (1 - rule.Param("measured_near_best_pct") / 100)));
    if (100 * meas.saving >= rule.Param("measured_medium_saving_pct")) {
      f.severity = std::max(f.severity, Severity::kMedium);
    }
    if (hot_explains) {
      first = fmt::format(
          "partition what {} holds across the PS first (hot-ps's fix); then, if the PS are still "
          "saturated, ",
          hot->label);
    }
  } else if (loaded) {
    suggested = 2 * ps;
    f.evidence.push_back({"busy share of the least busy PS", load(*least), "%"});
    // The rule's fix text moves the count towards the band; here the measurement says the other
    // way, and the finding says so first.
    reason =
        fmt::format(" (every PS is busy at least {:.0f}% of the capture), not towards the band,",
                    rule.Param("loaded_min_busy_pct"));
  } else {
    // Too few PS and every PS that busy: the band's edge may leave them busy still, and the
    // measurement's step is twice the PS, as in the other direction; never past the band's low
    // end (workers / low): a count there would read "too many PS" at the next capture, and, its
    // PS still busy, be doubled again.
    const int busy_count = std::max(suggested, std::min(2 * ps, static_cast<int>(workers / lo)));
    if (!too_many_ps && all_busy && busy_count > suggested) {
      suggested = busy_count;
      f.evidence.push_back({"busy share of the least busy PS", load(*least), "%"});
    }
    // Fewer PS than one: the band's "too many" cannot be followed (a lone PS under the band's
    // low end has nothing to give up); no finding.
    if (suggested >= ps && too_many_ps) return out;
    // The band's fewer PS, replayed before they are suggested (ps_worker_ratio_fewer.h): the
    // fewest count from the band's up that keeps the step within fewer_max_loss_pct, or none.
    if (too_many_ps && in.graph != nullptr && !in.capture.edges.empty() &&
        rule.FindParam("fewer_max_loss_pct") != nullptr) {
      ReplayModel built;
      const ReplayModel& m = in.model != nullptr ? *in.model : (built = BuildReplayModel(in));
      const double max_loss = rule.Param("fewer_max_loss_pct") / 100;
      const FewerPsCheck fewer = CheckFewerPs(m, suggested, max_loss);
      if (fewer.judged && fewer.count != suggested) {
        f.evidence.push_back(
            {"replayed step at the band's count over today's, less 1", 100 * fewer.band_loss, "%"});
      }
      if (fewer.judged && fewer.count == 0) {
        // Every fewer count loses: the finding suggests none (no "suggested PS count"), says why,
        // and asks for nothing but what a hot PS needs first; INFO.
        const bool one_fewer = suggested == ps - 1;
        f.evidence.push_back(
            {"replayed step at one PS fewer over today's, less 1", 100 * fewer.least_loss, "%"});
        f.summary += fmt::format(
            "; but by replay fewer PS lengthen the step: the band's {} PS by up to {:.0f}%{} (over "
            "{:.0f}%), so the count stays",
            suggested, 100 * fewer.band_loss,
            one_fewer ? std::string()
                      : fmt::format(", {} PS by up to {:.0f}%", ps - 1, 100 * fewer.least_loss),
            100 * max_loss);
        f.severity = Severity::kInfo;
        f.fix = fmt::format(
            "For this job: {}keep {} PS. The band's {} PS, every variable re-partitioned over "
            "them, "
            "replay up to {:.0f}% slower{}: {} Idle PS cost pods and gRPC channels, not step "
            "time (idle-ps names any that do almost nothing).",
            hot_explains ? fmt::format("partition what {} holds across the PS (hot-ps's fix), and "
                                       "then ",
                                       hot->label)
                         : std::string(),
            ps, suggested, 100 * fewer.band_loss,
            one_fewer ? std::string()
                      : fmt::format(", and {} PS up to {:.0f}%", ps - 1, 100 * fewer.least_loss),
            hot_explains ? "the PS left idle by the hot one are not surplus either."
                         : "the PS are idle between the workers' requests, which arrive together, "
                           "not surplus.");
        f.range_start = in.capture.start;
        f.range_end = in.capture.end;
        out.push_back(std::move(f));
        return out;
      }
      if (fewer.judged && fewer.count > suggested) {
        // Where the replay of that count is not trusted (threads beyond the cores the capture
        // shows: fewer PS replay fast; part ops outweighing the work), the text says so.
        std::string caveat = FewerPsNotModelled(m, fewer.count);
        if (caveat.empty()) caveat = PartOpsOutweighWork(m, fewer.count);
        reason = fmt::format(
            " (the fewest PS that replay within {:.0f}% of today's step, every variable "
            "re-partitioned over them: the band's {} PS replay up to {:.0f}% slower{})",
            100 * max_loss, suggested, 100 * fewer.band_loss,
            caveat.empty() ? std::string() : "; but " + caveat);
        suggested = fewer.count;
      }
    }
    // Where a hot PS explains the load, its partitioning comes first, as the summary says; the
    // count's prediction re-partitions every variable, the hot one included.
    if (hot_explains) {
      first = fmt::format(
          "partition what {} holds across the PS first (hot-ps's fix); then, if the PS are still "
          "{}, ",
          hot->label, too_many_ps ? "idle" : "saturated");
    }
  }
  // The count the fix model replays, in the fix text (issue 44: the text says how many PS to run,
  // and the prediction is of exactly that).
  f.fix = fmt::format(
      "For this job: {}run {} PS instead of {}{} and re-partition every variable over them "
      "(fixed_size_partitioner({})). {}",
      first, suggested, ps, reason, suggested, f.fix);
  f.evidence.push_back({"suggested PS count", double(suggested), "count"});
  f.range_start = in.capture.start;
  f.range_end = in.capture.end;
  out.push_back(std::move(f));
  return out;
}

FixPlan PsWorkerRatioFix(const AnalysisInput& in, const ReplayModel& m, const Finding& f,
                         const Rule&) {
  if (m.workers.empty() || in.graph == nullptr) return {};
  FixPlan plan;
  for (const Figure& e : f.evidence) {
    if (e.label == "suggested PS count") plan.fix.ps_count = static_cast<int>(e.value);
  }
  if (plan.fix.ps_count <= 0 || plan.fix.ps_count == in.stats.num_ps) {
    plan.fix.ps_count = 0;
    plan.why = "the finding suggests no other PS count";
    return plan;
  }
  plan.why = FewerPsNotModelled(m, plan.fix.ps_count);
  if (plan.why.empty()) plan.why = PartOpsOutweighWork(m, plan.fix.ps_count);
  if (!plan.why.empty()) {
    plan.fix = Fix{};
    return plan;
  }
  plan.estimated = FewerPsCaveat(m, plan.fix.ps_count);
  plan.what = fmt::format(
      "{} PS -> {} (the finding's suggested count), the variables partitioned over the new count "
      "as the fix text says (fixed_size_partitioner(num_ps)): all PS work spread evenly, each "
      "part op at the PS's fixed cost per op{}",
      in.stats.num_ps, plan.fix.ps_count,
      f.cause.empty() ? "" : fmt::format(" ({}: the partitioning spreads it too)", f.cause));
  return plan;
}

}  // namespace tfdiag
