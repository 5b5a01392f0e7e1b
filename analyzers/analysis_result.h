// AnalysisResult: what Analyze() (the registry, analysis.h) returns for one capture. Below the
// rules and the registry so that code that reads a finished analysis without running rules
// (the scaling measurement, analyzers/scaling.h) need not include the registry.
// Thread-safety: plain values.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "analyzers/finding.h"
#include "analyzers/live_stats.h"
#include "analyzers/outlook.h"
#include "analyzers/step_graph.h"
#include "analyzers/task_stats.h"
#include "analyzers/traffic_stats.h"
#include "core/k8s_deployment.h"

namespace tfdiag {

struct AnalysisResult {
  TaskStatsTable stats;
  std::vector<ProcessStats> processes;
  TrafficStats traffic;           // ComputeTrafficStats(capture), as the rules saw it
  std::vector<SchedStats> sched;  // ComputeSchedStats(capture), as the rules saw it
  // One per rule and cause (GroupFindings), by predicted saving (Finding::impact, biggest
  // first), then severity (highest first), rule, and subject in natural order; each lists the
  // objects it covers.
  std::vector<Finding> findings;
  // The manifests and pod lists given to Analyze (not owned; nullptr when none): the report's
  // Import rows and JSON "deployment" section.
  const K8sDeployment* k8s = nullptr;
  std::vector<std::string> rules_run;  // enabled rules, in rule-set order
  // Enabled rules that compare several runs (AnalyzerInfo::runs): tfdiag scaling runs them, not
  // analyze; the report says so, so its rule count adds up to `rules list`'s (issue 39).
  std::vector<std::string> rules_scaling;
  std::vector<std::string> rules_disabled;
  // Findings an object opted out of with the tfdiag.io/ignore annotation: (rule id, subject).
  std::vector<std::pair<std::string, std::string>> rules_ignored;
  // Enabled rules that could not judge this capture, with the reason (WhyRuleCannotRun), in
  // rule-set order: (rule id, reason).
  std::vector<std::pair<std::string, std::string>> rules_not_applicable;
  // Inputs that do not describe one run (InputConsistencyNotes): different times or clusters;
  // manifests or pod lists of another job than the one profiled (DeploymentMatchNotes).
  std::vector<std::string> notes;
  // The step graph the rules read (waits, critical paths); never null after Analyze.
  std::shared_ptr<const StepGraph> graph;
  // The scaling outlook from this capture (ComputeOutlook, analyzers/outlook.h), after the
  // findings' impacts; Outlook::set false without worker steps or PS.
  Outlook outlook;
};

}  // namespace tfdiag
