// The inputs of `analyze`, `scaling` and `view` split by content: Kubernetes manifests and pod
// lists (read into one K8sDeployment, which maps profiled hosts to tasks and feeds the k8s rules)
// and everything else (timelines, bundles, profiles, log directories), left for LoadInputs.
// Thread-safety: reentrant.
#pragma once

#include <string>
#include <vector>

#include "core/k8s_deployment.h"
#include "core/status.h"

namespace tfdiag {

struct SplitInputs {
  std::vector<std::string> traces;  // paths for LoadInputs, in the order given
  std::vector<std::string> names;   // their names as the user gave them (parallel to traces)
  K8sDeployment k8s;                // the Kubernetes files' objects, in the order given
  bool have_k8s = false;            // at least one Kubernetes file was read
};

// A path is a Kubernetes file when it is not a directory, not a tfdiag bundle, and IsK8sFile
// (collectors/k8s/k8s_reader.h) says so. A directory that is no TensorBoard log directory (no
// `plugins` folder, profile or event file under it) and holds files that look like Kubernetes
// objects (LooksLikeK8s; at most 8 levels and 20000 entries deep, symbolic links not followed,
// dot files skipped) is a manifest directory: those files are read (named "<dir>/<file>"), its
// JSON and gzip files are traces one by one, the rest skipped with a note; any other directory
// is left for LoadInputs. `names`: the paths as the user gave them, for errors
// and sources (empty: the paths). Errors: ReadK8sFile's, naming the file.
StatusOr<SplitInputs> SplitK8sInputs(const std::vector<std::string>& paths,
                                     const std::vector<std::string>& names = {});

}  // namespace tfdiag
