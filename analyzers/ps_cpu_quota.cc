#include "analyzers/ps_cpu_quota.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/duration.h"
#include "core/median.h"

namespace tfdiag {

namespace {

// The live figures of `task` (the process sampled longest when it has several), or nullptr.
const ProcessStats* ProcessOf(const AnalysisInput& in, std::string_view task) {
  const ProcessStats* best = nullptr;
  for (const ProcessStats& p : in.processes) {
    if (p.task == task && (best == nullptr || p.samples > best->samples)) best = &p;
  }
  return best;
}

// The share of wall time the process's cgroup was throttled over its samples' window, [0, 1];
// -1 unknown. cpu.stat's throttled time sums the throttled spans of the cgroup's run queues, one
// per CPU its threads ran on, so a multi-threaded PS can show more than its window: capped at 1.
double ThrottledShare(const ProcessStats& p) {
  if (p.throttled_s < 0 || p.window_s <= 0) return -1;
  return std::clamp(p.throttled_s / p.window_s, 0.0, 1.0);
}

constexpr const char* kExplainedLabel = "slowdown of its ops the stopped time explains";

// Where a throttled PS's time goes, as shares of wall time: busy in its ops (the timeline), on
// a CPU (its CPU time, inside and outside its ops), and stopped while it could run: the larger of
// the cgroup's throttled share and the run-queue wait of its threads (schedstat or the eBPF
// sched probe: a throttled thread is runnable but off the CPU, which the kernel's throttled
// time, counted from when the throttle takes the run queue, undercounts). Unthrottled, the PS
// still waits for a CPU as the job's unthrottled PS on the capture's nodes do (`peer_wait`:
// their median share of runnable time on a run queue; 0 without one): its ops keep its CPU time
// over 1 - peer_wait. Of the stopped time, what falls inside the ops is at most their busy time
// less that; the rest held requests before their ops started.
struct QuotaStop {
  double busy = 0, cpu = 0, stopped = 0, in_ops = 0, peer_wait = 0;
  std::string source;  // which counter gave `stopped`
};

// The median run-queue wait share of the PS processes that are not throttled (CFS periods
// throttled under `min_periods` percent, or no quota), 0 when none has run-queue figures.
double PeerWait(const AnalysisInput& in, double min_periods) {
  std::vector<double> w;
  for (const ProcessStats& p : in.processes) {
    if (p.kind != JobKind::kPs || (p.cpu_limit > 0 && p.throttled_pct >= min_periods)) continue;
    for (const SchedStats& x : in.sched) {
      if (x.process == p.process && x.window_s > 0 && x.runq_wait_share >= 0) {
        w.push_back(x.runq_wait_share);
      }
    }
  }
  if (w.empty()) return 0;
  std::nth_element(w.begin(), w.begin() + w.size() / 2, w.end());
  return std::clamp(w[w.size() / 2], 0.0, 0.9);
}

QuotaStop StopOf(const AnalysisInput& in, const ProcessStats& p, double busy, double peer_wait) {
  QuotaStop s;
  s.busy = std::clamp(busy, 0.0, 1.0);
  s.cpu = std::max(0.0, p.cpu_cores);
  s.peer_wait = peer_wait;
  s.stopped = std::max(0.0, ThrottledShare(p));
  s.source = "cgroup throttled time";
  for (const SchedStats& x : in.sched) {
    if (x.process != p.process || x.window_s <= 0 || x.runq_wait_share < 0) continue;
    const double wait = std::clamp(x.cpu_demand - x.oncpu_cores, 0.0, 1.0);
    if (wait > s.stopped) s.stopped = wait, s.source = "run-queue wait of its threads";
  }
  const double kept = s.cpu / (1 - peer_wait);  // its ops' time unthrottled, at the least
  s.in_ops = std::clamp(std::min(s.stopped, s.busy - kept), 0.0, 0.95 * s.busy);
  return s;
}

}  // namespace

std::vector<Finding> RunPsCpuQuota(const AnalysisInput& in, const Rule& rule) {
  std::vector<Finding> out;
  const double min_periods = rule.Param("min_throttled_pct");
  const double min_time = rule.Param("min_throttled_time_pct") / 100;
  const double high_time = rule.Param("high_throttled_time_pct") / 100;
  for (const ProcessStats& p : in.processes) {
    if (p.kind != JobKind::kPs || p.samples < 2 || p.throttled_pct < min_periods) continue;
    const double share = ThrottledShare(p);
    if (share < min_time) continue;
    if (ProcessOf(in, p.task) != &p) continue;  // one finding per task
    const ProcessRow& row = in.capture.processes[p.process];
    Finding f = MakeFinding(rule, "task", p.task);
    f.task = p.task;
    f.severity = share >= high_time ? rule.severity : std::min(rule.severity, Severity::kMedium);
    const std::string who = ProcessWho(in.capture, row);
    const double limit = p.cpu_limit > 0 ? p.cpu_limit : row.cpu_limit;
    // What the PS would use unthrottled, at least: the CPU it got over the time it could run.
    const double demand = p.cpu_cores / std::max(0.05, 1 - share);
    const double per_throttle = p.periods > 0 && p.throttled_pct > 0
                                    ? p.throttled_s / (p.periods * p.throttled_pct / 100)
                                    : -1;
    f.summary = fmt::format(
        "{}{} is throttled by its CFS quota in {:.0f}% of CFS periods and {:.0f}% of the time "
        "({:.2g} CPU limit, {:.2f} CPUs used): it answers no worker while its quota is spent",
        p.task, who.empty() ? "" : " (" + who + ")", p.throttled_pct, 100 * share, limit,
        p.cpu_cores);
    f.evidence = {
        {"throttled CFS periods", p.throttled_pct, "%"},
        {"time throttled (share of wall time)", 100 * share, "%"},
        {"CPU limit (CFS quota / period)", limit, "CPUs"},
        {"CPU used", p.cpu_cores, "CPUs"},
        {"CPU it would use unthrottled, at least (used / unthrottled share)", demand, "CPUs"}};
    if (row.quota_us > 0 && row.period_us > 0) {
      f.evidence.push_back({"CFS quota", double(row.quota_us), "us"});
      f.evidence.push_back({"CFS period", double(row.period_us), "us"});
    }
    if (per_throttle > 0) {
      f.evidence.push_back({"throttled per throttled period", per_throttle * 1e6, "us"});
    }
    if (const TaskStats* t = in.stats.Find(p.task); t != nullptr && t->busy_ns > 0) {
      const QuotaStop stop = StopOf(in, p, t->busy_pct / 100, PeerWait(in, min_periods));
      f.evidence.push_back({"busy share of the capture (ops)", t->busy_pct, "%"});
      f.evidence.push_back(
          {"stopped while runnable (" + stop.source + ")", 100 * stop.stopped, "%"});
      f.evidence.push_back({kExplainedLabel, stop.busy / (stop.busy - stop.in_ops), "ratio"});
      f.summary += fmt::format("; its ops are busy {:.0f}% of the capture, on a CPU {:.0f}%",
                               t->busy_pct, 100 * std::min(stop.cpu, stop.busy));
    }
    f.summary += "; evidence: cgroup cpu.stat (nr_periods, nr_throttled, throttled time)";
    const int whole = std::max(1, static_cast<int>(std::ceil(demand - 1e-9)));
    f.fix = fmt::format(
                "For {0}: a CPU limit of at least {1} CPU{2} (it uses {3:.2f} of its {4:.2g} and "
                "would use at least {5:.2f} unthrottled), with the request equal to the limit in "
                "whole CPUs (Guaranteed QoS), or no CPU limit on the PS replica.\n",
                p.task, whole, whole == 1 ? "" : "s", p.cpu_cores, limit, demand) +
            f.fix;
    f.ops = {std::string(in.capture.Str(row.cgroup))};
    f.range_start = row.first_ns;
    f.range_end = row.last_ns;
    out.push_back(std::move(f));
  }
  return out;
}

double QuotaHoldShare(double stopped, double in_ops, double busy) {
  if (!std::isfinite(stopped) || !std::isfinite(in_ops) || !std::isfinite(busy)) return 0;
  const double outside = std::clamp(1 - busy, 0.0, 1.0);
  const double direct = std::clamp(stopped - in_ops, 0.0, outside);
  if (stopped <= outside) return direct;
  // Stopped longer than it is outside its ops: from the direct share at stopped = outside, up to
  // all of its time outside them at stopped = outside + in_ops (then nothing outside its ops can
  // be shown free of the quota), linearly: no jump at the boundary.
  const double t = in_ops > 0 ? std::min(1.0, (stopped - outside) / in_ops) : 1.0;
  return direct + t * (outside - direct);
}

QuotaCut CutQuotaHolds(const ReplayModel& m, double hold_ns, double mode_excess_ns, Fix* fix) {
  QuotaCut out;
  hold_ns = std::max(0.0, hold_ns), mode_excess_ns = std::max(0.0, mode_excess_ns);
  if (hold_ns + mode_excess_ns <= 0) return out;
  for (const ReplayModel::Worker& w : m.workers) {
    const double waited = w.recv_ns + w.tail_ns;
    if (!(waited > 0)) continue;
    const double cut = std::min(1.0, (hold_ns + mode_excess_ns) / waited);
    fix->recv_cut.emplace_back(w.task, cut);
    fix->tail_cut.emplace_back(w.task, cut);
    out.cut_ns = std::max(out.cut_ns, cut * waited);
    out.excess_ns = std::max(out.excess_ns, cut * waited - hold_ns);
  }
  return out;
}

FixPlan PsCpuQuotaFix(const AnalysisInput& in, const ReplayModel& m, const Finding& f,
                      const Rule& rule) {
  FixPlan plan;
  const double peer_wait = PeerWait(in, rule.Param("min_throttled_pct"));
  std::vector<std::string> done;
  double before_ops = 0;  // stopped share of wall time outside the ops, the most of the PS
  double period_ns = 0;   // the longest CFS period of the throttled PS
  auto add = [&](const std::string& task) {
    const uint32_t t = in.capture.FindTask(task);
    const ProcessStats* p = ProcessOf(in, task);
    const TaskStats* ts = in.stats.Find(task);
    if (t == kNoIndex || p == nullptr || ts == nullptr || ts->busy_ns <= 0) return;
    for (const auto& [x, s] : plan.fix.host_speedup) {
      if (x == t) return;
    }
    const QuotaStop stop = StopOf(in, *p, ts->busy_pct / 100, peer_wait);
    if (stop.in_ops <= 0) return;
    if (p->process < in.capture.processes.size()) {
      period_ns = std::max(period_ns, 1e3 * double(in.capture.processes[p->process].period_us));
    }
    const double speedup = stop.busy / (stop.busy - stop.in_ops);
    plan.fix.host_speedup.emplace_back(t, speedup);
    // The stopped time outside its ops, which held requests before their ops started. Taken as
    // the stopped time less its part inside the ops, it is the difference of two large shares
    // (twins-live's quota shape: 79-83% stopped, 72% inside the ops; a 2-point error in the
    // stopped share moved the prediction by 10%, and captures of one job were predicted 3.9 to
    // 5.2 ms against twins of 3.4-4.5 ms). A PS stopped for at least as long as it is outside
    // its ops cannot be shown to start any request at once outside them: each worker's wait for
    // it there (the wait its queue does not explain) is then a hold, up to that time.
    before_ops = std::max(before_ops, QuotaHoldShare(stop.stopped, stop.in_ops, stop.busy));
    done.push_back(fmt::format(
        "{} (stopped {:.0f}% of the time, {}; its ops busy {:.0f}% with {:.0f}% on a CPU{}: op "
        "times / {:.2f})",
        task, 100 * stop.stopped, stop.source, 100 * stop.busy, 100 * stop.cpu,
        stop.peer_wait > 0
            ? fmt::format(", which unthrottled still waits {:.0f}% of its runnable time for a "
                          "CPU as the other PS do",
                          100 * stop.peer_wait)
            : "",
        speedup));
  };
  add(f.subject);
  for (const FindingObject& o : f.objects) add(o.subject);
  if (done.empty()) {
    plan.why = in.capture.ops.empty()
                   ? "no timeline of the PS: live samples alone do not show the step to replay"
                   : "the throttled PS has no ops in the timeline, or no stopped time in them";
    return plan;
  }
  // The steps a quota makes fall in modes a CFS period apart (a step whose requests meet a stop
  // waits for the next period, one that does not waits for none), and with as many steps of
  // each the median is either mode, from one capture of the job to the next; the replay serves
  // each op at its measured time per step, stops spread over them, and reproduces the mean
  // step. Judged against it where it misses the median (PsCpuQuotaLive: a median of 12.2 ms
  // among steps of about 10 and 20 ms, replayed 13.9 ms, was withheld for a 14% miss), and
  // only where the steps show the modes: their interquartile range at least half a CFS period
  // (a stop adds up to a period less the quota to the step that meets it).
  std::vector<double> means;
  const bool modes = period_ns > 0 && m.step_q3_ns - m.step_q1_ns >= period_ns / 2;
  for (const ReplayModel::Worker& w : m.workers) {
    if (!modes) break;
    const TaskStats* ws = in.stats.Find(in.capture.TaskLabelOf(w.task));
    if (ws != nullptr && ws->steps > 0 && ws->step_mean_ns > 0) {
      means.push_back(double(ws->step_mean_ns));
    }
  }
  if (!means.empty()) {
    plan.mean_step_ns = MedianInPlace(&means);
    plan.mean_step_why = fmt::format(
        "a PS stopped by its CFS quota puts the steps in modes a period apart (the middle half "
        "of the steps spans {}, the period {}), and the replay spreads its stops over its ops",
        FormatDurationShort(m.step_q3_ns - m.step_q1_ns), FormatDurationShort(period_ns));
  }
  // The rest of the stopped time: requests that waited for the throttled PS before their op
  // started, in each worker's wait the PS queue does not explain: its receive time beyond the
  // replayed pull wait (a pull held) and its idle time after the push beyond the replayed applies
  // (a push held: its apply waits for the quota as a gather does), the same share of each. Cut
  // from the receive time alone, a worker whose held pushes were its idle tail kept them: on
  // twins-live's quota shape (session 24) the tail held 1.2 ms of a 2.6 ms unexplained wait, the
  // cut stopped at the 1.4 ms of receive time, and the prediction was +23% to +48% off its twin.
  // In the quota's modes the median step lies in the long mode, and so do the medians of each
  // worker's waits the held wait is read from, while the PS's op time per step (stops and all)
  // is a mean over the modes: the held wait then holds the median step's excess over the mean
  // too, a stop the quota made, which the fix removes with the modes (twins-live's quota shape,
  // session 41: medians 18.8 and 19.4 ms over means 16.2 and 16.9 ms, 1.7-2.1 ms of 3.7-4.1 ms
  // of held wait cut, predicted 4.8 and 4.9 ms against twins of 3.1 ms; with the excess, 2.7 and
  // 2.9 ms).
  // Only where the replay as is (the held wait in it) meets the median step: one judged against
  // the mean (ImpactReplay::on_mean) holds no such excess.
  // (The replay as is, which ComputeImpacts runs again, only where there is an excess to take.)
  double mode_excess_ns =
      plan.mean_step_ns > 0 ? std::max(0.0, m.measured_step_ns - plan.mean_step_ns) : 0.0;
  if (mode_excess_ns > 0 && std::abs(ReplayBaseline(m).miss) > kMaxBaselineMiss) {
    mode_excess_ns = 0;
  }
  // A step of 0 gives no hold and no excess: CutQuotaHolds cuts nothing.
  const QuotaCut held =
      CutQuotaHolds(m, before_ops * std::max(0.0, m.measured_step_ns), mode_excess_ns, &plan.fix);
  if (held.cut_ns > 0) {
    plan.estimated = fmt::format(
        "the {} a step it takes from the workers' wait before the PS starts their requests is "
        "an estimate (its stopped time beyond its ops{}; the capture does not show when each "
        "request reached it)",
        FormatDurationShort(held.cut_ns),
        held.excess_ns > 0
            ? fmt::format(", and {} of the median step's excess over the mean, the quota's long "
                          "mode",
                          FormatDurationShort(held.excess_ns))
            : std::string());
  }
  plan.what = fmt::format(
      "the CFS quota of {} raised or removed: its stopped time goes from its ops and, {} per "
      "step, from the workers' wait before it starts their requests",
      fmt::join(done, " and "), FormatDurationShort(held.cut_ns));
  return plan;
}

namespace {

// `other`'s figures join `quota`'s evidence ("also: <rule>: <label>"), its note the summary.
void Absorb(const Finding& other, const std::string& note, Finding* quota) {
  for (const Figure& fig : other.evidence) {
    quota->evidence.push_back({"also: " + other.rule_id + ": " + fig.label, fig.value, fig.unit});
  }
  quota->summary += "; " + note;
  for (FindingObject& o : quota->objects) {
    if (o.subject == quota->subject) o.evidence = quota->evidence, o.summary = quota->summary;
  }
}

// Whether `it` (a finding on `quota`'s PS alone) is one ps-cpu-quota explains; *note says why.
bool Explained(const Finding& quota, const Finding& it, const QuotaFolds& folds,
               std::string* note) {
  if (it.subject != quota.subject || it.objects.size() > 1) return false;
  if (it.rule_id == "hot-ps") {
    // Hot because the quota stops it: at the speed the stopped time explains, its op time is
    // under hot-ps's min_ratio_to_next x the busiest other PS's (partitioning a part that
    // stands out only while throttled moves the quota's cost, it does not remove it).
    const double explained = FigureValue(quota.evidence, kExplainedLabel);
    const TaskStats* ps = folds.stats.Find(quota.subject);
    TimeNs next = 0;
    for (const TaskStats& t : folds.stats.tasks) {
      if (t.kind == JobKind::kPs && ps != nullptr && t.task != ps->task) {
        next = std::max(next, t.op_time_ns);
      }
    }
    if (ps == nullptr || explained <= 1 || next <= 0 ||
        double(ps->op_time_ns) / explained >= folds.hot_ratio * double(next)) {
      return false;
    }
    *note = fmt::format(
        "hot-ps on {} folded in: unthrottled its ops would take {:.2f}x the busiest other PS's "
        "(under hot-ps's {:.1f}x), so it stands out because the quota stops it",
        quota.subject, double(ps->op_time_ns) / explained / double(next), folds.hot_ratio);
    return true;
  }
  if (it.rule_id == "slow-ps-host") {
    // Folded only when the stopped time explains the slowdown to within slow-ps-host's own
    // threshold: a throttled PS on a slow host keeps both findings.
    const double slowdown = FigureValue(it.evidence, "slowdown");
    const double explained = FigureValue(quota.evidence, kExplainedLabel);
    if (slowdown <= 0 || explained <= 0 || slowdown / explained >= folds.min_slowdown) {
      return false;
    }
    *note = fmt::format(
        "slow-ps-host on {} folded in: its ops run slower than the other PS's because the quota "
        "stops them",
        quota.subject);
    return true;
  }
  if (it.rule_id == "thread-oversubscription") {
    // Its fix sizes the pools to the limit, at least 1 thread: a PS whose runnable threads would
    // not fire the rule on as many CPUs as that fix leaves threads (under its
    // max_runnable_per_cpu of them) fires it only because its limit is under one CPU; raising
    // the limit is the fix.
    const double runnable = FigureValue(it.evidence, "runnable threads (mean)");
    const double limit = FigureValue(it.evidence, "CPU limit");
    const double pools = std::max(1.0, std::round(limit));
    if (runnable <= 0 || limit <= 0 || runnable >= folds.oversub_ratio * pools) return false;
    *note = fmt::format(
        "thread-oversubscription on {} folded in: it runs {:.1f} runnable threads, under "
        "{:.1f} per thread its fix would leave ({:.0f}: its {:.2g} CPU limit, at least 1)",
        quota.subject, runnable, folds.oversub_ratio, pools, limit);
    return true;
  }
  return false;
}

}  // namespace

void FoldIntoQuota(const QuotaFolds& folds, std::vector<Finding>* findings) {
  for (auto quota = findings->begin(); quota != findings->end(); ++quota) {
    if (quota->rule_id != "ps-cpu-quota") continue;
    for (auto it = findings->begin(); it != findings->end(); ++it) {
      std::string note;
      if (!Explained(*quota, *it, folds, &note)) continue;
      Absorb(*it, note, &*quota);
      findings->erase(it);
      return FoldIntoQuota(folds, findings);  // iterators moved: start again
    }
  }
}

}  // namespace tfdiag
