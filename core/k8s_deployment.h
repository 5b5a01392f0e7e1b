// K8sDeployment: what Kubernetes manifests and pod lists say about a TF job's tasks, as plain
// values (read by collectors/k8s, judged by the k8s analyzers). Every item remembers where it
// came from (file, document, field path) so that findings can point at the line to change.
//
// CPU is in millicores, exact ("1" -> 1000, "1500m" -> 1500, "0.5" -> 500); memory in bytes;
// -1 means "not set". Sources: Kubernetes resource model
// (https://kubernetes.io/docs/concepts/configuration/manage-resources-containers/), Kubeflow
// TFJob (kubeflow/training-operator pkg/apis/kubeflow.org/v1), Volcano batch Job, DLRover
// ElasticJob. Thread-safety: plain values.
#pragma once

#include <absl/strings/ascii.h>
#include <fmt/format.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tfdiag {

// Where a manifest item is: file as given, 0-based document index, dotted field path.
struct K8sSource {
  std::string file;
  int doc = 0;
  std::string path;  // "spec.tfReplicaSpecs.PS.template.spec.containers[0].resources"
  int line = 0;      // 1-based line of the item in the file (0: unknown), for SARIF and editors
  // "tf_job.yaml (doc 1): spec.tfReplicaSpecs.PS.template.spec.containers[0].resources"
  std::string Where() const {
    return path.empty() ? fmt::format("{} (doc {})", file, doc + 1)
                        : fmt::format("{} (doc {}): {}", file, doc + 1, path);
  }
  K8sSource At(const std::string& sub) const { return {file, doc, path + "." + sub}; }
};

struct K8sResources {
  int64_t cpu_request_m = -1, cpu_limit_m = -1;  // millicores
  int64_t mem_request = -1, mem_limit = -1;      // bytes
  int64_t gpu_limit = 0;                         // nvidia.com/gpu (count)
  std::string cpu_request_text, cpu_limit_text;  // as written ("1000m")
  // Effective request: Kubernetes defaults a missing request to the limit.
  int64_t CpuRequestM() const { return cpu_request_m >= 0 ? cpu_request_m : cpu_limit_m; }
  int64_t MemRequest() const { return mem_request >= 0 ? mem_request : mem_limit; }
};

struct K8sEnvVar {
  std::string name, value;
  std::string value_from;  // "resourceFieldRef:limits.cpu", "fieldRef:...", "" for a value
};

struct K8sContainer {
  std::string name;
  K8sResources res;
  std::vector<K8sEnvVar> env;
  std::vector<std::string> argv;             // command + args, as written
  std::map<std::string, std::string> flags;  // --name=value found in argv (also inside sh -c)
  K8sSource source;                          // ...containers[i]
  const K8sEnvVar* Env(const std::string& n) const {
    for (const K8sEnvVar& e : env)
      if (e.name == n) return &e;
    return nullptr;
  }
};

// Pod QoS class from containers, as the kubelet computes it (pkg/apis/core/v1/helper/qos):
// Guaranteed when every container has CPU and memory limits with requests equal to them.
inline std::string QosOf(const std::vector<K8sContainer>& cs) {
  bool any = false, guaranteed = !cs.empty();
  for (const K8sContainer& c : cs) {
    const K8sResources& r = c.res;
    any |= r.cpu_request_m >= 0 || r.cpu_limit_m >= 0 || r.mem_request >= 0 || r.mem_limit >= 0;
    if (r.cpu_limit_m < 0 || r.mem_limit < 0 || r.CpuRequestM() != r.cpu_limit_m ||
        r.MemRequest() != r.mem_limit)
      guaranteed = false;
  }
  return guaranteed ? "Guaranteed" : any ? "Burstable" : "BestEffort";
}

// One replica type of a job object (a TFJob replica spec, a Volcano task, a Deployment, ...).
struct K8sReplicaType {
  std::string object_kind, object_name;  // "TFJob", "dist-mnist"
  std::string name;                      // as written: "PS", "Worker", "ps", "" (Deployment)
  std::string role;                      // "ps", "worker", "chief", "master", "evaluator", ""
  std::string role_source;               // "replica type", "label", "name", "flags", "TF_CONFIG"
  int replicas = 1;                      // an int32 >= 0 (validated by the reader)
  bool replicas_given = false;
  bool has_template = false;  // false: a replica spec without a pod template (containers empty)
  std::vector<K8sContainer> containers;
  // podAntiAffinity with topologyKey kubernetes.io/hostname on the pod template.
  bool anti_affinity_hostname = false;
  bool anti_affinity_required = false;
  // The pod template sets hostNetwork: true or spec.hostname: a container's /etc/hostname (the
  // pod name a bundle records) is then the node's name or that hostname, not the pod's name.
  bool hostname_not_pod_name = false;
  // Rule ids the object opts out of: the annotation tfdiag.io/ignore: "rule-id[,rule-id]" on the
  // object's metadata or its pod template's (as kube-linter's ignore-check.kube-linter.io/<check>).
  std::vector<std::string> ignore;
  K8sSource source;    // the replica spec ("spec.tfReplicaSpecs.PS")
  K8sSource pod_spec;  // its pod template spec ("spec.tfReplicaSpecs.PS.template.spec")
  std::string Qos() const { return QosOf(containers); }
};

