// `tfdiag fix`: a manifest with the deployment advice applied, as YAML or as JSON merge patches.
//
// Only what a finding raised is changed (FixOptions::raised), per replica type found by the k8s
// reader:
//   - cpu-qos: requests = limits for cpu and memory, cpu rounded up to whole cores (a quoted
//     string, "4"), so the pod is Guaranteed and eligible for exclusive cores. A CPU limit is
//     never lowered; a container without one gets --cpus (at least its request) or a note;
//   - thread-config: env TF_NUM_INTRAOP_THREADS and OMP_NUM_THREADS = the CPU limit in cores,
//     TF_NUM_INTEROP_THREADS = the same but at least 2 (one inter-op thread can deadlock TF1
//     queue runners); nothing without a CPU limit;
//   - ps-on-gpu: no nvidia.com/gpu on PS containers;
//   - ps-colocation: template labels tfdiag.io/role=ps, tfdiag.io/job=<object name> and a
//     required podAntiAffinity term on them with topologyKey kubernetes.io/hostname.
// The changes are edited into the text where they are (actions/yaml_edit.h): comments,
// key order, quoting, indentation, flow/block style and document markers stay, and `diff` shows
// only the fix; a GPU key removed from a PS leaves no empty `limits: {}` behind. The edited text is
// parsed again and must give the fixed documents; when it does not (or a change has no place,
// e.g. inside an alias) the documents are written anew (libyaml: comments after the leading block
// dropped, aliases expanded, JSON as YAML) with a note saying so.
// When nothing changes the input text is returned as it is (FixResult::changed false).
// Time and memory are linear in the input (one document held at a time, see yaml_tree.h).
// Thread-safety: pure functions.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/k8s_deployment.h"
#include "core/status.h"

namespace tfdiag {

struct YamlNode;  // collectors/k8s/yaml_tree.h

struct FixOptions {
  // CPU limit (cores) for containers without one; never below their request (0: note instead).
  int default_cpus = 0;
  // The same per TF role ("ps", "worker", "chief", "master", "evaluator": K8sReplicaType::role),
  // from `fix --cpus ps=1,worker=4`; a role listed here takes its own figure, the others
  // default_cpus (0: a note, no limit added).
  std::map<std::string, int> role_cpus;
  std::string default_memory;  // memory for containers with neither request nor limit ("": skip)
  // Findings to fix, each "<rule id> <subject>" (Finding::rule_id, Finding::subject: e.g.
  // "cpu-qos job.yaml (doc 1): spec...containers[0].resources"); nullptr: everything the
  // manifest rules could raise.
  const std::set<std::string>* raised = nullptr;
};

// Parses `fix --cpus`: "4" (every role: default_cpus) or "ps=1,worker=4" (role_cpus), the two
// mixed ("ps=1,4": PS 1, every other role 4). Roles: ps, worker, chief, master, evaluator. Cores
// are whole numbers 1..1024. Errors: kUsage naming the part that is not one of these.
Status ParseCpusFlag(std::string_view flag, FixOptions* options);

struct FixResult {
  std::string yaml;                        // every document, fixed (the input when !changed)
  bool changed = false;                    // false: nothing to fix, `yaml` is the input
  int tf_replicas = 0;                     // replica types with a TF role found
  std::vector<std::string> patches;        // one JSON merge patch (RFC 7386) per changed object
  std::vector<std::string> patch_targets;  // "tfjob/dist-mnist" for each patch (kubectl patch)
  std::vector<std::string> changes;        // "<where>: requests.cpu 500m -> 1"
  std::vector<std::string> notes;          // what could not be fixed, and what is not kept
  // Findings left open for want of a choice only the user can make: flag ("--cpus N",
  // "--memory Q") -> the rules whose fix needs it and how many containers.
  std::map<std::string, std::map<std::string, int>> needs;
  // Request increases per job object ("TFJob 'mnist' (doc 1): memory requests 78 GiB -> 192 GiB
  // ..."): requests = limits may no longer fit the nodes or the namespace's quota.
  std::vector<std::string> warnings;
};

// Errors: as ParseK8sText (malformed YAML with line and column, bad fields with their path, no
// Kubernetes objects).
StatusOr<FixResult> FixManifest(std::string_view text, const std::string& file,
                                const FixOptions& options);
// As FixManifest, on a manifest the caller already parsed with ParseK8sText(text, file, &model,
// &docs) (tfdiag fix judges and fixes from that one parse: each parse of a large manifest costs
// about what `analyze` does in all). `docs` are the trees the fixes are made in (consumed).
// Errors: none from parsing; kInvalidInput when the documents cannot be written anew.
StatusOr<FixResult> FixParsedManifest(std::string_view text, const std::string& file,
                                      const K8sDeployment& model,
                                      std::vector<std::unique_ptr<YamlNode>> docs,
                                      const FixOptions& options);

}  // namespace tfdiag
