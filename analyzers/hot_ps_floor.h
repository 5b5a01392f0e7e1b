// hot-ps's severity floor (issue 36 item 2): a hot PS that live evidence shows far from every
// limit is not the job's bottleneck, whatever its share of the work. With live figures for the
// hot PS (bundles, agents, Prometheus), its closeness to a limit is the larger of its CPU (used,
// or demand from the sched figures) over the CPUs it may use (CFS limit, cpuset, else the node's)
// and its busier direction's bytes/s over a NIC's rate (param nic_gbps). Severity follows it:
// the rule's own from near_limit_pct, MEDIUM from far_limit_pct, LOW below; the summary says why.
// The CPUs it may use are an evidence figure named by their source ("its CPU limit", "its
// cpuset", "node's CPUs"); with live figures but no CPU count (a PromQL store holding neither
// kube-state-metrics limits nor the agents' tfdiag_node_cpus) the summary says the floor could
// not be weighed. Without live figures (profiles only), where every transfer's size is known:
// the same from the hot PS's busy share of the capture and its bytes served per second over its
// NIC's rate as the capture's answer transfers show it (analyzers/nic_rate.h; not under
// SyncReplicasOptimizer), else over a profile_nic_gbps NIC (the slowest in use, as a profile
// does not show the NIC's rate); where the capture shows the rate, a hot PS MEDIUM under
// profile_far_limit_pct gets a kLowUnlessPredictedLabel figure (LowerSeverityByImpact keeps it
// MEDIUM only where its fix is predicted); without the sizes the finding is unchanged. Pure
// function; kept apart from hot_ps.cc's criteria (what makes a PS hot) on purpose.
#pragma once

#include <vector>

#include "analyzers/analysis_input.h"

namespace tfdiag {

// RunHotPs (analyzers/hot_ps.h), then the floor on each finding it returns.
std::vector<Finding> RunHotPsWithFloor(const AnalysisInput& in, const Rule& rule);

// The floor on one hot-ps finding (subject/task "ps:N"). `nic_bytes_per_s`: the NIC rate (bytes/s,
// one direction) the capture's transfers show, 0 when unknown (profile_nic_gbps then).
void ApplyHotPsFloor(const AnalysisInput& in, const Rule& rule, Finding* f,
                     double nic_bytes_per_s = 0);

}  // namespace tfdiag
