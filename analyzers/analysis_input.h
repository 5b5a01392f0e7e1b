// What every rule reads: the capture and the figures derived once for all rules (AnalysisInput),
// the signature of a rule (AnalyzerFn) and the helper that starts a finding from a rule
// (MakeFinding). It sits below the rules: each analyzers/<rule>.h includes this header and never
// the registry (analysis.h), which includes every rule (docs/architecture.md; checked by
// tests/layers_test.sh). Thread-safety: plain references, read-only while the rules run.
#pragma once

#include <string>
#include <vector>

#include "analyzers/finding.h"
#include "analyzers/live_stats.h"
#include "analyzers/step_graph.h"
#include "analyzers/task_stats.h"
#include "analyzers/traffic_stats.h"
#include "core/capture.h"
#include "core/k8s_deployment.h"
#include "rules/rule_set.h"

namespace tfdiag {

struct ReplayModel;  // analyzers/replay.h, which includes this header

// What every analyzer gets: the capture and figures derived once for all rules.
struct AnalysisInput {
  const Capture& capture;
  const TaskStatsTable& stats;
  const std::vector<ProcessStats>& processes;  // live data; empty for timelines
  const TrafficStats& traffic;                 // measured bytes (eBPF traffic probe); computed once
  const std::vector<SchedStats>& sched;        // run-queue figures (eBPF sched probe); once too
  const K8sDeployment* k8s = nullptr;  // manifests and pod lists; nullptr when none was given
  // Per task step: phases and the cross-task edges that end each wait; nullptr when not built.
  const StepGraph* graph = nullptr;
  // The capture's replay model (BuildReplayModel, analyzers/replay.h), built once before the
  // rules by Analyze and read by the rules that replay (ps-worker-ratio's measured count), the
  // impacts and the outlook; nullptr when not built (a rule then builds its own).
  const ReplayModel* model = nullptr;
};

// A rule: a pure function of the input and its rule's parameters, returning one Finding per
// object (Analyze groups them); it prints nothing and does no I/O.
using AnalyzerFn = std::vector<Finding> (*)(const AnalysisInput&, const Rule&);

// Helpers shared by analyzers: fill rule-owned fields of a finding (id, severity, fix,
// references) for the subject ("task", "worker:3").
Finding MakeFinding(const Rule& rule, std::string subject_kind, std::string subject);

}  // namespace tfdiag
