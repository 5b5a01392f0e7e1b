#include "analyzers/scaling_verdicts.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "core/plural.h"

namespace tfdiag {

namespace {

// The pair of worker counts a scaling-limit finding judged (LimitFinding's first two figures:
// workers before, then after).
std::pair<int, int> PairOf(const Finding& f) {
  if (f.evidence.size() < 2) return {0, 0};
  return {static_cast<int>(f.evidence[0].value), static_cast<int>(f.evidence[1].value)};
}

const ScalingPs* PsOf(const ScalingRun& r, const std::string& task) {
  for (const ScalingPs& p : r.ps_busy) {
    if (p.task == task) return &p;
  }
  return nullptr;
}

// The workers' run-queue wait share of a run: the node figure (bundles), else the agents'.
double WorkerWait(const ScalingRun& r) {
  return r.runq_wait_pct >= 0 ? r.runq_wait_pct : r.worker_cpu.runq_wait_pct;
}

// The cause's own fix, with the worker count to stay at until it is done.
std::string CauseFix(const Finding& f, const std::vector<ScalingRun>& runs, int stay,
                     const Rule& rule) {
  const std::string stay_text = fmt::format("Stay at {} until then", Count(stay, "worker"));
  if (f.cause == "a PS saturated" || f.cause == "requests queue at a PS") {
    const int num_ps = runs.empty() ? 0 : runs.back().ps;
    std::string var;
    for (const ScalingRun& r : runs) {
      const ScalingPs* p = PsOf(r, f.task);
      if (p != nullptr && !p->top_variable.empty()) {
        var = fmt::format(" ({}, {:.0f}% of its op time)", p->top_variable, p->top_variable_pct);
      }
    }
    return fmt::format(
        "Partition the variables on {0}{1} across all {2} PS (hot-ps's fix): TF1 "
        "tf.compat.v1.fixed_size_partitioner({2}); TF2 ParameterServerStrategy("
        "variable_partitioner=tf.distribute.experimental.partitioners.FixedShardsPartitioner({2}))"
        "; add PS if every PS is busy. Stay at {3} workers until {0} is partitioned: more "
        "workers only queue at it. Then measure the sweep again.",
        f.task, var, num_ps, stay);
  }
  if (f.cause == "the tasks wait for a CPU" || f.cause == "the node's CPUs saturated") {
    return "Give the tasks the CPUs they wait for (cpu-starvation's fix): fewer runnable threads "
           "per task (TF_NUM_INTRAOP_THREADS / TF_NUM_INTEROP_THREADS), CPU requests equal to "
           "limits in whole CPUs (or a cpuset), fewer tasks or other CPU-heavy work per node, or "
           "more nodes. " +
           stay_text + ". Then measure the sweep again.";
  }
  if (f.cause == "workers wait for input") {
    return "Parallelize the input pipeline: dataset.map(num_parallel_calls=tf.data.AUTOTUNE), "
           "interleave the file reads, prefetch(tf.data.AUTOTUNE). " +
           stay_text + ". Then measure the sweep again.";
  }
  if (f.cause == "CFS throttling") {
    return "Raise the containers' CPU limit, or size the thread pools to it "
           "(TF_NUM_INTRAOP_THREADS / TF_NUM_INTEROP_THREADS). " +
           stay_text + ". Then measure the sweep again.";
  }
  return rule.fix + fmt::format(
                        " Until the cause is found, {} is the largest count "
                        "that paid off.",
                        Count(stay, "worker"));
}

// One finding for several pairs of runs with one cause.
Finding Merge(std::vector<Finding> g) {
  Finding out = g.front();
  std::string pairs;
  out.objects.clear();
  for (Finding& f : g) {
    const auto [a, b] = PairOf(f);
    const std::string pair = fmt::format("{} -> {} workers", a, b);
    pairs += (pairs.empty() ? "" : ", ") + pair;
    for (FindingObject& o : f.objects) {
      o.subject = pair;
      out.objects.push_back(std::move(o));
    }
  }
  out.summary = fmt::format("{} (one cause in {} pairs of runs: {}); first: {}", out.cause,
                            g.size(), pairs, g.front().summary);
  return out;
}

// A resource's figure over the runs that have it: (workers, value).
struct Trend {
  std::string what;  // "ps:0 busy share"
  double limit = 0;  // percent
  std::vector<std::pair<int, double>> points;
};

std::string TrendText(const Trend& t) {
  std::string values, workers;
  for (const auto& [w, v] : t.points) {
    values += fmt::format("{}{:.0f}%", values.empty() ? "" : " -> ", v);
    workers += fmt::format("{}{}", workers.empty() ? "" : ", ", w);
  }
  return fmt::format("{} {} at {} {}", t.what, values, workers,
                     t.points.size() == 1 ? Noun(t.points[0].first, "worker") : "workers");
}

}  // namespace

void JudgeScaling(const Rule& rule, ScalingResult* out) {
  const std::vector<ScalingRun>& runs = out->runs;
  // Efficiencies no single job reaches: more than linear speed-up from one run to the next.
  const double max_eff = rule.Param("max_efficiency");
  for (size_t i = 1; i < runs.size(); ++i) {
    const ScalingRun& a = runs[i - 1];
    const ScalingRun& b = runs[i];
    if (a.workers <= 0 || a.workers == b.workers || a.throughput_steps_per_s <= 0 ||
        a.throughput_unit != b.throughput_unit) {
      continue;
    }
    const double eff = (b.throughput_steps_per_s / a.throughput_steps_per_s) /
                       (static_cast<double>(b.workers) / a.workers);
    if (eff > max_eff) {
      out->warnings.push_back(fmt::format(
          "{} -> {} workers ({} -> {}): efficiency {:.0f}% is more than linear, which one job "
          "with the same work per step cannot reach: check that both runs measure the same job "
          "(batch size, what a step is, the throughput source) and that {} was not slowed by "
          "other load",
          a.workers, b.workers, a.name, b.name, 100 * eff, a.name));
    } else if (eff >= rule.Param("min_efficiency")) {
      // Near the limit: the pair passes, but the next workers may not.
      std::vector<std::string> why;
      const double wait = WorkerWait(b);
      if (wait >= rule.Param("cpu_wait_pct")) {
        why.push_back(
            fmt::format("the workers wait for a CPU {:.0f}% of their runnable time", wait));
      }
      for (const ScalingPs& p : b.ps_busy) {
        if (p.busy_pct >= rule.Param("queueing_pct")) {
          why.push_back(fmt::format("{} is busy {:.0f}% ({})", p.task, p.busy_pct, p.basis));
        }
      }
      if (!why.empty()) {
        std::string w;
        for (const std::string& x : why) w += (w.empty() ? "" : " and ") + x;
        out->notes.push_back(fmt::format(
            "near the limit at {1} workers: going from {2} to {1} workers kept {0:.0f}% of the "
            "ideal gain (at least {3:.0f}% is fine), but {4}; more workers may not help",
            100 * eff, b.workers, a.workers, 100 * rule.Param("min_efficiency"), w));
      }
    }
  }
  // Group the findings that share a cause (and, for a PS, the PS).
  std::map<std::pair<std::string, std::string>, std::vector<Finding>> groups;
  std::vector<std::pair<std::string, std::string>> order;
  for (Finding& f : out->findings) {
    auto key = std::make_pair(f.cause, f.subject);
    if (!groups.count(key)) order.push_back(key);
    groups[key].push_back(std::move(f));
  }
  out->findings.clear();
  for (const auto& key : order) {
    std::vector<Finding>& g = groups[key];
    int stay = 0;
    for (const Finding& f : g) {
      const int a = PairOf(f).first;
      stay = stay == 0 ? a : std::min(stay, a);
    }
    Finding f = g.size() > 1 ? Merge(std::move(g)) : std::move(g.front());
    f.fix = CauseFix(f, runs, stay, rule);
    out->findings.push_back(std::move(f));
  }
  // Next to saturate: of the resources still under their limit in the largest run, the one that
  // reaches it first on the trend of the last two runs.
  std::vector<Trend> trends;
  std::map<std::string, Trend> ps;
  Trend wait{"the workers' run-queue wait share", rule.Param("cpu_wait_pct"), {}};
  Trend node{"the node's CPUs used", rule.Param("saturation_pct"), {}};
  for (const ScalingRun& r : runs) {
    for (const ScalingPs& p : r.ps_busy) {
      if (p.busy_pct < 0) continue;
      Trend& t = ps[p.task];
      t.what = p.task + " busy";
      t.limit = rule.Param("saturation_pct");
      t.points.push_back({r.workers, p.busy_pct});
    }
    if (WorkerWait(r) >= 0) wait.points.push_back({r.workers, WorkerWait(r)});
    if (r.cpu_used_pct >= 0) node.points.push_back({r.workers, r.cpu_used_pct});
  }
  for (auto& [task, t] : ps) trends.push_back(t);
  trends.push_back(wait);
  trends.push_back(node);
  const Trend* next = nullptr;
  double next_at = 0;
  for (const Trend& t : trends) {
    if (t.points.size() < 2) continue;
    const auto [w1, v1] = t.points[t.points.size() - 2];
    const auto [w2, v2] = t.points.back();
    if (w2 <= w1 || v2 <= v1 || v2 >= t.limit) continue;
    const double at = w2 + (t.limit - v2) * (w2 - w1) / (v2 - v1);
    if (next == nullptr || at < next_at) next = &t, next_at = at;
  }
  if (next != nullptr) {
    out->notes.push_back(fmt::format(
        "next to saturate: {}; on this trend it reaches {:.0f}% at about {:.0f} workers",
        TrendText(*next), next->limit, std::ceil(next_at)));
  }
}

}  // namespace tfdiag
