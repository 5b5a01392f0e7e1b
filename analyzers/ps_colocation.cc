#include "analyzers/ps_colocation.h"

#include <map>
#include <set>

#include "analyzers/replay_ps_nodes.h"

namespace tfdiag {

namespace {

// A cluster bundle (analyze --prometheus --save) read without its pod list: the node of each
// PS process (kube_pod_info) stands for the pods' spec.nodeName.
std::vector<Finding> FromProcesses(const Capture& c, const Rule& rule, int max_per_node) {
  std::vector<Finding> out;
  std::map<std::string, std::vector<const ProcessRow*>> by_node;
  for (const ProcessRow& p : c.processes) {
    if (c.tasks[p.task].kind == JobKind::kPs && p.node != 0)
      by_node[std::string(c.Str(p.node))].push_back(&p);
  }
  for (const auto& [node, procs] : by_node) {
    if (static_cast<int>(procs.size()) <= max_per_node) continue;
    Finding f = MakeFinding(rule, "node", node);
    f.task = "ps";
    std::string names;
    for (const ProcessRow* p : procs) {
      const std::string pod(p->pod != 0 ? c.Str(p->pod) : c.TaskLabelOf(p->task));
      names += (names.empty() ? "" : ", ") + pod;
      f.ops.push_back(pod);
    }
    // Processes on a bare host (no pod: the agents' or attach's tasks outside Kubernetes): no
    // podAntiAffinity to add; the PS must be started on other hosts.
    bool bare = true;
    for (const ProcessRow* p : procs) bare = bare && c.Str(p->pod).empty();
    if (bare) {
      std::set<std::string> others;
      for (const ProcessRow& p : c.processes) {
        const std::string n(c.Str(p.node));
        if (!n.empty() && n != node) others.insert(n);
      }
      std::string hosts;
      for (const std::string& h : others) hosts += (hosts.empty() ? "" : ", ") + h;
      f.summary = fmt::format("{} PS processes on host {} ({}) share its NIC and CPUs",
                              procs.size(), node, names);
      f.fix = fmt::format(
          "Spread the PS over hosts: keep at most {} PS process{} on {} and start the others on "
          "other hosts ({}), then list their new addresses in every task's cluster spec "
          "(TF_CONFIG's \"ps\" list or --ps_hosts). These are processes on a bare host, not "
          "pods: there is no podAntiAffinity to add.",
          max_per_node, max_per_node == 1 ? "" : "es", node,
          hosts.empty() ? "no other host ran a task of this job in the window" : hosts);
    } else {
      f.summary = fmt::format("{} PS pods on node {} ({}) share its NIC and CPUs", procs.size(),
                              node, names);
    }
    // Outside Kubernetes they are processes on a host, not pods (issue 48).
    f.evidence = {
        {bare ? "PS processes on the host" : "PS pods on the node", double(procs.size()), "count"},
        {bare ? "allowed per host" : "allowed per node", double(max_per_node), "count"}};
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace

std::vector<Finding> RunPsColocation(const AnalysisInput& in, const Rule& rule) {
  std::vector<Finding> out;
  const int min_ps = static_cast<int>(rule.Param("min_ps", 2));
  const int max_per_node = static_cast<int>(rule.Param("max_ps_per_node", 1));
  if (in.k8s == nullptr || in.k8s->pods.empty()) {
    out = FromProcesses(in.capture, rule, max_per_node);
    if (in.k8s == nullptr) return out;
  }
  // Pods: PS pods per node (spec.nodeName).
  std::map<std::string, std::vector<const K8sPod*>> by_node;
  for (const K8sPod& p : in.k8s->pods) {
    if (p.role == "ps" && !p.node.empty()) by_node[p.node].push_back(&p);
  }
  for (const auto& [node, pods] : by_node) {
    if (static_cast<int>(pods.size()) <= max_per_node) continue;
    Finding f = MakeFinding(rule, "node", node);
    f.task = "ps";
    std::string names;
    for (const K8sPod* p : pods) {
      names += (names.empty() ? "" : ", ") + p->name;
      f.ops.push_back(p->source.Where());
    }
    f.summary =
        fmt::format("{} PS pods on node {} ({}) share its NIC and CPUs", pods.size(), node, names);
    f.evidence = {{"PS pods on the node", double(pods.size()), "count"},
                  {"allowed per node", double(max_per_node), "count"}};
    out.push_back(std::move(f));
  }
  // Manifests: a PS replica type of several pods without hostname anti-affinity; and PS
  // workloads of one replica each (a hand-written cluster: a Deployment per PS) that together
  // make several PS pods, none with anti-affinity (issue 14).
  auto workload = [](const K8sReplicaType& r) {
    return r.object_kind == "Deployment" || r.object_kind == "StatefulSet" ||
           r.object_kind == "ReplicaSet" || r.object_kind == "Job";
  };
  int loose_ps = 0, loose_objects = 0;
  for (const K8sReplicaType& r : in.k8s->replicas) {
    if (r.role == "ps" && workload(r) && !r.anti_affinity_hostname && r.replicas < min_ps) {
      loose_ps += r.replicas;
      ++loose_objects;
    }
  }
  for (const K8sReplicaType& r : in.k8s->replicas) {
    if (r.role != "ps" || r.anti_affinity_hostname || !r.has_template) continue;
    const bool alone = r.replicas >= min_ps;
    const bool together = workload(r) && loose_objects > 1 && loose_ps >= min_ps;
    if (!alone && !together) continue;
    Finding f = MakeFinding(rule, "manifest", r.pod_spec.path + ".affinity");
    f.subject = r.pod_spec.Where() + ".affinity";
    f.task = "ps";
    if (alone) {
      f.summary = fmt::format(
          "{} '{}': {} PS replicas and no podAntiAffinity with topologyKey "
          "kubernetes.io/hostname: the scheduler may pack several PS on one node",
          r.object_kind, r.object_name, r.replicas);
      f.evidence = {{"PS replicas", double(r.replicas), "count"}};
    } else {
      f.summary = fmt::format(
          "{} '{}' is one of {} PS workloads ({} PS pods in all) without podAntiAffinity with "
          "topologyKey kubernetes.io/hostname: the scheduler may pack several PS on one node",
          r.object_kind, r.object_name, loose_objects, loose_ps);
      f.evidence = {{"PS replicas", double(r.replicas), "count"},
                    {"PS pods of such workloads", double(loose_ps), "count"}};
    }
    out.push_back(std::move(f));
  }
  return out;
}

FixPlan PsColocationFix(const AnalysisInput&, const ReplayModel& m, const Finding&, const Rule&) {
  FixPlan plan;
  if (!PsPacked(m.ps_node)) {
    plan.why = m.ps_node.empty()
                   ? "the node of every PS task is not known (a pod list with each PS pod's "
                     "spec.nodeName beside the profile, or a cluster bundle, tells it)"
                   : "no two PS of the capture share a node";
    return plan;
  }
  int packed = 0, packed_nodes = 0;
  for (const auto& [node, count] : PsPerNode(m.ps_node)) {
    if (count > 1) packed += count, ++packed_nodes;
  }
  plan.fix.spread_ps = true;
  plan.what = fmt::format(
      "every PS on a node of its own (podAntiAffinity on kubernetes.io/hostname, as the fix text "
      "says): the {} PS now sharing {} node(s)' NICs each get a NIC of their own, their "
      "variables where they are",
      packed, packed_nodes);
  return plan;
}

}  // namespace tfdiag
