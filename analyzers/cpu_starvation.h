// cpu-starvation: the job's tasks wait for a CPU a large share of the time they are runnable
// (docs/rules/cpu-starvation.md). Per task: run-queue wait share and p99 (the eBPF sched probe,
// /proc/PID/task/*/schedstat, or the agents' run-queue histogram through Prometheus), CPU demand
// against CPU used, runnable threads against the CPUs the task may use, involuntary context
// switches, CFS throttling; per node: the job's demand against the node's CPUs, which tells
// whether other work on the node holds them. CFS throttling alone (cAdvisor without agents) fires
// a weaker, MEDIUM finding that says so. Thresholds: rules/default.rules.json. Pure function.
#pragma once

#include <string>
#include <vector>

#include "analyzers/analysis_input.h"

namespace tfdiag {

std::vector<Finding> RunCpuStarvation(const AnalysisInput& in, const Rule& rule);

// Where a capture's run-queue figures came from, for the finding's text: "eBPF sched probe"
// (meta.probes names "sched("), "tfdiag agents' run-queue histogram (Prometheus)" (a cluster
// capture), else "/proc/PID/task/*/schedstat" (attach without the probe); "" when it has none.
std::string RunqEvidenceSource(const Capture& c);

}  // namespace tfdiag
