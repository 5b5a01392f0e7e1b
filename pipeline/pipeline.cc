#include "pipeline/pipeline.h"

#include <algorithm>
#include <fstream>
#include <thread>

#include "collectors/k8s/k8s_reader.h"
#include "collectors/k8s_inputs.h"
#include "collectors/load_inputs.h"
#include "collectors/xplane/host_tasks.h"
#include "core/capture_builder.h"
#include "core/stopwatch.h"

namespace tfdiag {

namespace {

// kInvalidInput when the trace `path` (named `name`) is kubectl's table output, whose first
// bytes the timeline reader would only call "not JSON".
Status RefuseKubectlTable(const std::string& path, const std::string& name) {
  std::ifstream in(path, std::ios::binary);
  std::string head(1024, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(std::max<std::streamsize>(0, in.gcount())));
  if (!LooksLikeKubectlTable(head)) return OkStatus();
  return InvalidInput(
      "{}: line 1: this looks like kubectl's table output (NAME READY STATUS ...), which "
      "names pods but not their labels, containers or resources; save the list with "
      "`kubectl get pods -o json > pods.json` (or -o yaml) and analyze that",
      name);
}

}  // namespace

StatusOr<PipelineResult> AnalyzeInputs(const std::vector<std::string>& paths, const RuleSet& rules,
                                       PipelineOptions o) {
  if (paths.empty() && !o.capture) return UsageError("no input files");
  const int threads = o.threads > 0
                          ? o.threads
                          : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  StatusOr<SplitInputs> split = SplitK8sInputs(paths, o.names);
  if (!split.ok()) return split.status();
  if (o.notes != nullptr) {
    o.notes->insert(o.notes->end(), split->k8s.notes.begin(), split->k8s.notes.end());
  }
  const std::vector<std::string>& traces = split->traces;
  for (size_t i = 0; i < traces.size(); ++i) {
    TFDIAG_RETURN_IF_ERROR(RefuseKubectlTable(traces[i], split->names[i]));
  }
  auto k8s = std::make_shared<K8sDeployment>(std::move(split->k8s));
  bool have_k8s = split->have_k8s;
  if (!o.pods.empty() || o.capture) {
    for (K8sPod& p : o.pods) k8s->pods.push_back(std::move(p));
    have_k8s = true;
  }
  PipelineResult r;
  r.traces = traces.size();
  r.threads = threads;
  if (o.capture) {
    if (!traces.empty()) {
      return UsageError("--prometheus: only manifests may be given beside it, not {}",
                        split->names[0]);
    }
    r.capture = std::move(*o.capture);
  } else if (traces.empty()) {
    r.capture = CaptureBuilder().Finish();
  } else {
    LoadOptions lo;
    lo.threads = threads;
    lo.run = o.run;
    lo.names = split->names;
    lo.notes = o.notes;
    lo.read_s = &r.read_s;
    lo.finish_s = &r.finish_s;
    if (have_k8s) lo.k8s = k8s.get();
    if (!o.tf_config.empty()) {
      StatusOr<ClusterSpec> cluster = ClusterFromTfConfigArg(o.tf_config);
      if (!cluster.ok()) return cluster.status();
      lo.cluster = *cluster;
    }
    if (o.progress) {
      lo.progress = [&](size_t i, const std::string& path, int64_t done, int64_t total) {
        o.progress(i, traces.size(), path, done, total);
      };
    }
    const size_t notes_before = o.notes != nullptr ? o.notes->size() : 0;
    StatusOr<Capture> capture = LoadInputs(traces, lo);
    if (!capture.ok()) return capture.status();
    // Traces that hold nothing to analyze (an empty trace, a trace of other processes) and
    // nothing beside them: an error naming the first and where a profile is expected.
    if (capture->ops.empty() && capture->horovod.empty() && capture->processes.empty() &&
        !have_k8s && !capture->stats.files.empty()) {
      const FileStats& f = capture->stats.files[0];
      // Only the error: notes on how its runs and hosts were read say nothing more (issue 39).
      if (o.notes != nullptr) o.notes->resize(notes_before);
      return InvalidInput(
          "{}: {}; a profile is expected: a TF1 timeline, a TF2 log directory "
          "(<log dir>/plugins/profile/<run>/<host>.xplane.pb) or a bundle",
          f.path, f.note.empty() ? "no TensorFlow ops in it: nothing to analyze" : f.note);
    }
    r.capture = std::move(*capture);
  }
  if (o.on_analyze) o.on_analyze();
  Stopwatch watch;
  if (have_k8s) r.k8s = std::move(k8s);
  r.analysis = Analyze(r.capture, rules, r.k8s.get(), threads);
  r.analyze_s = watch.Seconds();
  return r;
}

std::string NothingToJudge(const PipelineResult& r) {
  const Capture& c = r.capture;
  if (!c.ops.empty() || !c.processes.empty() || !c.horovod.empty()) return "";
  std::vector<std::string> why;
  if (r.k8s != nullptr) {
    for (const K8sFileSummary& f : r.k8s->summaries) {
      if (f.HasTfObjects()) return "";
      why.push_back(f.file + ": " + f.WhyNothingToJudge());
    }
    // Pods from kube-state-metrics (analyze --prometheus) come with a capture of their own.
    if (r.k8s->summaries.empty() && !r.k8s->pods.empty()) return "";
  }
  for (const FileStats& f : c.stats.files) {
    why.push_back(f.path + ": " + (f.note.empty() ? "no TensorFlow ops" : f.note));
  }
  if (why.empty()) return "";
  std::string s = "nothing to judge: ";
  for (size_t i = 0; i < why.size(); ++i) s += (i ? "; " : "") + why[i];
  return s;
}

}  // namespace tfdiag
