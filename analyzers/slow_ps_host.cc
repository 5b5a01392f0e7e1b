#include "analyzers/slow_ps_host.h"

#include <algorithm>
#include <map>
#include <set>
#include <string_view>

#include "analyzers/op_names.h"
#include "analyzers/ps_host_speed.h"
#include "analyzers/replay_cores.h"
#include "analyzers/step_graph.h"
#include "core/duration.h"
#include "core/median.h"

namespace tfdiag {

namespace {

// The most a pair's PS may run ops at once, over the cores its fit shows (or one), for their
// like-sized variables to be compared without a third PS: the mean ops at once of a PS of one
// thread is 1 plus the overlap of its timeline's rounding (indep report38 46012: 1.00).
constexpr double kMaxPairOpsAtOnce = 1.05;

// Whether some variable has parts on both PS `a` and `b` (names "<base>/part_<k>").
bool PartitionedOverBoth(const TaskStats& a, const TaskStats& b) {
  std::set<std::string_view> on_a;
  for (const VariableLoad& v : a.variables) {
    int k = -1;
    const std::string_view base = PartitionBase(v.name, &k);
    if (k >= 0) on_a.insert(base);
  }
  for (const VariableLoad& v : b.variables) {
    int k = -1;
    const std::string_view base = PartitionBase(v.name, &k);
    if (k >= 0 && on_a.count(base) > 0) return true;
  }
  return false;
}

// One variable of a PS as the rule compares it: its size and its mean time per op.
struct Sized {
  double bytes, per_op_ns, weight;  // weight: its op time
  bool sparse;                      // VariableLoad::sparse: a table looked up by rows
};

// The PS's variables with a known size and ops.
std::vector<Sized> SizedOf(const TaskStats& t, int64_t* sized_ops) {
  std::vector<Sized> out;
  *sized_ops = 0;
  for (const VariableLoad& v : t.variables) {
    if (v.bytes <= 0 || v.ops <= 0 || v.total_ns <= 0) continue;
    out.push_back(
        {double(v.bytes), double(v.total_ns) / double(v.ops), double(v.total_ns), v.sparse});
    *sized_ops += v.ops;
  }
  return out;
}

// How much slower PS `a` runs than PS `b`, at least, from variables of like size (within
// `ratio` of each other's bytes): for each variable v of `a`, the most over b's like-sized
// variables u of (t_v / t_u) / max(1, x_v / x_u) (t: time per op, x: bytes), the op-time
// weighted median of that over a's variables that have one. An op's time g(x) grows with its
// bytes and grows no faster than them (a fixed cost per op plus a cost per byte), so g(x_v) /
// g(x_u) <= max(1, x_v / x_u) and the figure never exceeds the hosts' speed ratio, whatever the
// fixed cost; a PS holding only biases beside PS holding kernels has no like-sized pair, or a
// pair whose bound is low. 0 when no variable of `a` has a like-sized one on `b`. `same_kind`:
// only variables of one kind side by side (Sized::sparse: tables with tables, dense variables
// with dense ones).
double SlowerThan(const std::vector<Sized>& a, double scale_a, const std::vector<Sized>& b,
                  double scale_b, double ratio, bool same_kind = false) {
  std::vector<std::pair<double, double>> r;  // bound, weight
  double total = 0;
  for (const Sized& v : a) {
    double best = 0;
    for (const Sized& u : b) {
      if (v.bytes > u.bytes * ratio || u.bytes > v.bytes * ratio) continue;
      if (same_kind && u.sparse != v.sparse) continue;
      const double bound =
          (v.per_op_ns * scale_a) / (u.per_op_ns * scale_b) / std::max(1.0, v.bytes / u.bytes);
      best = std::max(best, bound);
    }
    if (best <= 0) continue;
    r.emplace_back(best, v.weight);
    total += v.weight;
  }
  if (r.empty()) return 0;
  std::sort(r.begin(), r.end());
  double acc = 0;
  for (const auto& [bound, w] : r) {
    acc += w;
    if (acc >= total / 2) return bound;
  }
  return r.back().first;
}

// PartSlowdowns of `in`: from the analysis's replay model (measured once there) where `in` has
// it, else measured now (a rule called without one).
std::vector<std::pair<uint32_t, double>> PartsOf(const AnalysisInput& in) {
  if (in.model == nullptr) return PartSlowdowns(in);
  std::vector<std::pair<uint32_t, double>> out;
  for (const ReplayModel::Ps& p : in.model->ps) {
    if (p.parts_slowdown > 0) out.emplace_back(p.task, p.parts_slowdown);
  }
  return out;
}

// The share of the training tasks' steps spent in waits that each PS ended (the answer a task
// waited for last before it could go on, or at its step's tail the apply of its last push:
// StepGraph's WaitCause rows), the mean over the tasks; by PS task index. Empty without a step
// graph, or where PS ended fewer waits than half the training tasks' steps (a count of waits, not
// of steps: a step may hold several; the waits are then mostly not tied to a tensor, and who ends
// them cannot be told).
std::map<uint32_t, double> WaitsEndedByPs(const AnalysisInput& in) {
  std::map<uint32_t, double> out;
  if (in.graph == nullptr) return out;
  int64_t steps = 0, ended = 0;
  std::map<uint32_t, bool> is_ps;
  for (const TaskStats& t : in.stats.tasks) is_ps[t.task] = t.kind == JobKind::kPs;
  int tasks = 0;
  for (const TaskStats& w : in.stats.tasks) {
    if (w.kind != JobKind::kWorker && w.kind != JobKind::kChief && w.kind != JobKind::kMaster) {
      continue;
    }
    const auto [b, e] = in.graph->TaskSteps(w.task);
    TimeNs span = 0;
    for (uint32_t i = b; i < e; ++i) span += in.graph->steps()[i].end - in.graph->steps()[i].start;
    if (span <= 0) continue;
    ++tasks;
    steps += e - b;
    for (const WaitCause& c : in.graph->WaitCausesOf(w.task)) {
      if (c.src_task == kNoIndex || c.ambiguous) continue;
      const auto ps = is_ps.find(c.src_task);
      if (ps == is_ps.end() || !ps->second) continue;
      out[c.src_task] += double(c.wait_ns) / double(span);
      ended += c.waits;
    }
  }
  if (2 * ended < steps) out.clear();
  for (auto& [task, share] : out) share /= tasks;
  return out;
}

}  // namespace

double SlowPsHostSlowdown(const Finding& f) { return FigureValue(f.evidence, "slowdown"); }

double SlowPsHostUpperSlowdown(const Finding& f) {
  return FigureValue(f.evidence, kUpperSlowdownLabel);
}

std::vector<Finding> RunSlowPsHost(const AnalysisInput& in, const Rule& rule) {
  std::vector<Finding> out;
  const TaskStatsTable& st = in.stats;
  // Two PS are judged by the parts of a variable partitioned over both alone (min_ps_on_parts).
  const double min_ps = std::min(rule.Param("min_ps"), rule.Param("min_ps_on_parts"));
  if (st.num_ps < min_ps || st.ps_busy_total_ns < rule.Param("min_total_ps_busy_us") * 1000) {
    return out;
  }
  struct Row {
    const TaskStats* t;
    std::vector<Sized> vars;
    double scale, load;
    PsOpLoad fit;
  };
  std::vector<Row> rows;
  for (const TaskStats& t : st.tasks) {
    if (t.kind != JobKind::kPs || t.busy_ns <= 0) continue;
    int64_t sized = 0;
    std::vector<Sized> vars = SizedOf(t, &sized);
    if (vars.empty() || sized < int64_t(rule.Param("min_sized_ops"))) continue;
    // The ops' time less the slowdown of ops sharing too few cores (replay_cores.h): a PS that
    // runs more ops at once than it has cores is loaded, not slow.
    const PsOpLoad fit = FitPsCores(in.capture, t);
    const double shared = fit.op_ns > 0 && fit.cores > 0 ? fit.work_ns / fit.op_ns : 1.0;
    rows.push_back({&t, std::move(vars), shared, double(t.op_time_ns) / double(t.busy_ns), fit});
  }
  if (rows.size() < size_t(min_ps)) return out;
  const double min_slowdown = rule.Param("min_slowdown");
  const std::vector<std::pair<uint32_t, double>> parts = PartsOf(in);
  const double like = std::max(1.0, rule.Param("like_size_ratio"));
  std::map<uint32_t, double> ended;  // WaitsEndedByPs, read for the first finding
  bool ended_read = false;
  for (size_t i = 0; i < rows.size(); ++i) {
    std::vector<double> slower, loads;
    for (size_t j = 0; j < rows.size(); ++j) {
      if (j == i) continue;
      loads.push_back(rows[j].load);
      const double s = SlowerThan(rows[i].vars, rows[i].scale, rows[j].vars, rows[j].scale, like);
      if (s > 0) slower.push_back(s);
    }
    const auto on_parts = std::find_if(parts.begin(), parts.end(),
                                       [&](const auto& x) { return x.first == rows[i].t->task; });
    // The PS judged and at least min_ps - 1 others with like-sized variables; the lower median
    // of the bounds against them (against two, the smaller). Against one other PS, like-sized
    // variables cannot tell a slow host from another mix of variables, but the parts of one
    // variable partitioned over both serve one kind of request (analyzers/ps_host_speed.h):
    // in a job of min_ps_on_parts PS their ratio alone is the slowdown (indep report28 36000:
    // 2 PS, ps:0 at 0.48x speed, 2.07x on the parts of its one table, not judged before).
    bool by_parts = slower.size() + 1 < size_t(rule.Param("min_ps")), by_kind = false;
    if (by_parts) {
      if (st.num_ps >= rule.Param("min_ps")) continue;
      if (on_parts != parts.end()) {
        // PartSlowdowns gives a pair's PS no figure where their ops share too few cores.
        slower.assign(1, on_parts->second);
      } else {
        // No variable partitioned over the pair: their like-sized variables of one kind alone
        // (dense kernels with dense kernels, tables with tables: a table's gathers and sparse
        // applies beside a kernel of its bytes differ far more on hosts of one speed, indep
        // report27 35022, spent: a hot table read 2.1x "slow"), and only where neither PS runs
        // more ops at once than the cores its fit shows, or than one where the fit shows none
        // (no third PS outvotes what the fit leaves of that slowdown, as for the parts; one op
        // at a time shares no core with another). indep report38 46012 (spent): 2 PS of dense
        // kernels on one thread each, ps:1 on a host at 0.49x speed, 2.1x; no finding before.
        // A variable partitioned over both is the parts' to judge, which gave no figure here
        // (unsized answers, or ops sharing too few cores): not judged on like-sized variables.
        if (st.num_ps != 2 || rows.size() != 2 || PartitionedOverBoth(*rows[0].t, *rows[1].t)) {
          continue;
        }
        const Row& other = rows[1 - i];
        const auto fits = [](const Row& x) {
          return x.load <= std::max(1.0, double(x.fit.cores)) * kMaxPairOpsAtOnce;
        };
        if (!fits(rows[i]) || !fits(other)) continue;
        const double s =
            SlowerThan(rows[i].vars, rows[i].scale, other.vars, other.scale, like, true);
        if (s <= 0) continue;
        slower.assign(1, s);
        by_parts = false, by_kind = true;
      }
    }
    std::sort(slower.begin(), slower.end());
    const double slowdown = slower[(slower.size() - 1) / 2], upper = slower[slower.size() / 2];
    const double ref_load = UpperMedian(loads);
    if (ref_load <= 0) continue;
    // Sharing c cores slows each op by max(1, n / c), n the ops at once; over every c >= 1,
    // this PS's ops are slowed at most max(1, n) / max(1, n_other) times the other PS's (the
    // PS of a job share one configuration). Where the fit cannot tell the cores, only the
    // slowdown beyond that bound is the host's.
    const double unexplained =
        rows[i].fit.cores > 0 ? slowdown
                              : slowdown * std::max(1.0, ref_load) / std::max(1.0, rows[i].load);
    if (slowdown < min_slowdown || unexplained < min_slowdown) continue;
    // The parts of one partitioned variable serve one kind of request: where this PS holds such
    // parts and they run at about the others' speed (under kMinModelledSlowdown, bytes per
    // answer taken into account: analyzers/ps_host_speed.h), the like-sized comparison above
    // set unrelated variables side by side (gen3 report3 1107, 1128: a gathered table's part
    // against dense kernels of its bytes, 4-6x "slower" on PS of even hosts).
    if (on_parts != parts.end() && on_parts->second < kMinModelledSlowdown) continue;
    const TaskStats& t = *rows[i].t;
    Finding f = MakeFinding(rule, "task", t.label);
    f.task = t.label;
    if (t.busy_pct < rule.Param("min_busy_pct")) f.severity = Severity::kLow;
    f.summary = fmt::format(
        "{} runs its ops at least {:.1f}x slower than the other PS {}, {}: its host is slow",
        t.label, slowdown,
        by_parts  ? std::string("on the parts of a variable partitioned over both")
        : by_kind ? std::string("on variables of like size and of one kind (dense with dense, "
                                "tables with tables)")
                  : fmt::format("on variables of like size (median of {} PS)", slower.size()),
        rows[i].fit.cores > 0
            ? fmt::format("with the slowdown of ops sharing its {} core(s) taken out",
                          rows[i].fit.cores)
            : fmt::format("more than its {:.2f} ops at once against the other PS's {:.2f} can "
                          "explain on any number of cores",
                          rows[i].load, ref_load));
    // What moving the PS buys is at most the waits its answers and applies end: where the
    // training tasks wait on other PS's answers but seldom on its own (under its fair share of
    // the waits PS end), its ops run slow while the tasks wait for something else: the step's
    // critical path does not cross it (issue 44, session 35: indep report16 24007, ps:5 2x slow
    // and busy 44% of the capture, none of the waits PS end are its own; moved, the twin gains
    // 0.3%; the slow hosts whose twins gain 12-13%, gen3 report11 2722 and 2727, end 56% and
    // 83% of them).
    double own = 0, all_ps = 0;
    if (f.severity > Severity::kLow) {
      if (!ended_read) ended = WaitsEndedByPs(in), ended_read = true;
      for (const auto& [task, share] : ended) all_ps += share;
      const auto it = ended.find(t.task);
      own = it == ended.end() ? 0 : it->second;
    }
    const bool off_path = all_ps > 0 && own < all_ps / double(st.num_ps);
    f.evidence = {{"slowdown", slowdown, "ratio"},
                  {std::string(kUpperSlowdownLabel), upper, "ratio"},
                  {by_parts  ? "PS compared on the parts of a variable partitioned over both"
                   : by_kind ? "PS compared on like-sized variables of one kind"
                             : "PS compared on like-sized variables",
                   double(slower.size()), "count"},
                  {"variables of known size on " + t.label, double(rows[i].vars.size()), "count"},
                  {"ops at once on " + t.label + " (op time / busy time)", rows[i].load, "ratio"},
                  {"the other PS's median ops at once", ref_load, "ratio"},
                  {"cores its ops' slowdown under load shows (0: not shown)",
                   double(rows[i].fit.cores), "count"},
                  {"busy share of the capture", t.busy_pct, "%"}};
    if (off_path) {
      f.evidence.push_back(
          {"the training tasks' waits any PS ended, share of their steps", 100 * all_ps, "%"});
      f.evidence.push_back({"the training tasks' waits " + t.label + " ended, share of their steps",
                            100 * own, "%"});
      f.summary += fmt::format(
          "; severity low, not {}: the workers' waits that PS end (the answer waited for last, "
          "or the apply of the last push) are {:.1f}% of their steps, and {} ends {:.1f}% (under "
          "its fair share, 1 in {} PS): its ops run slow while the workers wait for something "
          "else",
          SeverityName(f.severity), 100 * all_ps, t.label, 100 * own, st.num_ps);
      f.severity = Severity::kLow;
    }
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

std::vector<std::string> AddHostSpeedups(const AnalysisInput& in, const Finding& f, Fix* fix,
                                         std::string_view label) {
  std::vector<std::string> moved;
  const std::vector<std::pair<uint32_t, double>> parts = PartsOf(in);
  auto add = [&](const std::string& subject, const std::vector<Figure>& evidence) {
    const uint32_t t = in.capture.FindTask(subject);
    double slowdown = FigureValue(evidence, label);
    // Where the PS's parts of a partitioned variable measure its host (analyzers/ps_host_speed.h),
    // the smaller figure: the like-sized comparison is a bound that unrelated variables can raise
    // (gen3 report3 1102: ps:2 4.1x like-sized, 2.4x on its parts, 2.4x slow in truth).
    for (const auto& [task, x] : parts) {
      if (task == t && x > 1) slowdown = std::min(slowdown, x);
    }
    if (t == kNoIndex || slowdown <= 1) return;
    for (const auto& [task, x] : fix->host_speedup) {
      if (task == t) return;
    }
    fix->host_speedup.emplace_back(t, slowdown);
    moved.push_back(fmt::format("{} ({:.1f}x slower)", subject, slowdown));
  };
  add(f.subject, f.evidence);
  for (const FindingObject& o : f.objects) add(o.subject, o.evidence);
  return moved;
}

FixPlan SlowPsHostFix(const AnalysisInput& in, const ReplayModel& m, const Finding& f,
                      const Rule&) {
  FixPlan plan;
  // The task moved to a host at the other PS's speed (the rule's fix): its op times divided
  // by the slowdown the rule measured (analyzers/slow_ps_host.h).
  const std::vector<std::string> moved = AddHostSpeedups(in, f, &plan.fix);
  if (!moved.empty()) {
    plan.what = fmt::format("{} moved to a host at the other PS's speed (op times / slowdown)",
                            fmt::join(moved, " and "));
  }
  return plan;
}

}  // namespace tfdiag
