// TF role names and the pod names Kubeflow gives them: the one list of roles and the one
// pod-name parser that discovery, the agent, the Prometheus reader, the manifest reader, the
// scaling periods and the rules share (docs/architecture.md).
//
// Roles: the replica types of a TFJob (kubeflow/training-operator, pkg/apis/kubeflow.org/v1
// tensorflow_types.go: PS, Worker, Chief, Master, Evaluator) and the task types of a TF_CONFIG
// cluster (tf.distribute.cluster_resolver.TFConfigClusterResolver), lower-cased.
// Pod names: the TFJob operator names a replica's pods "<job>-<type, lower case>-<index>"
// (kubeflow/common pkg/core/utils.go GenGeneralName), as Volcano names a task's pods (job
// controller MakePodName) and a StatefulSet named "<job>-<type>" names its pods.
// Thread-safety: pure functions.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace tfdiag {

// Every TF role tfdiag knows, lower case, PS first.
inline constexpr std::array<std::string_view, 5> kTfRoles = {"ps", "worker", "chief", "master",
                                                             "evaluator"};

// The role `name` names, ASCII case-insensitively ("PS" -> "ps", "Worker" -> "worker"); "" when
// it names none ("trainer", "parameter_server": synonyms are the caller's).
std::string TfRoleOf(std::string_view name);

// kTfRoles joined by '|': "ps|worker|chief|master|evaluator", for regexes (PromQL selectors)
// and messages that list the roles.
std::string TfRolesAlternation();

// Roles whose tasks run training steps and push gradients: worker, chief, master (TF1's chief
// worker). "ps" and "evaluator" are not.
bool IsWorkerLikeRole(std::string_view role);

// Task indexes read from labels and names: 0..kMaxTaskIndex (6 digits, as Kubeflow's replica
// indexes are in practice; a larger one is no task of a real job).
constexpr int kMaxTaskIndex = 999'999;
// A task index label or name part ("3"): ASCII digits, 0..kMaxTaskIndex; false for "", "-5",
// "1e3", "+3", "99999999999" (*index untouched then).
bool ParseTaskIndex(std::string_view s, int* index);

// A pod name read as "<job>-<type>-<index>".
struct TfPodName {
  std::string job;   // "my-job"; "" for a bare "<type>-<index>" ("worker-3")
  std::string type;  // the replica type or task name as written: "worker", "PS", "trainer"
  std::string role;  // TfRoleOf(type): "worker", "ps"; "" when the type names no TF role
  int index = 0;     // 0..kMaxTaskIndex
};

// Reads `pod` as "<job>-<type>-<index>" or "<type>-<index>": the last dash-separated part is a
// task index (ParseTaskIndex), the one before it a type of ASCII letters and digits (a TFJob's
// replica type, a Volcano task's name), the rest the job. nullopt otherwise: "myjob-ps" (no
// index), "myjob-ps-x", "myjob-ps-1234567" (index out of range), "-ps-0", "myjob--0".
// Callers that need a TF role check `role`; a Deployment's or Job's pod
// ("myjob-ps-7d4b9c-x7k2p") reads as no TF pod unless its random suffix is all digits.
std::optional<TfPodName> ParseTfPodName(std::string_view pod);

// Whether `pod` is named as a task of the TF job `job`: ParseTfPodName(pod)->job == job, any
// type ("myjob-trainer-0" is a task of "myjob"). False for an empty `job`.
bool IsPodOfTfJob(std::string_view pod, std::string_view job);

}  // namespace tfdiag
