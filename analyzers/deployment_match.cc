#include "analyzers/deployment_match.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <string_view>

#include "core/plural.h"
#include "core/tf_roles.h"

namespace tfdiag {

namespace {

// "ps:0, ps:1, worker:3" with at most `most` names, then ", ... (N in all)"; `sep` in place of
// ", " (items that hold commas are joined with "; ").
std::string Names(const std::vector<std::string>& names, size_t most = 6,
                  std::string_view sep = ", ") {
  std::string s;
  for (size_t i = 0; i < names.size() && i < most; ++i) {
    if (i > 0) s += sep;
    s += names[i];
  }
  if (names.size() > most) s += fmt::format("{}... ({} in all)", sep, names.size());
  return s;
}

// Whether the pods of replica type `r` can be told by name: its naming is known (PodNamingOf)
// and a container's /etc/hostname is its pod's name (no hostNetwork, no spec.hostname).
bool NamesTell(const K8sReplicaType& r) {
  return !r.hostname_not_pod_name && !PodNamingOf(r).prefix.empty();
}

// The pod name replica type `r` gives task index `index`: exact, or "<prefix>*".
std::string ExpectedPodName(const K8sReplicaType& r, int index) {
  const K8sPodNaming n = PodNamingOf(r);
  return n.indexed ? n.prefix + std::to_string(index) : n.prefix + "*";
}

// True when pod `pod` of task `role`:`index` can be one that replica type `r` made; NamesTell(r).
bool PodOfReplicaType(const K8sReplicaType& r, const std::string& role, int index,
                      const std::string& pod) {
  if (r.role != role && !(IsWorkerLikeRole(r.role) && IsWorkerLikeRole(role))) return false;
  const K8sPodNaming n = PodNamingOf(r);
  return n.indexed ? pod == n.prefix + std::to_string(index) : pod.rfind(n.prefix, 0) == 0;
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
    if (IsWorkerLikeRole(r.role)) declared[r.source.file].second += r.replicas;
  }
  // The pods the recorded tasks ran in (a bundle's /etc/hostname, a Prometheus job's pods), by
  // task: (role, index, pod name).
  struct RecordedPod {
    std::string role;
    int index;
    std::string pod, label;
  };
  std::vector<RecordedPod> recorded;  // one per task (a task's first process with a pod)
  std::set<std::string> with_pod;
  for (const ProcessRow& p : c.processes) {
    if (p.pod == 0 || p.task >= c.tasks.size()) continue;
    const TaskRow& t = c.tasks[p.task];
    const std::string label(c.Str(t.label));
    if (!profiled.count(label) || !with_pod.insert(label).second) continue;
    recorded.push_back({std::string(c.Str(t.job)), t.index, std::string(c.Str(p.pod)), label});
  }
  std::map<std::string, std::vector<const K8sReplicaType*>> types_by_file;
  for (const K8sReplicaType& r : k8s->replicas) {
    if (r.role == "ps" || IsWorkerLikeRole(r.role)) types_by_file[r.source.file].push_back(&r);
  }
  for (const auto& [file, counts] : declared) {
    if (counts.first == ps && counts.second == workers) {
      // Same shape: another job of the same shape is told by its pods' names, where the tasks'
      // pods are known and the file's objects name their pods in a way tfdiag knows. Warned when
      // no recorded pod is one the file's objects would make.
      const std::vector<const K8sReplicaType*>& types = types_by_file[file];
      const auto tell = [](const K8sReplicaType* r) { return NamesTell(*r); };
      if (recorded.empty() || types.empty() || !std::all_of(types.begin(), types.end(), tell)) {
        continue;
      }
      bool any = false;
      for (const K8sReplicaType* r : types) {
        for (const RecordedPod& rp : recorded) {
          any = any || PodOfReplicaType(*r, rp.role, rp.index, rp.pod);
        }
      }
      if (any) continue;
      std::vector<std::string> objects, pods;
      for (const K8sReplicaType* r : types) {
        const std::string o = r->object_kind + " " + r->object_name;
        if (std::find(objects.begin(), objects.end(), o) == objects.end()) objects.push_back(o);
      }
      for (const RecordedPod& rp : recorded) {
        std::string want;
        for (const K8sReplicaType* r : types) {
          if (r->role == rp.role) want = ExpectedPodName(*r, rp.index);
        }
        pods.push_back(want.empty() ? fmt::format("{} ran in {}", rp.label, rp.pod)
                                    : fmt::format("{} ran in {}, not {}", rp.label, rp.pod, want));
      }
      out.push_back(fmt::format(
          "{} declares {} (as many PS and workers as {}), but none of its pods is one the {} "
          "tasks ran in ({}): is it this job's manifest? Its findings are about what it declares, "
          "not about the job {}",
          file, Names(objects, 3), source, seen, Names(pods, 4, "; "), seen));
      continue;
    }
    out.push_back(fmt::format(
        "{} declares {} and {}; {} {} and {} ({}): is it this job's manifest? Its findings are "
        "about what it declares, not about the job {}",
        file, Count(counts.first, "PS"), Count(counts.second, "worker"), source, Count(ps, "PS"),
        Count(workers, "worker"),
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
    if (no_pod.empty() && no_task.empty()) {
      // The same tasks: the same pods? Where a task's pod is known, one of the list's pods for
      // it (a list may keep a Failed or Evicted one beside it) must be the one it ran in: by
      // name, spec.hostname, or for a hostNetwork pod its node's name.
      std::vector<std::string> differ;
      for (const RecordedPod& rp : recorded) {
        std::vector<std::string> listed;
        bool same = false;
        for (const K8sPod& p : k8s->pods) {
          if (p.source.file != file || p.role != rp.role || p.index != rp.index) continue;
          listed.push_back(p.name);
          same = same || p.name == rp.pod || (!p.hostname.empty() && p.hostname == rp.pod) ||
                 (p.host_network && !p.node.empty() && p.node == rp.pod);
        }
        if (!same && !listed.empty()) {
          differ.push_back(
              fmt::format("{} ran in {}, listed as {}", rp.label, rp.pod, Names(listed, 2)));
        }
      }
      if (!differ.empty()) {
        out.push_back(fmt::format(
            "{}: its pods are not the ones the {} tasks ran in ({}): is it this job's pod list?",
            file, seen, Names(differ, 3, "; ")));
      }
      continue;
    }
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
