// Per-object opt-outs: a manifest object or pod annotated `tfdiag.io/ignore: rule-id[,rule-id]`
// (K8sReplicaType::ignore, K8sPod::ignore; modelled on kube-linter's
// ignore-check.kube-linter.io/<check> annotation) gets no finding of those rules; the report
// lists what was ignored. Thread-safety: pure function.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "analyzers/finding.h"
#include "core/k8s_deployment.h"

namespace tfdiag {

// Removes from `findings` (one per object, before grouping) each manifest finding whose subject
// lies in an object that ignores its rule, and each pod finding on a pod that does. Returns the
// removed (rule id, subject) pairs in order.
std::vector<std::pair<std::string, std::string>> DropIgnoredFindings(
    const K8sDeployment& k8s, std::vector<Finding>* findings);

}  // namespace tfdiag
