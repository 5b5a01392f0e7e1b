#include "analyzers/slow_ps_link.h"

#include <fmt/format.h>

#include <algorithm>

#include "analyzers/capture_queries.h"
#include "analyzers/slow_ps_host.h"
#include "core/duration.h"
#include "core/median.h"

namespace tfdiag {

namespace {

// The live figures of `task` (the process sampled longest when it has several), or nullptr.
const ProcessStats* LiveProcess(const AnalysisInput& in, std::string_view task) {
  const ProcessStats* best = nullptr;
  for (const ProcessStats& p : in.processes) {
    if (p.task == task && (best == nullptr || p.samples > best->samples)) best = &p;
  }
  return best;
}

// Voluntary context switches per second of `task`'s process: /proc (ProcessStats), else the
// eBPF sched probe (SchedStats); -1 unknown.
double VoluntaryPerS(const AnalysisInput& in, std::string_view task) {
  const ProcessStats* p = LiveProcess(in, task);
  if (p == nullptr) return -1;
  if (p->voluntary_per_s >= 0) return p->voluntary_per_s;
  for (const SchedStats& s : in.sched) {
    if (s.process == p->process && s.window_s > 0) return double(s.voluntary) / s.window_s;
  }
  return -1;
}

// The pull wait of `worker`'s median step that a PS's answer ended last (as analyzers/
// nic_rate.cc reads it): that PS (kNoIndex when none) and the wait's span.
struct LastAnswer {
  uint32_t from = kNoIndex;
  TimeNs start = 0, end = 0;
};
LastAnswer LastAnswerOf(const AnalysisInput& in, uint32_t worker) {
  LastAnswer a;
  if (in.graph == nullptr) return a;
  const StepGraph& g = *in.graph;
  const uint32_t s = g.MedianStep(worker);
  if (s == kNoIndex) return a;
  const StepNode& n = g.steps()[s];
  for (uint32_t i = n.waits_begin; i < n.waits_end; ++i) {
    const StepWait& w = g.waits()[i];
    if (w.step_tail || w.edge == kNoIndex || w.end < a.end) continue;
    const GraphEdge& e = g.edges()[w.edge];
    if (e.push || e.ambiguous() || e.src_task >= in.capture.tasks.size() ||
        in.capture.tasks[e.src_task].kind != JobKind::kPs) {
      continue;
    }
    a = {e.src_task, w.start, w.end};
  }
  return a;
}

// Whether PS `task` finished an op inside [start, end]: its answer was on its way during that
// wait.
bool AnsweredDuring(const AnalysisInput& in, uint32_t task, TimeNs start, TimeNs end) {
  const TaskStats* t = task < in.stats.tasks.size() && in.stats.tasks[task].task == task
                           ? &in.stats.tasks[task]
                           : nullptr;
  if (t == nullptr) return false;
  bool hit = false;
  ForEachOpOfTask(in.capture, *t, [&](const OpRow& op) {
    const TimeNs done = op.start + op.dur();
    hit = hit || (done >= start && done <= end);
  });
  return hit;
}

constexpr const char* kBlockingLabel = "voluntary context switches per op, over the other PS's";

// The slowdown the fix takes out: the upper median of the PS's bounds against the other PS
// (slow-ps-host's kUpperSlowdownLabel; against two, the other PS that runs fastest), not their
// lower median, the "at least" the rule fires on. The link's transfers slow the other PS's ops
// too: a worker's requests to them wait behind its transfers to the link-bound PS, and on a
// host they share, the kernel's work for the shaped link runs on their CPUs. twins-live's
// slow-link shape and three variants of it (session 45, bench/README.md): the unshaped twin's
// ps:1 ran 2.3x-5.7x faster than the shaped ps:1, the lower median read 2.0x-2.7x, the upper
// 2.3x-4.9x; the slower of the other two PS ran its applies 2.5x the faster's in the variant with
// the least PS CPU.
constexpr std::string_view kFixSlowdownLabel =
    "slowdown its fix takes out (upper median of its bounds)";

}  // namespace

std::vector<size_t> JudgeSlowPsLink(const std::vector<PsLinkFigures>& ps, double min_ps,
                                    double min_slowdown, double min_blocking_ratio,
                                    std::vector<double>* ratio) {
  std::vector<size_t> out;
  ratio->clear();
  auto per_op = [](const PsLinkFigures& p) {
    return p.voluntary_per_s >= 0 && p.ops_per_s > 0 ? p.voluntary_per_s / p.ops_per_s : -1.0;
  };
  for (size_t i = 0; i < ps.size(); ++i) {
    // A slowdown of at most 1 (none, or a rule set whose min_slowdown allows it) has no link time.
    if (ps[i].slowdown <= 1 || ps[i].slowdown < min_slowdown || per_op(ps[i]) < 0) continue;
    std::vector<double> others;
    for (size_t j = 0; j < ps.size(); ++j) {
      if (j != i && per_op(ps[j]) >= 0) others.push_back(per_op(ps[j]));
    }
    // The PS judged and at least min_ps - 1 others with live figures (as slow-ps-host compares).
    if (others.size() + 1 < size_t(std::max(2.0, min_ps))) continue;
    const double ref = UpperMedian(others);
    if (ref <= 0) continue;
    const double r = per_op(ps[i]) / ref;
    if (r < min_blocking_ratio) continue;
    out.push_back(i);
    ratio->push_back(r);
  }
  return out;
}

std::vector<Finding> RunSlowPsLink(const AnalysisInput& in, const Rule& rule) {
  std::vector<Finding> out;
  if (in.processes.empty()) return out;  // no live figures: a link cannot be told from a host
  // The slowdown, as slow-ps-host measures it, with this rule's thresholds.
  std::vector<Finding> slow = RunSlowPsHost(in, rule);
  if (slow.empty()) return out;
  std::vector<PsLinkFigures> rows;
  std::vector<const TaskStats*> stats;
  std::vector<double> upper;  // per row: the slowdown the fix takes out (kFixSlowdownLabel)
  for (const TaskStats& t : in.stats.tasks) {
    if (t.kind != JobKind::kPs || t.busy_ns <= 0 || t.busy_pct <= 0) continue;
    PsLinkFigures r;
    r.task = t.label;
    r.busy_pct = t.busy_pct;
    r.voluntary_per_s = VoluntaryPerS(in, t.label);
    const double seconds = double(t.busy_ns) / (t.busy_pct / 100) / 1e9;  // its captures' time
    r.ops_per_s = seconds > 0 ? double(t.ops) / seconds : -1;
    double up = 0;
    for (const Finding& f : slow) {
      if (f.subject == t.label) r.slowdown = SlowPsHostSlowdown(f), up = SlowPsHostUpperSlowdown(f);
    }
    rows.push_back(r);
    upper.push_back(std::max(up, r.slowdown));
    stats.push_back(&t);
  }
  std::vector<double> ratio;
  const std::vector<size_t> fire =
      JudgeSlowPsLink(rows, rule.Param("min_ps"), rule.Param("min_slowdown"),
                      rule.Param("min_blocking_ratio"), &ratio);
  for (size_t k = 0; k < fire.size(); ++k) {
    const PsLinkFigures& r = rows[fire[k]];
    const TaskStats& t = *stats[fire[k]];
    const ProcessStats* p = LiveProcess(in, r.task);
    Finding f = MakeFinding(rule, "task", r.task);
    f.task = r.task;
    if (t.busy_pct < rule.Param("min_busy_pct")) f.severity = Severity::kLow;
    const double per_op = r.voluntary_per_s / r.ops_per_s;
    // Of its op time, what it would take at the speed of the other PS the link slows least (the
    // upper median of its bounds: see kFixSlowdownLabel); the rest waits for the link.
    const double op_share = double(t.op_time_ns) / (double(t.busy_ns) / (t.busy_pct / 100));
    const double fix_slowdown = upper[fire[k]], link_share = 1 - 1 / fix_slowdown;
    f.summary = fmt::format(
        "{} runs its ops at least {:.1f}x slower than the other PS on variables of like size "
        "while it sleeps {:.1f}x as often per op as they do ({:.1f} voluntary context switches "
        "per op): its ops wait on its sockets, so its network link, not its CPU, is the limit",
        r.task, r.slowdown, ratio[k], per_op);
    f.evidence = {{"slowdown", r.slowdown, "ratio"},
                  {std::string(kFixSlowdownLabel), fix_slowdown, "ratio"},
                  {kBlockingLabel, ratio[k], "ratio"},
                  {"voluntary context switches per op on " + r.task, per_op, "count"},
                  {"voluntary context switches per second on " + r.task, r.voluntary_per_s, "/s"},
                  {"ops per second on " + r.task, r.ops_per_s, "/s"},
                  {"busy share of the capture", t.busy_pct, "%"},
                  {"share of the capture its ops wait for the link (assumed: their time beyond "
                   "the speed of the other PS it slows least)",
                   100 * op_share * link_share, "%"}};
    if (p != nullptr && p->cpu_cores > 0) {
      f.evidence.push_back(
          {"CPU used (incl. the kernel's network work for it)", p->cpu_cores, "CPUs"});
    }
    std::string rate = "not measured (the capture does not size its answers)";
    if (t.bytes_out > 0 && t.op_time_ns > 0) {
      // Its answers' bytes over the time its ops waited beyond the other PS's: an estimate (part
      // of a transfer can fall outside its ops, and its ops also take in the gradients).
      const double waited_s = double(t.op_time_ns) * link_share / 1e9;
      const double bps = waited_s > 0 ? double(t.bytes_out) / waited_s : 0;
      if (bps > 0) {
        f.evidence.push_back({"link rate its answers' bytes over that wait give (an estimate)",
                              bps * 8 / 1e6, "Mbit/s"});
        rate =
            fmt::format("about {:.0f} Mbit/s from its answers' bytes (an estimate)", bps * 8 / 1e6);
      }
    }
    f.summary += fmt::format(
        "; measured: op times and variable sizes (timeline), context switches (/proc or the sched "
        "probe); the "
        "link's bandwidth: {}",
        rate);
    f.fix = fmt::format(
                "For {0}: put it on a node whose network link has the other PS's bandwidth (its "
                "ops take {1:.1f}x theirs on like-sized variables, about {2:.0f}% of its op time "
                "waiting on the link), or spread its variables over more PS so fewer bytes "
                "cross its link.\n",
                r.task, fix_slowdown, 100 * link_share) +
            f.fix;
    for (const VariableLoad& v : t.variables) {
      if (f.ops.size() >= 5) break;
      if (v.bytes > 0) f.ops.push_back(v.name);
    }
    f.range_start = in.capture.start;
    f.range_end = in.capture.end;
    out.push_back(std::move(f));
  }
  return out;
}

FixPlan SlowPsLinkFix(const AnalysisInput& in, const ReplayModel& m, const Finding& f,
                      const Rule&) {
  FixPlan plan;
  // The PS's op times at the other PS's speed, as slow-ps-host's move models them.
  const std::vector<std::string> moved = AddHostSpeedups(in, f, &plan.fix, kFixSlowdownLabel);
  if (moved.empty()) {
    plan.why = "the finding has no slowdown of the PS's ops to undo";
    return plan;
  }
  // The worker's side of the same transfers: where the worker's median step shows a link-bound
  // PS's answer in its last pull wait, its exposed wait and that answer's transfer (both held
  // fixed by the replay) are shortened by the share of the PS's op time its link takes, 1 -
  // 1 / slowdown (assumed: the link stretches each transfer at the worker's end as much as at
  // the PS's; the capture does not show which part of the wait each answer's bytes took). The
  // replay's recv_cut takes that share out of both (replay_plan.cc).
  double cut_ns = 0, share = 0;
  for (const ReplayModel::Worker& w : m.workers) {
    if (w.recv_ns + w.pull_xfer_ns <= 0) continue;
    // The last answer came from a link-bound PS, or one of its answers was on its way in that
    // wait (a worker that takes its answers one after another, as psload's does, reads the
    // last one behind it).
    const LastAnswer last = LastAnswerOf(in, w.task);
    if (last.from == kNoIndex) continue;
    double s = 0;
    for (const auto& [task, x] : plan.fix.host_speedup) {
      if (task == last.from || AnsweredDuring(in, task, last.start, last.end)) {
        s = std::max(s, 1 - 1 / x);
      }
    }
    if (s <= 0) continue;
    plan.fix.recv_cut.emplace_back(w.task, s);
    cut_ns = std::max(cut_ns, s * (w.recv_ns + w.pull_xfer_ns));
    share = std::max(share, s);
  }
  if (cut_ns > 0) {
    plan.estimated = fmt::format(
        "the {} a step it gives back of the workers' wait and last answer's transfer is an "
        "estimate ({:.0f}% of them, the share of the PS's op time its link takes)",
        FormatDurationShort(cut_ns), 100 * share);
  }
  plan.what =
      fmt::format("{} on a link with the other PS's bandwidth (op times / slowdown{})",
                  fmt::join(moved, " and "),
                  cut_ns > 0 ? fmt::format("; {} a step from the workers' wait and answer transfer",
                                           FormatDurationShort(cut_ns))
                             : std::string());
  return plan;
}

void FoldSlowHostIntoLink(std::vector<Finding>* findings) {
  // The PS a finding names: its objects (a group) or its subject.
  auto subjects = [](const Finding& f) {
    std::vector<std::string> out;
    for (const FindingObject& o : f.objects) out.push_back(o.subject);
    if (out.empty()) out.push_back(f.subject);
    return out;
  };
  for (size_t l = 0; l < findings->size(); ++l) {
    if ((*findings)[l].rule_id != "slow-ps-link") continue;
    for (const std::string& ps : subjects((*findings)[l])) {
      for (size_t h = 0; h < findings->size(); ++h) {
        Finding& host = (*findings)[h];
        if (host.rule_id != "slow-ps-host" || !host.Covers(ps)) continue;
        // The host finding's figures for this PS: its object's, or its own when it names one PS.
        std::vector<Figure> figures = host.evidence;
        auto o = std::find_if(host.objects.begin(), host.objects.end(),
                              [&](const FindingObject& x) { return x.subject == ps; });
        if (o != host.objects.end()) figures = o->evidence;
        Finding& link = (*findings)[l];
        const std::string clause = fmt::format(
            "; slow-ps-host on {} folded in: its ops are slow because they wait on its link, so "
            "moving it to a host of the same link would not help",
            ps);
        auto lo = std::find_if(link.objects.begin(), link.objects.end(),
                               [&](const FindingObject& x) { return x.subject == ps; });
        std::vector<Figure>& into =
            lo != link.objects.end() && link.objects.size() > 1 ? lo->evidence : link.evidence;
        for (const Figure& x : figures) {
          into.push_back({"also: slow-ps-host: " + x.label, x.value, x.unit});
        }
        if (lo != link.objects.end() && link.objects.size() > 1) {
          lo->summary += clause;
        } else {
          link.summary += clause;
          for (FindingObject& x : link.objects)
            x.evidence = link.evidence, x.summary = link.summary;
        }
        // The PS leaves the host finding; a group of one becomes that PS's finding, none goes.
        if (o != host.objects.end()) host.objects.erase(o);
        if (host.objects.size() == 1) {
          const FindingObject rest = host.objects[0];
          host.subject = rest.subject, host.task = rest.task, host.summary = rest.summary;
          host.evidence = rest.evidence, host.ops = rest.ops;
        }
        if (host.objects.empty() || host.subject == ps) {
          findings->erase(findings->begin() + long(h));
          if (h < l) --l;
        }
        break;
      }
    }
  }
}

}  // namespace tfdiag
