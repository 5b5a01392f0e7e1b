#include "analyzers/slow_ps_host.h"

#include <algorithm>

#include "analyzers/ps_host_speed.h"
#include "analyzers/replay_cores.h"
#include "core/duration.h"
#include "core/median.h"

namespace tfdiag {

namespace {

// One variable of a PS as the rule compares it: its size and its mean time per op.
struct Sized {
  double bytes, per_op_ns, weight;  // weight: its op time
};

// The PS's variables with a known size and ops.
std::vector<Sized> SizedOf(const TaskStats& t, int64_t* sized_ops) {
  std::vector<Sized> out;
  *sized_ops = 0;
  for (const VariableLoad& v : t.variables) {
    if (v.bytes <= 0 || v.ops <= 0 || v.total_ns <= 0) continue;
    out.push_back({double(v.bytes), double(v.total_ns) / double(v.ops), double(v.total_ns)});
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
// pair whose bound is low. 0 when no variable of `a` has a like-sized one on `b`.
double SlowerThan(const std::vector<Sized>& a, double scale_a, const std::vector<Sized>& b,
                  double scale_b, double ratio) {
  std::vector<std::pair<double, double>> r;  // bound, weight
  double total = 0;
  for (const Sized& v : a) {
    double best = 0;
    for (const Sized& u : b) {
      if (v.bytes > u.bytes * ratio || u.bytes > v.bytes * ratio) continue;
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

// The "slowdown" figure of a finding's (or one of its objects') evidence; 0 when absent.
double SlowdownOf(const std::vector<Figure>& evidence) {
  for (const Figure& fig : evidence) {
    if (fig.label == "slowdown") return fig.value;
  }
  return 0;
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

}  // namespace

double SlowPsHostSlowdown(const Finding& f) { return SlowdownOf(f.evidence); }

std::vector<Finding> RunSlowPsHost(const AnalysisInput& in, const Rule& rule) {
  std::vector<Finding> out;
  const TaskStatsTable& st = in.stats;
  if (st.num_ps < rule.Param("min_ps") ||
      st.ps_busy_total_ns < rule.Param("min_total_ps_busy_us") * 1000) {
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
  if (rows.size() < size_t(rule.Param("min_ps"))) return out;
  const double min_slowdown = rule.Param("min_slowdown");
  const std::vector<std::pair<uint32_t, double>> parts = PartsOf(in);
  const double like = std::max(1.0, rule.Param("like_size_ratio"));
  for (size_t i = 0; i < rows.size(); ++i) {
    std::vector<double> slower, loads;
    for (size_t j = 0; j < rows.size(); ++j) {
      if (j == i) continue;
      loads.push_back(rows[j].load);
      const double s = SlowerThan(rows[i].vars, rows[i].scale, rows[j].vars, rows[j].scale, like);
      if (s > 0) slower.push_back(s);
    }
    // The PS judged and at least min_ps - 1 others with like-sized variables; the lower median
    // of the bounds against them (against two, the smaller).
    if (slower.size() + 1 < size_t(rule.Param("min_ps"))) continue;
    std::sort(slower.begin(), slower.end());
    const double slowdown = slower[(slower.size() - 1) / 2];
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
    const auto on_parts = std::find_if(parts.begin(), parts.end(),
                                       [&](const auto& x) { return x.first == rows[i].t->task; });
    if (on_parts != parts.end() && on_parts->second < kMinModelledSlowdown) continue;
    const TaskStats& t = *rows[i].t;
    Finding f = MakeFinding(rule, "task", t.label);
    f.task = t.label;
    if (t.busy_pct < rule.Param("min_busy_pct")) f.severity = Severity::kLow;
    f.summary = fmt::format(
        "{} runs its ops at least {:.1f}x slower than the other PS on variables of like size "
        "(median of {}), {}: its host is slow",
        t.label, slowdown, fmt::format("{} PS", slower.size()),
        rows[i].fit.cores > 0
            ? fmt::format("with the slowdown of ops sharing its {} core(s) taken out",
                          rows[i].fit.cores)
            : fmt::format("more than its {:.2f} ops at once against the other PS's {:.2f} can "
                          "explain on any number of cores",
                          rows[i].load, ref_load));
    f.evidence = {{"slowdown", slowdown, "ratio"},
                  {"PS compared on like-sized variables", double(slower.size()), "count"},
                  {"variables of known size on " + t.label, double(rows[i].vars.size()), "count"},
                  {"ops at once on " + t.label + " (op time / busy time)", rows[i].load, "ratio"},
                  {"the other PS's median ops at once", ref_load, "ratio"},
                  {"cores its ops' slowdown under load shows (0: not shown)",
                   double(rows[i].fit.cores), "count"},
                  {"busy share of the capture", t.busy_pct, "%"}};
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

std::vector<std::string> AddHostSpeedups(const AnalysisInput& in, const Finding& f, Fix* fix) {
  std::vector<std::string> moved;
  const std::vector<std::pair<uint32_t, double>> parts = PartsOf(in);
  auto add = [&](const std::string& subject, const std::vector<Figure>& evidence) {
    const uint32_t t = in.capture.FindTask(subject);
    double slowdown = SlowdownOf(evidence);
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