// How a replica type's controller names its pods, one table for mapping a profile's host names
// to tasks (collectors/xplane/host_tasks.cc) and for telling another job's manifest by its pods'
// names (analyzers/deployment_match.cc).
struct K8sPodNaming {
  // What the names start with; "" when unknown: TFJob v1alpha1 replicaSpecs lists and TfJob (pods
  // <job[:40]>-<type>-<id>-<index>-<random>, or a batch Job per replica), a replica type without
  // its object's or its own name.
  std::string prefix;
  // True: a name is <prefix><task index>. TFJob with tfReplicaSpecs and Volcano Job tasks
  // "<job>-<type, lower case>-" (kubeflow/common pkg/core/utils.go GenGeneralName; Volcano's
  // job controller MakePodName), DLRover ElasticJob "<job>-edljob-<type, lower case>-",
  // StatefulSet "<name>-". False: <prefix><random suffix> (Deployment, Job, ReplicaSet: "<name>-").
  bool indexed = false;
};
inline K8sPodNaming PodNamingOf(const K8sReplicaType& r) {
  if (r.object_name.empty()) return {};
  const std::string& k = r.object_kind;
  if ((k == "TFJob" && r.source.path.rfind("spec.tfReplicaSpecs", 0) == 0) || k == "Volcano Job") {
    if (r.name.empty()) return {};
    return {r.object_name + "-" + absl::AsciiStrToLower(r.name) + "-", true};
  }
  if (k == "ElasticJob") {
    if (r.name.empty()) return {};
    return {r.object_name + "-edljob-" + absl::AsciiStrToLower(r.name) + "-", true};
  }
  if (k == "StatefulSet") return {r.object_name + "-", true};
  if (k == "Deployment" || k == "Job" || k == "ReplicaSet") return {r.object_name + "-", false};
  return {};
}

// A pod from `kubectl get pods -o json|yaml` or the kubelet's /pods.
struct K8sPod {
  std::string name, namespace_, node, pod_ip, qos;  // qos: status.qosClass
  std::string hostname;       // spec.hostname ("" when not set: the pod's hostname is its name)
  bool host_network = false;  // spec.hostNetwork: its containers' hostname is the node's
  std::string role, role_source;
  int index = -1;
  std::map<std::string, std::string> labels;
  std::string owner_kind, owner_name;
  std::vector<K8sContainer> containers;
  std::vector<std::string> ignore;  // tfdiag.io/ignore annotation: rule ids
  K8sSource source;                 // "items[3]"
  // False for pods seen by kube-state-metrics (`analyze --prometheus`, source.file "prometheus",
  // collectors/prometheus/job_capture.cc): their containers carry resources but no env, command
  // or args, so what those would say is unknown, not absent.
  bool SpecKnown() const { return source.file != "prometheus"; }
};

// What one manifest or pod-list file held (the Import table and JSON inputs[]).
struct K8sFileSummary {
  std::string file;
  std::string format;     // "YAML" or "JSON"
  int documents = 0;      // YAML documents (a JSON file is one)
  int objects = 0;        // Kubernetes objects, List items counted one by one
  int replica_types = 0;  // replica types (TFJob replica specs, Volcano tasks, ...) with a TF role
  int pods = 0, tf_pods = 0;  // pods, and those with a TF role
  // Objects not read, e.g. "1 object skipped (not a TF job or pod): TFjob (did you mean
  // TFJob?)"; "" when every object was read.
  std::string skipped;
  // Container keys that are no Kubernetes container field, one note each (file, path, line).
  std::vector<std::string> unknown_keys;
  // Replica types and pods with a TF role: what the manifest rules can judge.
  bool HasTfObjects() const { return replica_types > 0 || tf_pods > 0; }
  // Why the file holds nothing the rules can judge ("" when HasTfObjects()): its skipped objects
  // and TF-less pods, the one wording of `analyze` and `fix` ("nothing to judge: FILE: WHY").
  std::string WhyNothingToJudge() const {
    if (HasTfObjects()) return "";
    std::string w = skipped;
    if (pods > 0) {
      w += fmt::format(
          "{}{} pod{}, none with a TF role (no replica-type label, --job_name flag, TF_CONFIG or "
          "role in the name)",
          w.empty() ? "" : "; ", pods, pods == 1 ? "" : "s");
    }
    return w.empty() ? "no TF job, replica type or pod" : w;
  }
};

struct K8sDeployment {
  std::vector<K8sReplicaType> replicas;
  std::vector<K8sPod> pods;
  std::vector<std::string> files;
  std::vector<K8sFileSummary> summaries;  // one per file, in the order read
  std::vector<std::string> notes;         // what was inferred or skipped, e.g. "role from flags"
  bool empty() const { return replicas.empty() && pods.empty(); }
  int Count(const std::string& role) const {
    int n = 0;
    for (const K8sReplicaType& r : replicas)
      if (r.role == role) n += r.replicas;
    return n;
  }
};

}  // namespace tfdiag
