#include "analyzers/deployment_match.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

namespace tfdiag {

namespace {

bool IsWorkerRole(const std::string& role) {
  return role == "worker" || role == "chief" || role == "master";
}

std::string Plural(int n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

// "ps:0, ps:1, worker:3" with at most `most` names, then ", ... (N in all)".
std::string Names(const std::vector<std::string>& names, size_t most = 6) {
  std::string s;
  for (size_t i = 0; i < names.size() && i < most; ++i) s += (i ? ", " : "") + names[i];
  if (names.size() > most) s += fmt::format(", ... ({} in all)", names.size());
  return s;
}

}  // namespace

std::vector<std::string> DeploymentMatchNotes(const Capture& c, const K8sDeployment* k8s) {
  std::vector<std::string> out;
  if (k8s == nullptr || k8s->empty()) return out;
  // The tasks the profile or bundle holds (role "ps" or "worker", with the label "ps:3").
  std::set<std::string> profiled;
  int ps = 0, workers = 0;
  for (const TaskRow& t : c.tasks) {
    if (t.kind == JobKind::kPs) {
      ++ps;
    } else if (t.kind == JobKind::kWorker || t.kind == JobKind::kChief ||
               t.kind == JobKind::kMaster) {
      ++workers;
    } else {
      continue;
    }
    profiled.insert(std::string(c.Str(t.label)));
  }
  if (ps + workers == 0) return out;
  // What the tasks came from: a profile or timeline, a job read from Prometheus, a bundle.
  const bool from_prometheus = c.ops.empty() && c.meta.probes == "prometheus";
  const char* source = !c.ops.empty()    ? "the profiled inputs hold"
                       : from_prometheus ? "the job read from Prometheus holds"
                                         : "the recorded bundle holds";
  const char* seen = !c.ops.empty() ? "profiled" : from_prometheus ? "seen" : "recorded";

  // Manifests: the declared counts per file, against the profiled ones.
  std::map<std::string, std::pair<int, int>> declared;  // file -> (PS, workers)
  for (const K8sReplicaType& r : k8s->replicas) {
    if (r.role == "ps") declared[r.source.file].first += r.replicas;
    if (IsWorkerRole(r.role)) declared[r.source.file].second += r.replicas;
  }
  for (const auto& [file, counts] : declared) {
    if (counts.first == ps && counts.second == workers) continue;
    out.push_back(fmt::format(
        "{} declares {} and {}; {} {} and {} ({}): is it this job's manifest? Its findings are "
        "about what it declares, not about the job {}",
        file, Plural(counts.first, "PS", "PS"), Plural(counts.second, "worker", "workers"), source,
        Plural(ps, "PS", "PS"), Plural(workers, "worker", "workers"),
        Names(std::vector<std::string>(profiled.begin(), profiled.end()), 4), seen));
  }

  // Pod lists: role:index of each TF pod, against the profiled tasks.
  std::map<std::string, std::set<std::string>> pods_by_file;  // file -> "ps:0", ...
  for (const K8sPod& p : k8s->pods) {
    if (p.role.empty() || p.index < 0 || p.source.file == "prometheus") continue;
    pods_by_file[p.source.file].insert(fmt::format("{}:{}", p.role, p.index));
  }
  for (const auto& [file, pods] : pods_by_file) {
    std::vector<std::string> no_pod, no_task;
    for (const std::string& t : profiled) {
      if (!pods.count(t)) no_pod.push_back(t);
    }
    for (const std::string& p : pods) {
      if (!profiled.count(p)) no_task.push_back(p);
    }
    if (no_pod.empty() && no_task.empty()) continue;
    auto natural = [](std::vector<std::string>* v) {
      std::sort(v->begin(), v->end(), [](const std::string& a, const std::string& b) {
        const size_t ca = a.find(':'), cb = b.find(':');
        if (a.substr(0, ca) != b.substr(0, cb)) return a.substr(0, ca) < b.substr(0, cb);
        return std::atoi(a.c_str() + ca + 1) < std::atoi(b.c_str() + cb + 1);
      });
    };
    natural(&no_pod);
    natural(&no_task);
    std::string s = fmt::format("{}: its {} TF pods are not the {} {} tasks", file, pods.size(),
                                profiled.size(), seen);
    if (!no_pod.empty()) s += fmt::format("; {} tasks without a pod: {}", seen, Names(no_pod));
    if (!no_task.empty()) s += fmt::format("; pods without a {} task: {}", seen, Names(no_task));
    s += ": is it this job's pod list?";
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace tfdiag
