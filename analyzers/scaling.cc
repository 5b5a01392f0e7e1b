#include "analyzers/scaling.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <set>

#include "analyzers/input_bound.h"
#include "analyzers/scaling_live.h"
#include "analyzers/scaling_verdicts.h"
#include "core/duration.h"
#include "core/median.h"

namespace tfdiag {

namespace {

TimeNs MedianOf(std::vector<TimeNs> v) { return MedianInPlace(&v); }

std::string Join(const std::vector<std::string>& v, size_t max) {
  std::string s;
  for (size_t i = 0; i < v.size() && i < max; ++i) s += (i ? ", " : "") + v[i];
  if (v.size() > max) s += fmt::format(" and {} more", v.size() - max);
  return s;
}

const ScalingPs* Busiest(const ScalingRun& r) {
  const ScalingPs* best = nullptr;
  for (const ScalingPs& p : r.ps_busy) {
    if (p.busy_pct >= 0 && (best == nullptr || p.busy_pct > best->busy_pct)) best = &p;
  }
  return best;
}

const ScalingPs* FindPs(const ScalingRun& r, const std::string& task) {
  for (const ScalingPs& p : r.ps_busy) {
    if (p.task == task) return &p;
  }
  return nullptr;
}

std::string PsList(const ScalingRun& r) {
  std::vector<std::string> v;
  for (const ScalingPs& p : r.ps_busy) v.push_back(p.task);
  return v.empty() ? "no PS" : Join(v, 8);
}

// The hot PS's top variable (in the summary and evidence) and its busy share after and before
// the workers were added.
void AddPsFigures(const ScalingPs& hot, const ScalingPs* before, std::string* summary,
                  std::vector<Figure>* ev) {
  if (!hot.top_variable.empty()) {
    *summary +=
        fmt::format("; {:.0f}% of its op time is {}", hot.top_variable_pct, hot.top_variable);
    ev->push_back(
        {"op time share of " + hot.top_variable + " on " + hot.task, hot.top_variable_pct, "%"});
  }
  ev->push_back({"busy share of " + hot.task + " after", hot.busy_pct, "%"});
  if (before && before->busy_pct >= 0) {
    ev->push_back({"busy share of " + hot.task + " before", before->busy_pct, "%"});
  }
}

// The agents' CPU figures of a role before and after, as evidence (known ones only).
void AddCpuFigures(const std::string& role, const ScalingCpu& before, const ScalingCpu& after,
                   std::vector<Figure>* ev) {
  const std::pair<const char*, double ScalingCpu::*> figs[] = {
      {"CPU used per task, cores", &ScalingCpu::cpu_cores},
      {"CPU limit per task, cores", &ScalingCpu::cpu_limit},
      {"runnable threads per task", &ScalingCpu::runnable},
      {"run-queue wait share of runnable time", &ScalingCpu::runq_wait_pct},
      {"run-queue wait p99", &ScalingCpu::runq_p99_ns},
      {"context switches per s per task", &ScalingCpu::switches_per_s},
      {"involuntary context switches per s per task", &ScalingCpu::involuntary_per_s}};
  for (const auto& [label, m] : figs) {
    const char* unit = m == &ScalingCpu::runq_wait_pct                              ? "%"
                       : m == &ScalingCpu::runq_p99_ns                              ? "ns"
                       : m == &ScalingCpu::cpu_cores || m == &ScalingCpu::cpu_limit ? "cores"
                       : m == &ScalingCpu::runnable                                 ? "threads"
                                                                                    : "/s";
    if (after.*m >= 0) ev->push_back({role + " " + label + " after", after.*m, unit});
    if (before.*m >= 0) ev->push_back({role + " " + label + " before", before.*m, unit});
  }
}

// One finding for the pair (a, b) of consecutive runs whose efficiency is below the threshold.
Finding LimitFinding(const ScalingRun& a, const ScalingRun& b, double eff, const Rule& rule) {
  const double worker_ratio = static_cast<double>(b.workers) / a.workers;
  const double gain =
      a.throughput_steps_per_s > 0 ? b.throughput_steps_per_s / a.throughput_steps_per_s : 0;
  const std::string pair = fmt::format("{} -> {} workers", a.workers, b.workers);
  std::string head = fmt::format(
      "throughput stops following the worker count from {}: {:.2g}x the workers gave {:.2f}x "
      "the {} ({:.1f} -> {:.1f}), efficiency {:.0f}% < {:.0f}%",
      pair, worker_ratio, gain, b.throughput_unit, a.throughput_steps_per_s,
      b.throughput_steps_per_s, 100 * eff, 100 * rule.Param("min_efficiency"));
  if (b.throughput_proxy) head += " (" + b.throughput_source + ")";
  std::vector<Figure> ev = {
      // viewer/panels/scaling.cc finds the pair by these two labels ("workers before", and
      // "workers (" with the later run's count).
      {"workers before", static_cast<double>(a.workers), "count"},
      {fmt::format("workers (after, in {})", b.name), static_cast<double>(b.workers), "count"},
      {"throughput before", a.throughput_steps_per_s, a.throughput_unit},
      {"throughput after", b.throughput_steps_per_s, b.throughput_unit},
      {"throughput gained by the extra workers", 100 * (gain - 1), "%"},
      {"efficiency from one run to the next", 100 * eff, "%"},
      {"median step time before", static_cast<double>(a.step_median_ns), "ns"},
      {"median step time after", static_cast<double>(b.step_median_ns), "ns"}};
  Finding f;
  f.rule_id = rule.id;
  f.severity = rule.severity;
  f.fix = rule.fix;
  f.references = rule.references;
  f.subject_kind = "job";
  f.subject = pair;
  const ScalingPs* hot = Busiest(b);
  const double sat = rule.Param("saturation_pct");
  if (hot != nullptr && hot->busy_pct >= sat) {
    const ScalingPs* before = FindPs(a, hot->task);
    f.subject_kind = "task";
    f.subject = hot->task;
    f.task = hot->task;
    f.cause = "a PS saturated";
    f.summary =
        fmt::format("{}; {} saturated: busy {:.0f}% ({}) at {} workers, {} at {}", head, hot->task,
                    hot->busy_pct, hot->basis, b.workers,
                    before && before->busy_pct >= 0 ? fmt::format("{:.0f}%", before->busy_pct)
                                                    : std::string("unknown"),
                    a.workers);
    AddPsFigures(*hot, before, &f.summary, &ev);
  } else if (b.cpu_used_pct < 0 && b.worker_cpu.tasks > 0 &&
             b.runq_wait_pct >= rule.Param("cpu_wait_pct")) {
    // scaling --prometheus: tasks on one or many nodes, measured by the agents on each; the
    // node's CPU count is not among their series, so the wait is the judge.
    f.subject_kind = "job";
    f.subject = "the CPUs of the job's nodes";
    f.cause = "the tasks wait for a CPU";
    f.summary = fmt::format(
        "{}; the tasks wait for a CPU at {} workers: on a run queue {:.0f}% of the time they could "
        "run ({} at {} workers); workers: {}; PS: {}. The CPUs of their nodes (other load, or too "
        "many tasks per node) are the limit",
        head, b.workers, b.runq_wait_pct,
        a.runq_wait_pct >= 0 ? fmt::format("{:.0f}%", a.runq_wait_pct) : "unknown", a.workers,
        ScalingCpuText(b.worker_cpu), ScalingCpuText(b.ps_cpu));
    ev.push_back({"run-queue wait share of runnable time after", b.runq_wait_pct, "%"});
    if (a.runq_wait_pct >= 0) {
      ev.push_back({"run-queue wait share of runnable time before", a.runq_wait_pct, "%"});
    }
    AddCpuFigures("workers'", a.worker_cpu, b.worker_cpu, &ev);
    AddCpuFigures("PS", a.ps_cpu, b.ps_cpu, &ev);
  } else if (b.cpu_used_pct >= sat || b.runq_wait_pct >= rule.Param("cpu_wait_pct")) {
    // The node's CPUs: the recorded tasks use most of them, or their threads wait on a run
    // queue for a large share of the time they could run (other load on the node counts too).
    f.subject_kind = "node";
    f.subject = "the node's CPUs";
    f.cause = "the node's CPUs saturated";
    f.summary = fmt::format(
        "{}; the node's CPUs are the limit at {} workers: the recorded tasks use {} of the node's "
        "CPUs and their threads wait for a CPU {} of the time they could run ({} at {} workers)",
        head, b.workers, b.cpu_used_pct >= 0 ? fmt::format("{:.0f}%", b.cpu_used_pct) : "?",
        b.runq_wait_pct >= 0 ? fmt::format("{:.0f}%", b.runq_wait_pct) : "an unknown share",
        a.runq_wait_pct >= 0 ? fmt::format("{:.0f}%", a.runq_wait_pct) : "unknown", a.workers);
    if (b.cpu_used_pct >= 0)
      ev.push_back({"CPU used of the node's CPUs after", b.cpu_used_pct, "%"});
    if (a.cpu_used_pct >= 0)
      ev.push_back({"CPU used of the node's CPUs before", a.cpu_used_pct, "%"});
    if (b.runq_wait_pct >= 0) {
      ev.push_back({"run-queue wait share of runnable time after", b.runq_wait_pct, "%"});
    }
    if (a.runq_wait_pct >= 0) {
      ev.push_back({"run-queue wait share of runnable time before", a.runq_wait_pct, "%"});
    }
    if (hot != nullptr) {
      ev.push_back(
          {"busy share of " + hot->task + " after (" + hot->basis + ")", hot->busy_pct, "%"});
    }
  } else if (hot != nullptr && hot->busy_pct >= rule.Param("queueing_pct")) {
    // Below saturation a PS already makes requests wait: in an M/M/1 queue the mean wait is
    // busy / (1 - busy) service times, as long as the service itself at 50% busy.
    const ScalingPs* before = FindPs(a, hot->task);
    f.subject_kind = "task";
    f.subject = hot->task;
    f.task = hot->task;
    f.cause = "requests queue at a PS";
    f.summary = fmt::format(
        "{}; requests queue at {}: busy {:.0f}% ({}) at {} workers, {} at {}, so each request "
        "waits about {:.1f}x its own service time on average (M/M/1)",
        head, hot->task, hot->busy_pct, hot->basis, b.workers,
        before && before->busy_pct >= 0 ? fmt::format("{:.0f}%", before->busy_pct)
                                        : std::string("unknown"),
        a.workers, hot->busy_pct / std::max(1.0, 100 - hot->busy_pct));
    AddPsFigures(*hot, before, &f.summary, &ev);
  } else if (b.input_wait_pct >= rule.Param("input_wait_pct")) {
    f.subject_kind = "job";
    f.cause = "workers wait for input";
    f.summary = fmt::format(
        "{}; the workers wait for input {:.0f}% of their step time at {} workers ({} at {})", head,
        b.input_wait_pct, b.workers,
        a.input_wait_pct >= 0 ? fmt::format("{:.0f}%", a.input_wait_pct) : std::string("unknown"),
        a.workers);
    ev.push_back({"workers' input wait share after", b.input_wait_pct, "%"});
  } else if (b.throttled_pct >= rule.Param("throttled_pct")) {
    f.cause = "CFS throttling";
    f.summary = fmt::format(
        "{}; tasks are CFS-throttled in {:.0f}% of periods at {} workers (CPU limit reached)", head,
        b.throttled_pct, b.workers);
    ev.push_back({"CFS throttled periods after", b.throttled_pct, "%"});
  } else {
    f.cause = "nothing measured saturated";
    std::string measured;
    if (hot != nullptr) {
      measured +=
          fmt::format("busiest PS {} at {:.0f}% ({})", hot->task, hot->busy_pct, hot->basis);
    } else {
      const ScalingPs* top = nullptr;
      for (const ScalingPs& p : b.ps_busy) {
        if (p.cpu_cores >= 0 && (top == nullptr || p.cpu_cores > top->cpu_cores)) top = &p;
      }
      measured += top != nullptr ? fmt::format(
                                       "busiest PS by CPU {} at {:.2f} cores (no CPU "
                                       "limit or request: busy share unknown)",
                                       top->task, top->cpu_cores)
                                 : std::string("no PS busy share (no PS ops or samples)");
    }
    measured += b.input_wait_pct >= 0
                    ? fmt::format(", workers' input wait {:.0f}%", b.input_wait_pct)
                    : std::string(", no input ops");
    measured += b.throttled_pct >= 0
                    ? fmt::format(", CFS throttling {:.0f}% of periods", b.throttled_pct)
                : b.worker_cpu.tasks > 0 ? std::string(", no CFS quota")
                                         : std::string(", no CFS figures (timelines only)");
    if (b.runq_wait_pct >= 0) {
      measured += fmt::format(", run-queue wait {:.0f}% of runnable time", b.runq_wait_pct);
    }
    if (b.worker_cpu.tasks > 0) measured += "; workers: " + ScalingCpuText(b.worker_cpu);
    if (b.ps_cpu.tasks > 0) measured += "; PS: " + ScalingCpuText(b.ps_cpu);
    f.summary = fmt::format(
        "{}; nothing measured saturated at {} workers (measured: {}): look at the network and "
        "the workers' own step",
        head, b.workers, measured);
    if (hot != nullptr) ev.push_back({"busy share of " + hot->task + " after", hot->busy_pct, "%"});
  }
  // Each figure's "before" ahead of its "after", as the runs are listed (issue 39).
  for (size_t i = 0; i + 1 < ev.size(); ++i) {
    const std::string& l = ev[i].label;
    const size_t at = l.rfind(" after");
    if (at == std::string::npos || at + 6 != l.size()) continue;
    if (ev[i + 1].label == l.substr(0, at) + " before") std::swap(ev[i], ev[i + 1]), ++i;
  }
  f.evidence = std::move(ev);
  FindingObject o;
  o.subject = f.subject;
  o.task = f.task;
  o.summary = f.summary;
  o.evidence = f.evidence;
  f.objects.push_back(std::move(o));
  return f;
}

// Runs that saw different steal (the hypervisor running other guests) ran on machines of
// different speed: a warning naming each run's steal when the spread reaches the rule's
// steal_spread_pct; "" otherwise or when fewer than two runs know their steal.
std::string StealSpreadWarning(const std::vector<ScalingRun>& runs, const Rule& rule) {
  const ScalingRun* lo = nullptr;
  const ScalingRun* hi = nullptr;
  std::string each;
  int known = 0;
  for (const ScalingRun& r : runs) {
    if (r.steal_pct < 0) continue;
    ++known;
    if (lo == nullptr || r.steal_pct < lo->steal_pct) lo = &r;
    if (hi == nullptr || r.steal_pct > hi->steal_pct) hi = &r;
    each += fmt::format("{}{} {:.1f}%", each.empty() ? "" : ", ", r.name, r.steal_pct);
  }
  if (known < 2 || hi->steal_pct - lo->steal_pct < rule.Param("steal_spread_pct")) return "";
  return fmt::format(
      "the runs lost different shares of the node's CPU to steal (the hypervisor running other "
      "guests: {}): a run slowed by steal has a lower throughput, so the speed-ups and "
      "efficiencies of the runs against each other are off, most where the smallest run lost "
      "the most; measure the sweep again while steal is steady (/proc/stat, or the cloud's "
      "CPU-steal metric)",
      each);
}

}  // namespace

std::string ScalingCpuText(const ScalingCpu& c) {
  auto num = [](double v, const char* f) {
    return v < 0 ? std::string("-") : fmt::format(fmt::runtime(f), v);
  };
  return fmt::format(
      "{} CPUs per task (limit {}), {} runnable threads, run-queue wait {} (p99 {}), {} context "
      "switches/s ({} involuntary)",
      num(c.cpu_cores, "{:.2f}"), num(c.cpu_limit, "{:.2f}"), num(c.runnable, "{:.1f}"),
      num(c.runq_wait_pct, "{:.0f}%"),
      c.runq_p99_ns < 0 ? std::string("-") : FormatDuration(c.runq_p99_ns),
      num(c.switches_per_s, "{:.0f}"), num(c.involuntary_per_s, "{:.0f}"));
}

StatusOr<ScalingRun> MeasureRun(const std::string& name, const Capture& c, const AnalysisResult& r,
                                int64_t batch_size) {
  ScalingRun run;
  run.name = name;
  run.workers = r.stats.num_workers;
  run.ps = r.stats.num_ps;
  std::vector<TimeNs> medians;
  TimeNs wait_ns = 0, step_ns = 0;
  bool any_input = false;
  std::set<std::string> vars;
  for (const TaskStats& t : r.stats.tasks) {
    if (t.kind == JobKind::kPs) {
      ScalingPs p;
      p.task = t.label;
      if (t.ops > 0 && r.stats.span_ns > 0) {
        p.busy_pct = t.busy_pct;
        p.basis = "busy time / span";
      }
      if (!t.variables.empty()) {
        p.top_variable = t.variables.front().name;
        p.top_variable_pct = 100 * t.variables.front().share;
      }
      for (const VariableLoad& v : t.variables) vars.insert(v.name);
      run.ps_busy.push_back(std::move(p));
      continue;
    }
    if (t.steps == 0 || t.step_median_ns <= 0) continue;
    if (t.kind != JobKind::kWorker && t.kind != JobKind::kChief && t.kind != JobKind::kMaster) {
      continue;
    }
    run.steps += t.steps;
    medians.push_back(t.step_median_ns);
    run.throughput_steps_per_s += 1e9 / static_cast<double>(t.step_median_ns);
    InputWait w = InputWaitOfTask(c, t);
    any_input |= w.count > 0;
    wait_ns += w.union_ns;
    step_ns += t.step_mean_ns * t.steps;
  }
  // Bundles: each PS's CPU used against the CPUs it may use; CFS throttling of any task.
  for (const ProcessStats& p : r.processes) {
    if (p.throttled_pct >= 0) run.throttled_pct = std::max(run.throttled_pct, p.throttled_pct);
    if (p.kind != JobKind::kPs || p.cpus <= 0) continue;
    for (ScalingPs& s : run.ps_busy) {
      if (s.task == p.task && s.busy_pct < 0) {
        s.busy_pct = 100 * p.cpu_cores / p.cpus;
        s.basis = "CPU used / CPUs it may use";
      }
    }
  }
  MeasureNodeCpu(c, r, &run);
  if (run.steps > 0) {
    run.step_median_ns = MedianOf(medians);
  } else if (!MeasureLiveThroughput(c, r, &run)) {
    return InvalidInput(
        "{}: no worker steps found ({} worker tasks, {} PS): scaling needs step times (a "
        "timeline: RunOptions trace_level=FULL_TRACE, or the TF2 profiler), the workers' step "
        "counters (a bundle from tfdiag attach of tasks that keep a *.tfdiag-steps file open) "
        "or at least their traffic to the PS (attach with eBPF probes)",
        name, r.stats.num_workers, r.stats.num_ps);
  }
  if (batch_size > 0) run.throughput_examples_per_s = run.throughput_steps_per_s * batch_size;
  if (any_input && step_ns > 0) run.input_wait_pct = 100.0 * wait_ns / step_ns;
  run.variables.assign(vars.begin(), vars.end());
  return run;
}

StatusOr<ScalingResult> CompareRuns(std::vector<ScalingRun> runs, const Rule& rule) {
  if (runs.size() < 2) {
    return UsageError("scaling compares runs: give at least two (got {})", runs.size());
  }
  ScalingResult out;
  std::stable_sort(runs.begin(), runs.end(),
                   [](const ScalingRun& a, const ScalingRun& b) { return a.workers < b.workers; });
  const ScalingRun& base = runs.front();
  for (ScalingRun& r : runs) {
    r.speedup = base.throughput_steps_per_s > 0 && r.throughput_unit == base.throughput_unit
                    ? r.throughput_steps_per_s / base.throughput_steps_per_s
                    : 0;
    r.ideal_speedup = base.workers > 0 ? static_cast<double>(r.workers) / base.workers : 0;
    r.efficiency = r.ideal_speedup > 0 ? r.speedup / r.ideal_speedup : 0;
  }
  // Runs of one job have the same PS tasks and variables.
  for (size_t i = 1; i < runs.size(); ++i) {
    const ScalingRun& a = runs[i - 1];
    const ScalingRun& b = runs[i];
    if (PsList(a) != PsList(b)) {
      out.warnings.push_back(fmt::format(
          "{} and {} have different PS sets ({} vs {}): they may not be runs of one job, so the "
          "comparison also measures the PS change",
          a.name, b.name, PsList(a), PsList(b)));
    }
    if (!a.variables.empty() && !b.variables.empty() && a.variables != b.variables) {
      std::vector<std::string> only_a, only_b;
      std::set_difference(a.variables.begin(), a.variables.end(), b.variables.begin(),
                          b.variables.end(), std::back_inserter(only_a));
      std::set_difference(b.variables.begin(), b.variables.end(), a.variables.begin(),
                          a.variables.end(), std::back_inserter(only_b));
      out.warnings.push_back(fmt::format(
          "{} and {} host different variables (only in the first: {}; only in the second: {}): "
          "they may not be runs of one model",
          a.name, b.name, only_a.empty() ? "none" : Join(only_a, 3),
          only_b.empty() ? "none" : Join(only_b, 3)));
    }
    if (a.throughput_unit != b.throughput_unit) {
      out.warnings.push_back(fmt::format(
          "{} measures throughput in {} and {} in {}: not compared ({}; {})", a.name,
          a.throughput_unit, b.name, b.throughput_unit, a.throughput_source, b.throughput_source));
    }
    if (a.workers == b.workers) {
      out.warnings.push_back(
          fmt::format("{} and {} both have {} workers: not compared", a.name, b.name, a.workers));
    }
  }
  if (std::string w = StealSpreadWarning(runs, rule); !w.empty()) out.warnings.push_back(w);
  for (size_t i = 1; i < runs.size(); ++i) {
    const ScalingRun& a = runs[i - 1];
    const ScalingRun& b = runs[i];
    if (a.workers == b.workers || a.workers <= 0 || a.throughput_steps_per_s <= 0 ||
        a.throughput_unit != b.throughput_unit) {
      continue;
    }
    const double eff = (b.throughput_steps_per_s / a.throughput_steps_per_s) /
                       (static_cast<double>(b.workers) / a.workers);
    if (eff < rule.Param("min_efficiency")) out.findings.push_back(LimitFinding(a, b, eff, rule));
  }
  out.runs = std::move(runs);
  JudgeScaling(rule, &out);
  return out;
}

}  // namespace tfdiag
