// One pipeline for every front end (`tfdiag analyze`, `tfdiag scaling`, tfdiag-view): the inputs
// split by content into Kubernetes files and traces (k8s_inputs.h), a kubectl table refused with
// how to save a usable pod list, --tf-config read, the traces loaded into one Capture
// (load_inputs.h) and the rules run on it with the manifests (analyzers/analysis.h). The front
// ends differ only in what they do with the result, so the viewer cannot drift from the CLI.
// Thread-safety: reentrant; each call reads its own files.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analyzers/analysis.h"
#include "core/capture.h"
#include "core/k8s_deployment.h"
#include "core/status.h"
#include "rules/rule_set.h"

namespace tfdiag {

struct PipelineOptions {
  // The inputs' names as the user gave them (parallel to the paths; empty: the paths): errors,
  // notes and manifest sources name them (pipes are copied to files first, spooled_inputs.h).
  std::vector<std::string> names;
  int threads = 0;        // parser and rule threads (0: one per core); results do not depend on it
  std::string run;        // --run: the profile run of a log directory ("" = the latest)
  std::string tf_config;  // --tf-config FILE|JSON: profiled hosts -> TF tasks ("" = none)
  // (trace index, traces, path, bytes read, file size) as each trace is consumed; `traces` is the
  // number of inputs that are not Kubernetes files.
  std::function<void(size_t, size_t, const std::string&, int64_t, int64_t)> progress;
  // Called once the capture is loaded, before the rules run (the viewer's progress phase).
  std::function<void()> on_analyze;
  // Cluster mode (`analyze --prometheus`): the capture read elsewhere and the pods seen there
  // (kube-state-metrics), analyzed with the manifests among the paths; a trace among the paths
  // is then a usage error.
  std::optional<Capture> capture;
  std::vector<K8sPod> pods;
  // If set, receives the notes for the user, also when the pipeline fails: the manifests' (what
  // was inferred or skipped, "<file> (doc N): ...") first, then the loaders' (load_inputs.h).
  std::vector<std::string>* notes = nullptr;
};

struct PipelineResult {
  Capture capture;
  // The Kubernetes files' objects and pods; `analysis.k8s` points here (null when none was given).
  std::shared_ptr<const K8sDeployment> k8s;
  AnalysisResult analysis;
  size_t traces = 0;  // inputs that were not Kubernetes files
  int threads = 1;    // the threads used (PipelineOptions::threads, 0 resolved)
  double read_s = 0, finish_s = 0, analyze_s = 0;  // wall time of each phase, s
};

// Runs the pipeline over `paths` (files, log directories; manifests and pod lists among them) with
// `rules`. Only Kubernetes files: an empty capture, judged by the manifest rules. Errors: those of
// the readers, naming the input as given ("<file>: byte N: ..."); kInvalidInput for kubectl's
// table output; --tf-config's (naming it; read only when there are traces to map); kUsage for no
// input at all.
StatusOr<PipelineResult> AnalyzeInputs(const std::vector<std::string>& paths, const RuleSet& rules,
                                       PipelineOptions options);

// "" when some input gave the rules something to judge (TF ops, live samples, a Horovod
// timeline, a replica type or pod with a TF role); else one line saying what each input held
// instead, e.g. "nothing to judge: job.yaml: 1 object skipped (not a TF job or pod): TFjob (did
// you mean TFJob?)". A front end reports it as bad input (exit 2) rather than "No rule fired".
std::string NothingToJudge(const PipelineResult& r);

}  // namespace tfdiag
