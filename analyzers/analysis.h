// Running the rule set over a Capture: the analyzer registry and the AnalysisResult.
//
// An analyzer is a pure function of (Capture, derived task stats, Rule) returning findings; it
// prints nothing and does no I/O. Each lives in its own analyzers/<name>.{h,cc} and registers
// in analysis.cc. Thread-safety: Analyze() only reads its inputs.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analyzers/finding.h"
#include "analyzers/live_stats.h"
#include "analyzers/outlook.h"
#include "analyzers/step_graph.h"
#include "analyzers/task_stats.h"
#include "analyzers/traffic_stats.h"
#include "core/capture.h"
#include "core/k8s_deployment.h"
#include "rules/rule_set.h"

namespace tfdiag {

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
};

using AnalyzerFn = std::vector<Finding> (*)(const AnalysisInput&, const Rule&);

struct AnalyzerInfo {
  std::string_view name;  // referenced by Rule::analyzer
  AnalyzerFn run;
  std::vector<std::string_view> params;  // parameters the analyzer reads (validated at load)
  bool live = false;                     // reads live samples (bundles), not timeline ops
  bool k8s = false;  // reads Kubernetes manifests/pods (AnalysisInput::k8s), proven in k8s_test
  // Compares several runs (tfdiag scaling, analyzers/scaling.h): Analyze() of one capture does
  // not run it; `run` returns nothing. Proven in scaling_test.
  bool runs = false;
};

// Every analyzer, in a stable order.
const std::vector<AnalyzerInfo>& Analyzers();
const AnalyzerInfo* FindAnalyzer(std::string_view name);

// Checks that every rule names a known analyzer and defines the parameters it reads.
// Errors: kInvalidInput naming the rule and the missing analyzer or parameter.
Status ValidateRuleSet(const RuleSet& rules);

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

// Runs every enabled rule. The rule set must have passed ValidateRuleSet().
// `k8s` (optional) is what manifests and pod lists say about the job's deployment. `threads` > 1
// computes the task table and runs the rules in parallel (OpenMP); findings are the same and in
// the same order for any value.
AnalysisResult Analyze(const Capture& capture, const RuleSet& rules,
                       const K8sDeployment* k8s = nullptr, int threads = 1);

// Helpers shared by analyzers: fill rule-owned fields of a finding.
Finding MakeFinding(const Rule& rule, std::string subject_kind, std::string subject);

}  // namespace tfdiag
