// What an error says when --job matches nothing, and the window and step checks of the cluster
// commands (issue 36 item 5): the training jobs kube-state-metrics holds, the jobs the tfdiag
// agents report with their PS, windows in RFC 3339, the smallest step a window allows.
#include <fmt/format.h>

#include <cmath>
#include <ctime>
#include <map>
#include <set>

#include "collectors/prometheus/job_reader.h"
#include "collectors/prometheus/job_steps.h"
#include "core/escape.h"

namespace tfdiag {

namespace {

constexpr size_t kMaxListed = 20;

// The first point of an instant query's series, NaN when none.
double First(const PromSeries& s) { return s.points.empty() ? std::nan("") : s.points[0].second; }

}  // namespace

std::string FormatPromTime(double unix_s) {
  const time_t s = static_cast<time_t>(unix_s);
  tm g{};
  gmtime_r(&s, &g);
  char buf[40];
  strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &g);
  return buf;
}

Status CheckPromStep(double start_s, double end_s, double step_s, const std::string& given) {
  const double window = end_s - start_s;
  if (!(step_s > 0) || window / step_s <= kMaxPointsPerSeries) return OkStatus();
  const double min_step = window / kMaxPointsPerSeries;
  const std::string smallest = min_step < 1 ? fmt::format("{:.0f}ms", std::ceil(min_step * 1000))
                                            : fmt::format("{:.0f}s", std::ceil(min_step));
  return UsageError(
      "--step {}: the window {} to {} ({}) at that step is {:.0f} points per series, more than "
      "the {:.0f} Prometheus allows; the smallest step for this window is {}",
      Printable(given), FormatPromTime(start_s), FormatPromTime(end_s), prom::Dur(window),
      std::ceil(window / step_s), kMaxPointsPerSeries, smallest);
}

StatusOr<std::string> TfJobsText(PromClient* client, double start_s, double end_s) {
  StatusOr<std::vector<PromSeries>> r = client->Query(
      "count by (namespace, created_by_kind, created_by_name) (max by (namespace, pod, "
      "created_by_kind, created_by_name) (max_over_time(kube_pod_info{created_by_kind=~\""
      "TFJob|PyTorchJob|MPIJob|XGBoostJob|PaddleJob|MXJob|JAXJob\"}[" +
          prom::Dur(end_s - start_s) + "])))",
      end_s);
  if (!r.ok()) return r.status();
  // (namespace, kind, name) -> pods
  std::map<std::tuple<std::string, std::string, std::string>, double> jobs;
  for (const PromSeries& s : *r) {
    const double n = First(s);
    if (std::isfinite(n)) {
      jobs[{s.Label("namespace"), s.Label("created_by_kind"), s.Label("created_by_name")}] = n;
    }
  }
  if (jobs.empty()) return std::string();
  std::string out =
      "\n  training jobs kube-state-metrics holds in the window (kube_pod_info's owner):";
  size_t n = 0;
  for (const auto& [key, pods] : jobs) {
    if (n++ == kMaxListed) {
      out += fmt::format("\n    and {} more", jobs.size() - kMaxListed);
      break;
    }
    const auto& [ns, kind, name] = key;
    out += fmt::format("\n    - {} ({}, namespace {}, {:.0f} pod{})", Printable(name),
                       Printable(kind), Printable(ns), pods, pods == 1 ? "" : "s");
  }
  return out;
}

StatusOr<std::string> AgentJobsText(PromClient* client, const std::string& namespace_,
                                    double start_s, double end_s) {
  const std::string ns_sel =
      namespace_.empty() ? "" : "namespace=\"" + PromQuote(namespace_) + "\"";
  const std::string W = prom::Dur(end_s - start_s);
  // One series per task (a task seen by two agents, or restarted, counts once), then per job.
  StatusOr<std::vector<PromSeries>> r = client->Query(
      "count by (tf_job) (max by (tf_job, namespace, pod, replica_type, replica_index) "
      "(max_over_time(tfdiag_task_up{" +
          ns_sel + "}[" + W + "])))",
      end_s);
  if (!r.ok()) return r.status();
  std::map<std::string, double> jobs;
  for (const PromSeries& s : *r) {
    if (std::isfinite(First(s))) jobs[s.Label("tf_job")] = First(s);
  }
  if (jobs.empty()) return std::string("\n  no tfdiag agent reported a job in the window");
  // Each job's PS: the node its agent runs on, and the address the job's tasks reach it at
  // (the agents' eBPF traffic series name the peer; without eBPF the address is unknown).
  const std::string ps_sel = ns_sel + (ns_sel.empty() ? "" : ",") + "replica_type=\"ps\"";
  StatusOr<std::vector<PromSeries>> ps =
      client->Query("max by (tf_job, replica_index, node) (max_over_time(tfdiag_task_up{" + ps_sel +
                        "}[" + W + "]))",
                    end_s);
  if (!ps.ok()) return ps.status();
  const std::string peer_sel =
      ns_sel + (ns_sel.empty() ? "" : ",") + "peer_task=~\"ps:[0-9]{1,6}\"";
  StatusOr<std::vector<PromSeries>> peers =
      client->Query("max by (tf_job, peer_task, peer) (max_over_time(tfdiag_traffic_bytes_total{" +
                        peer_sel + "}[" + W + "]))",
                    end_s);
  if (!peers.ok()) return peers.status();
  // job -> PS task -> (addresses, nodes); a PS is listed when either series names it.
  using Where = std::pair<std::set<std::string>, std::set<std::string>>;
  std::map<std::string, std::map<std::pair<int, std::string>, Where>> ps_of;
  for (const PromSeries& s : *peers) {
    int index = 0;
    const std::string t = s.Label("peer_task");
    if (t.rfind("ps:", 0) != 0 || !ParseTaskIndex(t.substr(3), &index)) continue;
    ps_of[s.Label("tf_job")][{index, t}].first.insert(s.Label("peer"));
  }
  for (const PromSeries& s : *ps) {
    int index = 0;
    if (!ParseTaskIndex(s.Label("replica_index"), &index)) continue;
    const std::string node = s.Label("node");
    Where& w = ps_of[s.Label("tf_job")][{index, fmt::format("ps:{}", index)}];
    if (!node.empty()) w.second.insert(node);
  }
  std::string out = fmt::format("\n  jobs the tfdiag agents report (tfdiag_task_up's tf_job{}):",
                                namespace_.empty() ? "" : ", namespace " + Printable(namespace_));
  size_t n = 0;
  for (const auto& [name, tasks] : jobs) {
    if (n++ == kMaxListed) {
      out += fmt::format("\n    and {} more", jobs.size() - kMaxListed);
      break;
    }
    std::string ps_text;
    size_t listed = 0;
    for (const auto& [task, where] : ps_of[name]) {
      if (listed++ == 8) {
        ps_text += ", ...";
        break;
      }
      ps_text += (ps_text.empty() ? "; PS " : ", ") + task.second;
      for (const std::string& a : where.first) ps_text += " " + Printable(a);
      for (const std::string& node : where.second) ps_text += " on " + Printable(node);
    }
    out += fmt::format("\n    - {} ({:.0f} task{}{})",
                       name.empty() ? "(no tf_job label)" : Printable(name), tasks,
                       tasks == 1 ? "" : "s", ps_text);
  }
  return out;
}

}  // namespace tfdiag
