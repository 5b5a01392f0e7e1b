#include "analyzers/slow_ps_host.h"

#include <algorithm>

#include "analyzers/replay_cores.h"
#include "core/duration.h"

namespace tfdiag {

namespace {

// The op-time weighted median of a PS's per-variable rates (ns per op per byte) over its variables
// of at least `min_bytes`; 0 when no variable of the PS has a known size that large.
double RateOf(const TaskStats& t, int64_t min_bytes, int64_t* sized_ops) {
  std::vector<std::pair<double, double>> r;  // rate, weight (op time)
  double total = 0;
  *sized_ops = 0;
  for (const VariableLoad& v : t.variables) {
    if (v.bytes < std::max<int64_t>(1, min_bytes) || v.ops <= 0 || v.total_ns <= 0) continue;
    r.emplace_back(double(v.total_ns) / double(v.ops) / double(v.bytes), double(v.total_ns));
    total += double(v.total_ns);
    *sized_ops += v.ops;
  }
  if (r.empty()) return 0;
  std::sort(r.begin(), r.end());
  double acc = 0;
  for (const auto& [rate, w] : r) {
    acc += w;
    if (acc >= total / 2) return rate;
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

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
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
    double rate, load;
    PsOpLoad fit;
  };
  std::vector<Row> rows;
  for (const TaskStats& t : st.tasks) {
    if (t.kind != JobKind::kPs || t.busy_ns <= 0) continue;
    int64_t sized = 0;
    const double rate = RateOf(t, int64_t(rule.Param("min_variable_bytes")), &sized);
    if (rate <= 0 || sized < int64_t(rule.Param("min_sized_ops"))) continue;
    // The ops' time less the slowdown of ops sharing too few cores (replay_cores.h): a PS that
    // runs more ops at once than it has cores is loaded, not slow.
    const PsOpLoad fit = FitPsCores(in.capture, t);
    const double shared = fit.op_ns > 0 && fit.cores > 0 ? fit.work_ns / fit.op_ns : 1.0;
    rows.push_back({&t, rate * shared, double(t.op_time_ns) / double(t.busy_ns), fit});
  }
  if (rows.size() < size_t(rule.Param("min_ps"))) return out;
  const double min_slowdown = rule.Param("min_slowdown");
  for (size_t i = 0; i < rows.size(); ++i) {
    std::vector<double> rates, loads;
    for (size_t j = 0; j < rows.size(); ++j) {
      if (j == i) continue;
      rates.push_back(rows[j].rate);
      loads.push_back(rows[j].load);
    }
    const double ref_rate = Median(rates), ref_load = Median(loads);
    if (ref_rate <= 0 || ref_load <= 0) continue;
    const double slowdown = rows[i].rate / ref_rate;
    // Sharing c cores slows each op by max(1, n / c), n the ops at once; over every c >= 1,
    // this PS's ops are slowed at most max(1, n) / max(1, n_other) times the other PS's (the
    // PS of a job share one configuration). Where the fit cannot tell the cores, only the
    // slowdown beyond that bound is the host's.
    const double unexplained =
        rows[i].fit.cores > 0 ? slowdown
                              : slowdown * std::max(1.0, ref_load) / std::max(1.0, rows[i].load);
    if (slowdown < min_slowdown || unexplained < min_slowdown) continue;
    const TaskStats& t = *rows[i].t;
    Finding f = MakeFinding(rule, "task", t.label);
    f.task = t.label;
    if (t.busy_pct < rule.Param("min_busy_pct")) f.severity = Severity::kLow;
    f.summary = fmt::format(
        "{} runs its ops {:.1f}x slower per byte than the other PS (median of {}), {}: its host "
        "is slow",
        t.label, slowdown, fmt::format("{} PS", rates.size()),
        rows[i].fit.cores > 0
            ? fmt::format("with the slowdown of ops sharing its {} core(s) taken out",
                          rows[i].fit.cores)
            : fmt::format("more than its {:.2f} ops at once against the other PS's {:.2f} can "
                          "explain on any number of cores",
                          rows[i].load, ref_load));
    f.evidence = {{"slowdown", slowdown, "ratio"},
                  {"op time per op per byte on " + t.label, rows[i].rate, "ns"},
                  {"the other PS's median", ref_rate, "ns"},
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

FixPlan SlowPsHostFix(const AnalysisInput& in, const ReplayModel& m, const Finding& f,
                      const Rule&) {
  FixPlan plan;
  // The task moved to a host at the other PS's speed (the rule's fix): its op times divided
  // by the slowdown the rule measured (analyzers/slow_ps_host.h).
  std::vector<std::string> moved;
  auto add = [&](const std::string& subject, const std::vector<Figure>& evidence) {
    const uint32_t t = in.capture.FindTask(subject);
    const double slowdown = SlowdownOf(evidence);
    if (t == kNoIndex || slowdown <= 1) return;
    for (const auto& [task, x] : plan.fix.host_speedup) {
      if (task == t) return;
    }
    plan.fix.host_speedup.emplace_back(t, slowdown);
    moved.push_back(fmt::format("{} ({:.1f}x slower)", subject, slowdown));
  };
  add(f.subject, f.evidence);
  for (const FindingObject& o : f.objects) add(o.subject, o.evidence);
  if (!moved.empty()) {
    plan.what = fmt::format("{} moved to a host at the other PS's speed (op times / slowdown)",
                            fmt::join(moved, " and "));
  }
  return plan;
}

}  // namespace tfdiag
