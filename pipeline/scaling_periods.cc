#include "pipeline/scaling_periods.h"

#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "collectors/prometheus/job_reader.h"
#include "collectors/prometheus/job_steps.h"
#include "core/checked_number.h"
#include "core/escape.h"
#include "core/tf_roles.h"

namespace tfdiag {

namespace {

struct PodRole {
  std::string type;  // a TF role (core/tf_roles.h): "ps", "worker", "chief", ...
  int index = -1;
};

// "<job>-<type>-<index>" (Kubeflow's naming, ParseTfPodName) of a TF role; type "" when the
// name does not follow it.
PodRole RoleFromName(const std::string& job, const std::string& pod) {
  PodRole r;
  const std::optional<TfPodName> p = ParseTfPodName(pod);
  if (p.has_value() && p->job == job && !p->role.empty()) {
    r.type = p->role;
    r.index = p->index;
  }
  return r;
}

// Longest pod name read: Kubernetes object names are DNS subdomains (RFC 1123), 253 bytes at
// most (https://kubernetes.io/docs/concepts/overview/working-with-objects/names/).
constexpr size_t kMaxPodNameBytes = 253;
// Largest magnitude of a figure read from Prometheus (cores, steps/s, bytes/s, fractions).
constexpr double kMaxPromFigure = 1e15;

std::string PodRegex(const std::vector<std::string>& pods) {
  std::string re;
  for (const std::string& p : pods) re += (re.empty() ? "" : "|") + PromRegexEscape(p);
  return re;
}

struct PodSeries {
  std::string pod;
  PodRole role;
  std::set<long> running;  // grid points (index k) at which the pod was Running
};

// A figure by task ("worker:3").
using TaskValues = std::map<std::string, double>;

// An instant query's values by task: the agents' replica_type/replica_index labels, else the
// series' pod through `task_of_pod`; other series are left out. Values of one task add up (a
// pod replaced within the period). Errors: the client's.
// Values past kMaxPromFigure (1e308, inf, nan from a hostile or broken exporter) are left out and
// counted in *absurd: the figures are CPU cores, rates and fractions, far below it.
StatusOr<TaskValues> ByTask(PromClient* client, const std::string& promql, double t,
                            const std::map<std::string, std::string>& task_of_pod,
                            int64_t* absurd) {
  StatusOr<std::vector<PromSeries>> r = client->Query(promql, t);
  if (!r.ok()) return r.status();
  TaskValues out;
  for (const PromSeries& s : *r) {
    if (s.points.empty()) continue;
    if (!(std::fabs(s.points.back().second) <= kMaxPromFigure)) {
      if (!std::isnan(s.points.back().second)) ++*absurd;  // NaN: no sample, as before
      continue;
    }
    const std::string role = TfRoleOf(s.Label("replica_type"));
    int index = 0;
    std::string task;
    if (!role.empty() && ParseTaskIndex(s.Label("replica_index"), &index)) {
      task = fmt::format("{}:{}", role, index);
    } else if (auto it = task_of_pod.find(s.Label("pod")); it != task_of_pod.end()) {
      task = it->second;
    } else {
      continue;
    }
    out[task] += s.points.back().second;
  }
  return out;
}

// The tasks that ran in one period, by role, and the regex of their pods' names.
struct PeriodTasks {
  std::set<std::string> workers, ps;
  std::string re;
};

// CPU figures of one period's tasks (per second over the period, or means), by task.
struct CpuFigures {
  TaskValues cpu_c, cpu_a;           // cores: cAdvisor (container series), the agents (the process)
  TaskValues limit, request;         // cores (kube-state-metrics)
  TaskValues runnable;               // mean threads in state R
  TaskValues wait;                   // run-queue wait, s per s
  TaskValues switches, involuntary;  // per s
  TaskValues throttled;              // throttled / all CFS periods, 0..1
  double worker_p99_ns = -1, ps_p99_ns = -1;
  // CPU used, cores (cAdvisor's, else the agent's: second is true), -1 unknown.
  std::pair<double, bool> CpuOf(const std::string& task) const {
    if (auto it = cpu_c.find(task); it != cpu_c.end()) return {it->second, false};
    if (auto it = cpu_a.find(task); it != cpu_a.end()) return {it->second, true};
    return {-1, false};
  }
  // Adds the run-queue wait of `tasks` that have the histogram, and their on-CPU time (the
  // agent's CPU of the same process) to *wait and *oncpu (s per s); false when none has it.
  bool AddWaits(const std::set<std::string>& tasks, double* w, double* oncpu) const {
    bool any = false;
    for (const std::string& t : tasks) {
      auto it = wait.find(t);
      if (it == wait.end()) continue;
      auto c = cpu_a.find(t);
      *w += it->second;
      *oncpu += c != cpu_a.end() ? c->second : std::max(0.0, CpuOf(t).first);
      any = true;
    }
    return any;
  }
};

// Reads the period's CPU figures: `by_task(promql)` answers an instant query by task at the
// period's end, `raw(promql)` the series; both fill @RE@, @NS@ and @D@. `agent_sel` selects the
// agents' series. 11 queries. Errors: the client's.
template <typename ByTaskFn, typename RawFn>
StatusOr<CpuFigures> ReadCpuFigures(const std::string& agent_sel, ByTaskFn by_task, RawFn raw) {
  CpuFigures f;
  const std::string by = "sum by (pod, replica_type, replica_index) ";
  const std::string ag = "{" + agent_sel + "}";
  const std::string pods = "pod=~\"@RE@\"@NS@";
  const std::pair<TaskValues*, std::string> queries[] = {
      {&f.cpu_c,
       "sum by (pod) (rate(container_cpu_usage_seconds_total{container!=\"\","
       "container!=\"POD\"," +
           pods + "}[@D@s]))"},
      {&f.cpu_a, by + "(rate(tfdiag_task_cpu_seconds_total" + ag + "[@D@s]))"},
      {&f.limit,
       "sum by (pod) (kube_pod_container_resource_limits{resource=\"cpu\"," + pods + "})"},
      {&f.request,
       "sum by (pod) (kube_pod_container_resource_requests{resource=\"cpu\"," + pods + "})"},
      {&f.runnable, by + "(avg_over_time(tfdiag_task_runnable_threads" + ag + "[@D@s]))"},
      {&f.wait, by + "(rate(tfdiag_runqueue_latency_seconds_sum" + ag + "[@D@s]))"},
      {&f.switches, by + "(rate(tfdiag_context_switches_total" + ag + "[@D@s]))"},
      {&f.involuntary,
       by + "(rate(tfdiag_context_switches_total{kind=\"involuntary\"," + agent_sel + "}[@D@s]))"},
      {&f.throttled, by + "(rate(tfdiag_cgroup_throttled_periods_total" + ag + "[@D@s])) / " + by +
                         "(rate(tfdiag_cgroup_periods_total" + ag + "[@D@s]) > 0)"},
  };
  for (const auto& [into, promql] : queries) {
    StatusOr<TaskValues> r = by_task(promql);
    if (!r.ok()) return r.status();
    *into = std::move(*r);
  }
  // p99 of the run-queue wait per role, over the role's tasks' waits together.
  StatusOr<std::vector<PromSeries>> p99 =
      raw("histogram_quantile(0.99, sum by (replica_type, le) "
          "(rate(tfdiag_runqueue_latency_seconds_bucket" +
          ag + "[@D@s])))");
  if (!p99.ok()) return p99.status();
  for (const PromSeries& s : *p99) {
    if (s.points.empty() || !(s.points.back().second >= 0) ||
        !std::isfinite(s.points.back().second))
      continue;
    const std::string role = TfRoleOf(s.Label("replica_type"));
    double* into = IsWorkerLikeRole(role) ? &f.worker_p99_ns
                   : role == "ps"         ? &f.ps_p99_ns
                                          : nullptr;
    if (into != nullptr) *into = std::max(*into, s.points.back().second * 1e9);
  }
  return f;
}

// Means per task over `tasks` of each figure (-1 where none has it), the role's wait share
// and its highest CFS throttled share.
ScalingCpu RoleCpu(const CpuFigures& f, const std::set<std::string>& tasks) {
  ScalingCpu c;
  auto mean = [&](const TaskValues* m, double* out, bool positive_only) {
    double sum = 0;
    int n = 0;
    for (const std::string& t : tasks) {
      double v = -1;
      if (m == nullptr) {
        v = f.CpuOf(t).first;
      } else if (auto it = m->find(t); it != m->end()) {
        v = it->second;
      }
      if (v < 0 || (positive_only && v <= 0)) continue;
      sum += v;
      ++n;
    }
    if (n > 0) *out = sum / n;
    return n;
  };
  c.tasks = mean(nullptr, &c.cpu_cores, false);
  mean(&f.limit, &c.cpu_limit, true);
  mean(&f.runnable, &c.runnable, false);
  mean(&f.switches, &c.switches_per_s, false);
  mean(&f.involuntary, &c.involuntary_per_s, false);
  for (const std::string& t : tasks) {
    if (auto it = f.throttled.find(t); it != f.throttled.end() && it->second >= 0)
      c.throttled_pct = std::max(c.throttled_pct, 100 * it->second);
  }
  double wait = 0, oncpu = 0;
  if (f.AddWaits(tasks, &wait, &oncpu) && oncpu + wait > 0)
    c.runq_wait_pct = 100 * wait / (oncpu + wait);
  return c;
}

// The index of a task "ps:3" (for ordering), -1 when it has none.
int TaskIndex(const std::string& task) {
  int index = -1;
  const size_t colon = task.find(':');
  if (colon == std::string::npos || !ParseTaskIndex(task.substr(colon + 1), &index)) return -1;
  return index;
}

struct ThroughputSource {
  std::string query;  // with {RE} and {D} filled per period
  std::string text;   // throughput_source
  bool proxy = false;
  std::string unit;
};

}  // namespace

StatusOr<PromScalingResult> ReadScalingPeriods(PromClient* client, const PromScalingOptions& o) {
  if (o.job.empty()) return UsageError("--prometheus needs --job NAME");
  if (!(o.end_s > o.start_s)) return UsageError("--end must be after --start");
  PromScalingResult out;
  const double window = o.end_s - o.start_s;
  out.step_s = o.step_s > 0 ? o.step_s : std::max(15.0, std::ceil(window / 240));
  const std::string ns =
      o.namespace_.empty() ? "" : fmt::format(",namespace=\"{}\"", PromQuote(o.namespace_));
  const std::string job = PromQuote(o.job);
  const std::string names =
      fmt::format("{}-({})-[0-9]+", PromRegexEscape(o.job), TfRolesAlternation());
  const std::vector<std::pair<std::string, std::string>> selectors = {
      {fmt::format("kube_pod_status_phase Running of kube_pod_info{{created_by_name=\"{}\"}}", job),
       fmt::format("max by (namespace, pod) ((kube_pod_status_phase{{phase=\"Running\"{}}} == 1) "
                   "and on (namespace, pod) kube_pod_info{{created_by_name=\"{}\"{}}})",
                   ns, job, ns)},
      {fmt::format("kube_pod_status_phase Running of pods named {}", names),
       fmt::format("max by (namespace, pod) (kube_pod_status_phase{{phase=\"Running\",pod=~\"{}\""
                   "{}}} == 1)",
                   names, ns)},
      {fmt::format("tfdiag_task_up{{tf_job=\"{}\"}} == 1 (tfdiag agents)", job),
       fmt::format("max by (namespace, pod, replica_type, replica_index) "
                   "(tfdiag_task_up{{tf_job=\"{}\"{}}} == 1)",
                   job, ns)},
  };
  std::vector<PodSeries> pods;
  std::vector<std::string> tried;
  std::set<std::string> namespaces;
  bool found_by_agents = false;  // by tfdiag_task_up: the agents' series are selected by tf_job
  for (const auto& [name, query] : selectors) {
    tried.push_back(name);
    StatusOr<std::vector<PromSeries>> r = client->QueryRange(query, o.start_s, o.end_s, out.step_s);
    if (!r.ok()) return r.status();
    std::map<std::string, size_t> seen_pod;  // pod name -> index in pods (this selector)
    for (const PromSeries& s : *r) {
      PodSeries p;
      p.pod = s.Label("pod");
      if (p.pod.size() > kMaxPodNameBytes) {
        // Not a Kubernetes name; in every query's regex it took 54 s for a 16 MiB one.
        out.notes.push_back(
            fmt::format("a pod name of {} bytes ({}...): left out (Kubernetes "
                        "names have at most {})",
                        p.pod.size(), Printable(p.pod.substr(0, 40)), kMaxPodNameBytes));
        continue;
      }
      p.role = RoleFromName(o.job, p.pod);
      if (p.role.type.empty() && !TfRoleOf(s.Label("replica_type")).empty() &&
          ParseTaskIndex(s.Label("replica_index"), &p.role.index)) {
        p.role.type = TfRoleOf(s.Label("replica_type"));
      }
      if (p.role.type.empty()) {
        out.notes.push_back(fmt::format(
            "pod {}: no role (neither <job>-<type>-<index> nor replica_type): left out", p.pod));
        continue;
      }
      for (const auto& [t, v] : s.points) {
        if (v == 1) p.running.insert(std::lround((t - o.start_s) / out.step_s));
      }
      namespaces.insert(s.Label("namespace"));
      // One pod in two series (agents claiming it with two replica labels): counted once, not
      // as two workers. Tasks outside Kubernetes (no pod name) are told apart by their role.
      const std::string key =
          s.Label("namespace") + "/" +
          (p.pod.empty() ? fmt::format("{}:{}", p.role.type, p.role.index) : p.pod);
      if (auto it = seen_pod.find(key); it != seen_pod.end()) {
        PodSeries& first = pods[it->second];
        first.running.insert(p.running.begin(), p.running.end());
        out.notes.push_back(fmt::format(
            "pod {}: more than one series from {} (duplicates from two sources?): counted once",
            Printable(p.pod), name));
        continue;
      }
      seen_pod[key] = pods.size();
      pods.push_back(std::move(p));
    }
    if (!pods.empty()) {
      out.pods_source = name;
      found_by_agents = &name == &selectors.back().first;
      break;
    }
  }
  if (pods.empty()) {
    std::string all;
    for (const std::string& t : tried) all += (all.empty() ? "" : "; ") + t;
    StatusOr<std::string> jobs = AgentJobsText(client, o.namespace_, o.start_s, o.end_s);
    if (!jobs.ok()) return jobs.status();
    StatusOr<std::string> tf_jobs = TfJobsText(client, o.start_s, o.end_s);
    if (!tf_jobs.ok()) return tf_jobs.status();
    return NotFound("no pod of job {} ran between {} and {} (tried: {}){}{}", Printable(o.job),
                    FormatPromTime(o.start_s), FormatPromTime(o.end_s), Printable(all), *tf_jobs,
                    *jobs);
  }
  if (namespaces.size() > 1 && o.namespace_.empty()) {
    return UsageError("job {} has pods in {} namespaces: give --namespace", o.job,
                      namespaces.size());
  }
  // Worker counts at every grid point.
  const long points = std::lround(std::floor(window / out.step_s)) + 1;
  std::vector<int> workers(points, 0);
  for (const PodSeries& p : pods) {
    for (long k : p.running) {
      if (k < 0 || k >= points) continue;
      if (IsWorkerLikeRole(p.role.type)) workers[k]++;
    }
  }
  // Stretches of one worker count; the points next to a change are dropped.
  std::string seen;
  for (long k = 0; k < points;) {
    long j = k;
    while (j < points && workers[j] == workers[k]) ++j;
    const int count = workers[k];
    seen += fmt::format("{}{} workers {}..{}", seen.empty() ? "" : ", ", count,
                        FormatPromTime(o.start_s + k * out.step_s),
                        FormatPromTime(o.start_s + (j - 1) * out.step_s));
    long first = k > 0 ? k + 1 : k, last = j < points ? j - 2 : j - 1;
    k = j;
    if (count == 0) continue;
    if (last - first + 1 < o.min_points) {
      out.notes.push_back(fmt::format(
          "{} workers from {} to {}: too short for a run ({} steady points of {} s, need {})",
          count, FormatPromTime(o.start_s + first * out.step_s),
          FormatPromTime(o.start_s + last * out.step_s), std::max(0L, last - first + 1), out.step_s,
          o.min_points));
      continue;
    }
    PromScalingPeriod period;
    period.start_s = o.start_s + first * out.step_s;
    period.end_s = o.start_s + last * out.step_s;
    period.workers = count;
    out.periods.push_back(period);
  }
  if (out.periods.size() < 2) {
    return InvalidInput(
        "job {}: {} period(s) with a steady number of worker pods between {} and {} (need two to "
        "compare; seen: {})",
        o.job, out.periods.size(), FormatPromTime(o.start_s), FormatPromTime(o.end_s), seen);
  }
  // The agents' series of the job: by its tf_job label when the agents found the pods (tasks
  // outside Kubernetes have no pod name), else by the pods' names.
  const std::string agent_sel =
      found_by_agents ? fmt::format("tf_job=\"{}\"{}", job, ns) : "pod=~\"@RE@\"@NS@";
  std::vector<ThroughputSource> sources;
  if (!o.step_metric.empty()) {
    sources.push_back({"sum by (pod) (rate(" + o.step_metric + "{pod=~\"@RE@\"@NS@}[@D@s]))",
                       o.step_metric + " (the job's own step counter), rate over each period",
                       false, "steps/s"});
  }
  sources.push_back({"sum by (pod, replica_type, replica_index) (rate(tfdiag_task_steps_total{" +
                         agent_sel + "}[@D@s]))",
                     "tfdiag_task_steps_total (the tfdiag agents' reading of the workers' step "
                     "counters), rate over each period",
                     false, "steps/s"});
  sources.push_back(
      {"sum by (pod, replica_type, replica_index) (rate(tfdiag_traffic_bytes_total{"
       "direction=\"sent\",peer_task=~\"ps:.*\"," +
           agent_sel + "}[@D@s]))",
       "throughput from tfdiag_traffic_bytes_total{direction=\"sent\",peer_task=~\"ps:.*\"}, the "
       "workers' bytes to the PS per second (proxy: bytes per step assumed constant across runs; "
       "no step counter in Prometheus)",
       true, "worker->PS bytes/s"});
  sources.push_back(
      {"sum by (pod) (max by (pod, interface) (rate(container_network_transmit_bytes_total{"
       "interface!=\"lo\",pod=~\"@RE@\"@NS@}[@D@s])))",
       "throughput from container_network_transmit_bytes_total (cAdvisor), the worker pods' "
       "bytes sent per second (proxy: bytes per step assumed constant across runs; no step "
       "counter in Prometheus)",
       true, "worker bytes sent/s"});
  // Queries with @RE@ (the pods' regex), @NS@ (namespace matcher) and @D@ (the period, s).
  // One source for every period, so the runs compare: the first with series in all of them.
  auto fill = [&](std::string q, const std::string& re, double d) {
    auto put = [&](const std::string& key, const std::string& v) {
      for (size_t at; (at = q.find(key)) != std::string::npos;) q.replace(at, key.size(), v);
    };
    put("@RE@", re);
    put("@NS@", ns);
    put("@D@", fmt::format("{:.0f}", d));
    return q;
  };
  // Each period's tasks ("worker:3") by role, and the regex of their pods' names.
  std::vector<PeriodTasks> tasks(out.periods.size());
  std::map<std::string, std::string> task_of_pod;
  for (size_t i = 0; i < out.periods.size(); ++i) {
    PromScalingPeriod& p = out.periods[i];
    const long a = std::lround((p.start_s - o.start_s) / out.step_s);
    const long b = std::lround((p.end_s - o.start_s) / out.step_s);
    std::vector<std::string> names;
    for (const PodSeries& s : pods) {
      if (s.running.lower_bound(a) == s.running.end() || *s.running.lower_bound(a) > b) continue;
      const std::string task = fmt::format("{}:{}", s.role.type, s.role.index);
      if (IsWorkerLikeRole(s.role.type)) tasks[i].workers.insert(task);
      if (s.role.type == "ps") tasks[i].ps.insert(task);
      if (!s.pod.empty()) {
        names.push_back(s.pod);
        task_of_pod[s.pod] = task;
      }
    }
    tasks[i].re = PodRegex(names);
    // PS tasks that ran in the period, as the JSON lists them (not the most at one point).
    p.ps = static_cast<int>(tasks[i].ps.size());
  }
  int64_t absurd = 0;
  auto by_task = [&](const std::string& tmpl, size_t i) {
    const PromScalingPeriod& p = out.periods[i];
    return ByTask(client, fill(tmpl, tasks[i].re, p.end_s - p.start_s), p.end_s, task_of_pod,
                  &absurd);
  };
  std::vector<TaskValues> rates(out.periods.size());
  const ThroughputSource* used = nullptr;
  for (const ThroughputSource& src : sources) {
    bool all = true;
    for (size_t i = 0; i < out.periods.size() && all; ++i) {
      StatusOr<TaskValues> r = by_task(src.query, i);
      if (!r.ok()) return r.status();
      rates[i].clear();
      for (const auto& [task, v] : *r) {
        if (tasks[i].workers.count(task)) rates[i][task] = v;
      }
      all = !rates[i].empty();
    }
    if (all) {
      used = &src;
      break;
    }
    out.notes.push_back(fmt::format("throughput: {} has no series for the workers of every period",
                                    src.text.substr(0, src.text.find(' '))));
  }
  if (used == nullptr) {
    return InvalidInput(
        "job {}: no throughput for the periods: no step counter (tfdiag_task_steps_total{}) and "
        "no worker bytes (tfdiag_traffic_bytes_total, container_network_transmit_bytes_total)",
        o.job, o.step_metric.empty() ? "" : " or " + o.step_metric);
  }
  for (size_t i = 0; i < out.periods.size(); ++i) {
    const PromScalingPeriod& p = out.periods[i];
    const double d = p.end_s - p.start_s;
    ScalingRun run;
    run.name = fmt::format("{} workers {}..{}", p.workers, FormatPromTime(p.start_s),
                           FormatPromTime(p.end_s));
    run.workers = p.workers;
    run.ps = p.ps;
    run.throughput_source = used->text;
    run.throughput_proxy = used->proxy;
    run.throughput_unit = used->unit;
    std::vector<TimeNs> step_ns;
    for (const auto& [task, rate] : rates[i]) {
      run.throughput_steps_per_s += rate;
      if (used->proxy || rate <= 0) continue;
      // Saturated: rates are the server's doubles (1e300 would make the casts undefined).
      run.steps = SaturatedAdd(run.steps, SaturatedRound(rate * d, 0));
      step_ns.push_back(SaturatedRound(1e9 / rate, 0));
    }
    std::sort(step_ns.begin(), step_ns.end());
    if (!step_ns.empty()) run.step_median_ns = step_ns[step_ns.size() / 2];
    StatusOr<CpuFigures> cpu = ReadCpuFigures(
        agent_sel, [&](const std::string& q) { return by_task(q, i); },
        [&](const std::string& q) { return client->Query(fill(q, tasks[i].re, d), p.end_s); });
    if (!cpu.ok()) return cpu.status();
    run.worker_cpu = RoleCpu(*cpu, tasks[i].workers);
    run.ps_cpu = RoleCpu(*cpu, tasks[i].ps);
    run.worker_cpu.runq_p99_ns = cpu->worker_p99_ns;
    run.ps_cpu.runq_p99_ns = cpu->ps_p99_ns;
    // The run's run-queue wait share over all its tasks, as bundles measure it (scaling.h).
    double wait = 0, oncpu = 0;
    const bool w = cpu->AddWaits(tasks[i].workers, &wait, &oncpu);
    if ((cpu->AddWaits(tasks[i].ps, &wait, &oncpu) || w) && oncpu + wait > 0) {
      run.runq_wait_pct = 100 * wait / (oncpu + wait);
    }
    run.throttled_pct = std::max(run.worker_cpu.throttled_pct, run.ps_cpu.throttled_pct);
    // PS busy: CPU used over the CPU limit (else request) of each PS; without either, its CPU.
    for (const std::string& task : tasks[i].ps) {
      ScalingPs ps;
      ps.task = task;
      const auto [used_cpu, from_agent] = cpu->CpuOf(task);
      ps.cpu_cores = used_cpu;
      double cap = cpu->limit.count(task) ? cpu->limit.at(task) : 0;
      std::string basis = from_agent ? "CPU used / CPU limit (tfdiag agents, kube-state-metrics)"
                                     : "CPU used / CPU limit (cAdvisor, kube-state-metrics)";
      if (cap <= 0 && cpu->request.count(task)) {
        cap = cpu->request.at(task);
        basis = "CPU used / CPU request (no limit)";
      }
      if (used_cpu >= 0 && cap > 0) {
        ps.busy_pct = 100 * used_cpu / cap;
        ps.basis = basis;
      } else if (used_cpu >= 0) {
        ps.basis =
            fmt::format("CPU used in cores ({}; no CPU limit or request: busy share unknown)",
                        from_agent ? "tfdiag agents" : "cAdvisor");
      }
      run.ps_busy.push_back(std::move(ps));
    }
    std::sort(run.ps_busy.begin(), run.ps_busy.end(), [](const ScalingPs& x, const ScalingPs& y) {
      return TaskIndex(x.task) < TaskIndex(y.task);
    });
    out.runs.push_back(std::move(run));
  }
  if (absurd > 0) {
    out.notes.push_back(fmt::format(
        "{} value(s) from Prometheus past {:g} or infinite left out (not a CPU figure, rate or "
        "fraction: a broken or hostile exporter?)",
        absurd, kMaxPromFigure));
  }
  return out;
}

}  // namespace tfdiag
