#include "collectors/prometheus/scaling_periods.h"

#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "collectors/prometheus/job_reader.h"
#include "collectors/prometheus/job_steps.h"
#include "core/checked_number.h"
#include "report/escape.h"

namespace tfdiag {

namespace {

struct PodRole {
  std::string type;  // "ps", "worker", "chief", "master"
  int index = -1;
};

bool IsWorkerLike(const std::string& type) {
  return type == "worker" || type == "chief" || type == "master";
}

// "<job>-<type>-<index>" (Kubeflow's naming); type "" when the name does not follow it.
PodRole RoleFromName(const std::string& job, const std::string& pod) {
  PodRole r;
  if (pod.size() <= job.size() + 1 || pod.compare(0, job.size() + 1, job + "-") != 0) return r;
  const std::string rest = pod.substr(job.size() + 1);
  const size_t dash = rest.rfind('-');
  if (dash == std::string::npos || dash + 1 >= rest.size()) return r;
  if (!prom::ParseTaskIndex(std::string_view(rest).substr(dash + 1), &r.index)) return r;
  r.type = rest.substr(0, dash);
  if (r.type != "ps" && !IsWorkerLike(r.type)) r.type.clear();
  return r;
}

std::string Iso(double t) {
  const time_t s = static_cast<time_t>(t);
  tm g{};
  gmtime_r(&s, &g);
  char buf[32];
  strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &g);
  return buf;
}

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

// Rates by pod at `t` over the last `range_s`: {pod -> value}.
StatusOr<std::map<std::string, double>> ByPod(PromClient* client, const std::string& promql,
                                              double t) {
  StatusOr<std::vector<PromSeries>> r = client->Query(promql, t);
  if (!r.ok()) return r.status();
  std::map<std::string, double> out;
  for (const PromSeries& s : *r) {
    if (s.points.empty() || !std::isfinite(s.points.back().second)) continue;
    out[s.Label("pod")] = s.points.back().second;
  }
  return out;
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
      fmt::format("{}-(ps|worker|chief|master)-[0-9]+", PromRegexEscape(o.job));
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
  for (const auto& [name, query] : selectors) {
    tried.push_back(name);
    StatusOr<std::vector<PromSeries>> r = client->QueryRange(query, o.start_s, o.end_s, out.step_s);
    if (!r.ok()) return r.status();
    for (const PromSeries& s : *r) {
      PodSeries p;
      p.pod = s.Label("pod");
      p.role = RoleFromName(o.job, p.pod);
      if (p.role.type.empty() && !s.Label("replica_type").empty() &&
          prom::ParseTaskIndex(s.Label("replica_index"), &p.role.index)) {
        p.role.type = s.Label("replica_type");
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
      pods.push_back(std::move(p));
    }
    if (!pods.empty()) {
      out.pods_source = name;
      break;
    }
  }
  if (pods.empty()) {
    std::string all;
    for (const std::string& t : tried) all += (all.empty() ? "" : "; ") + t;
    StatusOr<std::string> jobs = AgentJobsText(client, o.namespace_, o.start_s, o.end_s);
    if (!jobs.ok()) return jobs.status();
    return NotFound("no pod of job {} ran between {} and {} (tried: {}){}", Printable(o.job),
                    Iso(o.start_s), Iso(o.end_s), Printable(all), *jobs);
  }
  if (namespaces.size() > 1 && o.namespace_.empty()) {
    return UsageError("job {} has pods in {} namespaces: give --namespace", o.job,
                      namespaces.size());
  }
  // Worker and PS counts at every grid point.
  const long points = std::lround(std::floor(window / out.step_s)) + 1;
  std::vector<int> workers(points, 0), ps(points, 0);
  for (const PodSeries& p : pods) {
    for (long k : p.running) {
      if (k < 0 || k >= points) continue;
      (IsWorkerLike(p.role.type) ? workers : ps)[k]++;
    }
  }
  // Stretches of one worker count; the points next to a change are dropped.
  std::string seen;
  for (long k = 0; k < points;) {
    long j = k;
    while (j < points && workers[j] == workers[k]) ++j;
    const int count = workers[k];
    seen += fmt::format("{}{} workers {}..{}", seen.empty() ? "" : ", ", count,
                        Iso(o.start_s + k * out.step_s), Iso(o.start_s + (j - 1) * out.step_s));
    long first = k > 0 ? k + 1 : k, last = j < points ? j - 2 : j - 1;
    k = j;
    if (count == 0) continue;
    if (last - first + 1 < o.min_points) {
      out.notes.push_back(fmt::format(
          "{} workers from {} to {}: too short for a run ({} steady points of {} s, need {})",
          count, Iso(o.start_s + first * out.step_s), Iso(o.start_s + last * out.step_s),
          std::max(0L, last - first + 1), out.step_s, o.min_points));
      continue;
    }
    PromScalingPeriod period;
    period.start_s = o.start_s + first * out.step_s;
    period.end_s = o.start_s + last * out.step_s;
    period.workers = count;
    period.ps = *std::max_element(ps.begin() + first, ps.begin() + last + 1);
    out.periods.push_back(period);
  }
  if (out.periods.size() < 2) {
    return InvalidInput(
        "job {}: {} period(s) with a steady number of worker pods between {} and {} (need two to "
        "compare; seen: {})",
        o.job, out.periods.size(), Iso(o.start_s), Iso(o.end_s), seen);
  }
  std::vector<ThroughputSource> sources;
  if (!o.step_metric.empty()) {
    sources.push_back({"sum by (pod) (rate(" + o.step_metric + "{pod=~\"@RE@\"@NS@}[@D@s]))",
                       o.step_metric + " (the job's own step counter), rate over each period",
                       false, "steps/s"});
  }
  sources.push_back({"sum by (pod) (rate(tfdiag_task_steps_total{pod=~\"@RE@\"@NS@}[@D@s]))",
                     "tfdiag_task_steps_total (the tfdiag agents' reading of the workers' step "
                     "counters), rate over each period",
                     false, "steps/s"});
  sources.push_back(
      {"sum by (pod) (rate(tfdiag_traffic_bytes_total{direction=\"sent\",peer_task=~\"ps:.*\","
       "pod=~\"@RE@\"@NS@}[@D@s]))",
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
  std::vector<std::vector<std::string>> worker_pods(out.periods.size()),
      ps_pods(out.periods.size());
  for (size_t i = 0; i < out.periods.size(); ++i) {
    const PromScalingPeriod& p = out.periods[i];
    const long a = std::lround((p.start_s - o.start_s) / out.step_s);
    const long b = std::lround((p.end_s - o.start_s) / out.step_s);
    for (const PodSeries& s : pods) {
      if (s.running.lower_bound(a) == s.running.end() || *s.running.lower_bound(a) > b) continue;
      (IsWorkerLike(s.role.type) ? worker_pods[i] : ps_pods[i]).push_back(s.pod);
    }
  }
  std::vector<std::map<std::string, double>> rates(out.periods.size());
  const ThroughputSource* used = nullptr;
  for (const ThroughputSource& src : sources) {
    bool all = true;
    for (size_t i = 0; i < out.periods.size() && all; ++i) {
      const PromScalingPeriod& p = out.periods[i];
      StatusOr<std::map<std::string, double>> r =
          ByPod(client, fill(src.query, PodRegex(worker_pods[i]), p.end_s - p.start_s), p.end_s);
      if (!r.ok()) return r.status();
      rates[i] = std::move(*r);
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
    run.name = fmt::format("{} workers {}..{}", p.workers, Iso(p.start_s), Iso(p.end_s));
    run.workers = p.workers;
    run.ps = p.ps;
    run.throughput_source = used->text;
    run.throughput_proxy = used->proxy;
    run.throughput_unit = used->unit;
    std::vector<TimeNs> step_ns;
    for (const auto& [pod, rate] : rates[i]) {
      run.throughput_steps_per_s += rate;
      if (used->proxy || rate <= 0) continue;
      // Saturated: rates are the server's doubles (1e300 would make the casts undefined).
      run.steps = SaturatedAdd(run.steps, SaturatedRound(rate * d, 0));
      step_ns.push_back(SaturatedRound(1e9 / rate, 0));
    }
    std::sort(step_ns.begin(), step_ns.end());
    if (!step_ns.empty()) run.step_median_ns = step_ns[step_ns.size() / 2];
    // PS busy: CPU used over the CPU limit (else request) of each PS pod.
    const std::string re = PodRegex(ps_pods[i]);
    StatusOr<std::map<std::string, double>> cpu =
        ByPod(client,
              fill("sum by (pod) (rate(container_cpu_usage_seconds_total{container!=\"\","
                   "container!=\"POD\",pod=~\"@RE@\"@NS@}[@D@s]))",
                   re, d),
              p.end_s);
    if (!cpu.ok()) return cpu.status();
    std::string cpu_basis = "CPU used / CPU limit (cAdvisor, kube-state-metrics)";
    if (cpu->empty()) {
      cpu = ByPod(client,
                  fill("sum by (pod) (rate(tfdiag_task_cpu_seconds_total{pod=~\"@RE@\"@NS@}"
                       "[@D@s]))",
                       re, d),
                  p.end_s);
      if (!cpu.ok()) return cpu.status();
      cpu_basis = "CPU used / CPU limit (tfdiag agents, kube-state-metrics)";
    }
    StatusOr<std::map<std::string, double>> limit = ByPod(
        client,
        fill(
            "sum by (pod) (kube_pod_container_resource_limits{resource=\"cpu\",pod=~\"@RE@\"@NS@})",
            re, d),
        p.end_s);
    if (!limit.ok()) return limit.status();
    StatusOr<std::map<std::string, double>> request = ByPod(
        client,
        fill("sum by (pod) (kube_pod_container_resource_requests{resource=\"cpu\",pod=~\"@RE@\""
             "@NS@})",
             re, d),
        p.end_s);
    if (!request.ok()) return request.status();
    std::map<int, ScalingPs> by_index;
    for (const PodSeries& s : pods) {
      if (s.role.type != "ps" ||
          std::find(ps_pods[i].begin(), ps_pods[i].end(), s.pod) == ps_pods[i].end()) {
        continue;
      }
      ScalingPs ps;
      ps.task = fmt::format("ps:{}", s.role.index);
      auto used_cpu = cpu->find(s.pod);
      double cap = limit->count(s.pod) ? limit->at(s.pod) : 0;
      std::string basis = cpu_basis;
      if (cap <= 0 && request->count(s.pod)) {
        cap = request->at(s.pod);
        basis = "CPU used / CPU request (no limit)";
      }
      if (used_cpu != cpu->end() && cap > 0) {
        ps.busy_pct = 100 * used_cpu->second / cap;
        ps.basis = basis;
      }
      by_index[s.role.index] = ps;
    }
    for (auto& [idx, ps] : by_index) run.ps_busy.push_back(std::move(ps));
    out.runs.push_back(std::move(run));
  }
  return out;
}

}  // namespace tfdiag
