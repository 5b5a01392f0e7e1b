// Checks that the manifests and pod lists given beside a profile or bundle describe the job that
// was profiled (issue 39, item 4): a TFJob of 1 PS x 2 workers beside a profile of 4 PS x 16
// workers is another job's (or an old revision's), and its findings would be read as this one's.
// Thread-safety: pure function.
#pragma once

#include <string>
#include <vector>

#include "core/capture.h"
#include "core/k8s_deployment.h"

namespace tfdiag {

// One warning per disagreement, e.g. "samples/job.yaml declares 1 PS and 2 workers; the inputs
// profiled 4 PS and 16 workers (ps:0-3, worker:0-15): is it this job's manifest?", or for pod
// lists the tasks without a pod and the pods without a task (their names, at most 6 of each).
// Compared: PS and worker counts (workers: worker, chief and master tasks) of manifests' replica
// types, and role:index of pods that have both. Where the tasks' pods are known (a bundle's
// /etc/hostname, a Prometheus job's pods), names too: a manifest of the same shape none of whose
// replica types would make any of those pods (their names as PodNamingOf has them, e.g. a TFJob's
// <job>-<type>-<index>; not judged where the naming is unknown, as for older TFJob shapes, or for
// a pod template with hostNetwork or spec.hostname), and a pod list none of whose pods for a task
// is the one it ran in (by name, spec.hostname, or a hostNetwork pod's node). Empty when `k8s`
// is null, when the capture has no PS or worker task (a manifest alone, a single-process
// trainer), or when they agree.
std::vector<std::string> DeploymentMatchNotes(const Capture& c, const K8sDeployment* k8s);

}  // namespace tfdiag
