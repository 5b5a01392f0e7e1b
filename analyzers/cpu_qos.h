// cpu-qos: PS/worker containers that cannot get exclusive cores: requests != limits, no CPU
// limit, fractional CPUs, or a pod QoS class other than Guaranteed. Only Guaranteed pods with
// integer CPUs get a cpuset of their own under the kubelet's static CPU Manager policy
// (https://kubernetes.io/docs/tasks/administer-cluster/cpu-management-policies/); Mogujie
// measured cpuset 20%+ faster than cpushare (docs/rules/cpu-qos.md).
#pragma once

#include <vector>

#include "analyzers/analysis_input.h"

namespace tfdiag {

std::vector<Finding> RunCpuQos(const AnalysisInput& in, const Rule& rule);

// Fills a manifest finding's object_kind/file/name from its replica type: a Deployment,
// StatefulSet, ReplicaSet or Job is itself the object ("Deployment", "tf-ps-0"); a replica of a
// TFJob, Volcano Job or ElasticJob is a "TFJob replica type" named "TFJob 'mnist' PS".
void SetManifestObject(const K8sReplicaType& r, Finding* f);

}  // namespace tfdiag
