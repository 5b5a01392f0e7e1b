// Reading Kubernetes manifests and pod lists into a K8sDeployment (core/k8s_deployment.h).
//
// Accepted, YAML or JSON, one or many documents per file (libyaml, collectors/k8s/yaml_tree.h,
// with its bounds on aliases and nesting):
//   - Kubeflow TFJob kubeflow.org/v1 (spec.tfReplicaSpecs.<Type>) and v1alpha1
//     (spec.replicaSpecs[i].tfReplicaType);
//   - Job, Deployment, StatefulSet (spec.template; role from labels, name, --job_name flags or
//     TF_CONFIG), Volcano batch.volcano.sh Job (spec.tasks[i]), DLRover ElasticJob
//     (spec.replicaSpecs.<type>);
//   - Pod, PodList, List (kubectl get pods -o json|yaml; the kubelet's /pods);
//   - TfJob tensorflow.org/v1alpha1 (tensorflow/k8s, 2017), read as TFJob v1alpha1;
//   - Katib Experiment kubeflow.org/v1beta1: its spec.trialTemplate.trialSpec (the TFJob or Job
//     every trial runs), named after the Experiment when it has no name, with a note.
// Validated as the API server does: quantities (collectors/k8s/quantity.h), replicas (int32 >= 0,
// a number not a string); a replica spec without a pod template is a note (the old operator's
// default PS), not an error.
// Other kinds are skipped with a note. Roles inferred from anything but a replica type say so
// in K8sReplicaType::role_source and in a note.
// Thread-safety: pure functions.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "collectors/k8s/quantity.h"
#include "core/k8s_deployment.h"
#include "core/status.h"

namespace tfdiag {

struct YamlNode;  // collectors/k8s/yaml_tree.h

// True when `head` (the first KiB of a file) looks like a Kubernetes object (a line starting
// with apiVersion:/kind:, or a JSON "apiVersion" key) and not like a TF timeline.
bool LooksLikeK8s(std::string_view head);
// LooksLikeK8s or LooksLikeHelmTemplate on the file's first 16 KiB, or a .yaml/.yml/.tpl name
// (so malformed YAML and Helm templates are reported by the k8s reader with its line and column
// and the Helm hint).
bool IsK8sFile(const std::string& path);

// True when `head` (a file's first 16 KiB) holds Helm template directives: a line starting with
// `{{` (`{{- define ...}}`, `{{ include ...}}`), or `key: {{ ... }}` / `- {{ ... }}` outside JSON.
// Such a file goes to the manifest reader, whose errors end with the hint to run `helm template`.
bool LooksLikeHelmTemplate(std::string_view head);
// True for a field name of a Kubernetes container (core/v1 Container: name, image, resources,
// env, ...); the reader notes any other key with its line and the nearest field.
bool IsContainerField(std::string_view key);

// True when `head` (a file's first KiB) is kubectl's table output (`kubectl get pods`): a first
// line of upper-case column names starting with NAME (NAME READY STATUS RESTARTS AGE, or
// NAMESPACE NAME ...), not a manifest or a trace. Such a file is refused with the hint to save
// it with `-o json` or `-o yaml`.
bool LooksLikeKubectlTable(std::string_view head);

// Parses `text` (named `file` in sources and errors) and appends to `out` (and one
// K8sFileSummary to out->summaries). Time and memory are linear in the text; one document is held
// at a time, unless `docs` is given: then each document's tree (nullptr for an empty one) is
// moved there once read, in order (tfdiag fix edits the trees its model was read from instead of
// parsing the text again).
// Errors: kInvalidInput "<file>: line L, column C: <yaml error>" (1-based) for malformed YAML
// and for the bounds of yaml_tree.h;
// "<file> (doc N): <path>: <what>" for a field of the wrong shape; a file with no Kubernetes
// object at all ("<file>: no Kubernetes objects (apiVersion/kind)").
Status ParseK8sText(std::string_view text, const std::string& file, K8sDeployment* out,
                    std::vector<std::unique_ptr<YamlNode>>* docs = nullptr);
// Reads and parses a file, named `name` in sources and errors (default: `path`; for a copy of a
// pipe, the name the user gave). Errors: kIo when it cannot be read, else as ParseK8sText.
Status ReadK8sFile(const std::string& path, K8sDeployment* out, const std::string& name = "");
// The text of a manifest or pod list at `path` (named `shown` in errors), bounded: kInvalidInput
// "<shown>: N bytes; the limit for a manifest or pod list is 256 MiB" from the file's size before
// reading (kMaxK8sFileBytes, core/input_limits.h), "more than 256 MiB" for a pipe that goes past
// it, "<shown>: line L, column C (byte N): a NUL byte; ..." for a NUL anywhere; kIo when it
// cannot be opened or read.
StatusOr<std::string> ReadK8sText(const std::string& path, const std::string& shown);

}  // namespace tfdiag
