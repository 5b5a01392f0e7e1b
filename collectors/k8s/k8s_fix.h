// `tfdiag fix`: a manifest with the deployment advice applied, as YAML or as JSON merge patches.
//
// For each PS/worker/chief/master/evaluator replica type found by the k8s reader:
//   - requests = limits for cpu and memory, cpu rounded up to whole cores (as a quoted string,
//     "4"), so the pod is Guaranteed and eligible for exclusive cores (cpu-qos);
//   - env TF_NUM_INTRAOP_THREADS, TF_NUM_INTEROP_THREADS, OMP_NUM_THREADS = that CPU count
//     (thread-config);
//   - PS only: no nvidia.com/gpu (ps-on-gpu); template labels tfdiag.io/role=ps,
//   tfdiag.io/job=<object name>, and a required
//     podAntiAffinity term on them with topologyKey kubernetes.io/hostname (ps-colocation).
// Unrelated fields, key order, quoting (quoted stays quoted, plain stays plain), flow/block style
// and literal blocks are kept; yaml-cpp drops comments, so only the file's leading comment block
// is carried over, and anchors/aliases are expanded. JSON input comes out as YAML.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace tfdiag {

struct FixOptions {
  int default_cpus = 0;        // CPUs for containers with neither CPU request nor limit (0: skip)
  std::string default_memory;  // memory for containers with neither request nor limit ("": skip)
};

struct FixResult {
  std::string yaml;                        // every document, fixed
  std::vector<std::string> patches;        // one JSON merge patch (RFC 7386) per changed object
  std::vector<std::string> patch_targets;  // "tfjob/dist-mnist" for each patch (kubectl patch)
  std::vector<std::string> changes;        // "<where>: requests.cpu 500m -> 1"
  std::vector<std::string> notes;          // what could not be fixed, and what yaml-cpp cannot keep
};

// Errors: as ParseK8sText (malformed YAML with line and column, no Kubernetes objects).
StatusOr<FixResult> FixManifest(std::string_view text, const std::string& file,
                                const FixOptions& options);

}  // namespace tfdiag
