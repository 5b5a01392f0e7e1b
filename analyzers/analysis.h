// Running the rule set over a Capture: the analyzer registry and Analyze(), which returns an
// AnalysisResult (analysis_result.h).
//
// An analyzer is a pure function of (Capture, derived task stats, Rule) returning findings; it
// prints nothing and does no I/O. Each lives in its own analyzers/<name>.{h,cc}, reads its input
// type from analysis_input.h and registers in analysis.cc. This header sits above the rules (its
// .cc includes every one): only the pipeline, the front ends and their tests include it, never a
// rule (tests/layers_test.sh). Thread-safety: Analyze() only reads its inputs.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analyzers/analysis_input.h"
#include "analyzers/analysis_result.h"
#include "analyzers/replay.h"
#include "core/capture.h"
#include "core/k8s_deployment.h"
#include "rules/rule_set.h"

namespace tfdiag {

struct AnalyzerInfo {
  std::string_view name;  // referenced by Rule::analyzer
  AnalyzerFn run;
  std::vector<std::string_view> params;  // parameters the analyzer reads (validated at load)
  bool live = false;                     // reads live samples (bundles), not timeline ops
  bool k8s = false;  // reads Kubernetes manifests/pods (AnalysisInput::k8s), proven in k8s_test
  // Compares several runs (tfdiag scaling, analyzers/scaling.h): Analyze() of one capture does
  // not run it; `run` returns nothing. Proven in scaling_test.
  bool runs = false;
  // The rule's fix model (in the rule's own file, issue 44 item 5): what its fix changes in the
  // replay (analyzers/replay.h); nullptr when the replay does not model the fix.
  FixModelFn fix = nullptr;
};

// Every analyzer, in a stable order.
const std::vector<AnalyzerInfo>& Analyzers();
const AnalyzerInfo* FindAnalyzer(std::string_view name);

// Checks that every rule names a known analyzer and defines the parameters it reads.
// Errors: kInvalidInput naming the rule and the missing analyzer or parameter.
Status ValidateRuleSet(const RuleSet& rules);

// Runs every enabled rule. The rule set must have passed ValidateRuleSet().
// `k8s` (optional) is what manifests and pod lists say about the job's deployment. `threads` > 1
// computes the task table and runs the rules in parallel (OpenMP); findings are the same and in
// the same order for any value.
AnalysisResult Analyze(const Capture& capture, const RuleSet& rules,
                       const K8sDeployment* k8s = nullptr, int threads = 1);

}  // namespace tfdiag
