#include "analyzers/applicability.h"

#include <algorithm>
#include <string>
#include <vector>

#include "analyzers/capture_queries.h"
#include "analyzers/worker_wait.h"
#include "core/k8s_deployment.h"
#include "core/plural.h"

namespace tfdiag {

namespace {

int64_t MostWorkerSteps(const TaskStatsTable& st) {
  int64_t most = 0;
  for (const TaskStats& t : st.tasks) {
    if (IsTrainingTask(t.kind)) most = std::max(most, t.steps);
  }
  return most;
}

// What a capture has instead of 2 worker tasks: "1 local task, no worker tasks", "1 worker
// task"; "" when it has 2 or more worker tasks.
std::string MissingWorkers(const TaskStatsTable& st) {
  int local = 0, workers = 0;
  for (const TaskStats& t : st.tasks) {
    if (t.kind == JobKind::kLocal && t.ops > 0) ++local;
    if (IsTrainingTask(t.kind) && t.kind != JobKind::kLocal && t.ops > 0) ++workers;
  }
  if (workers >= 2) return "";
  const std::string w = workers == 0 ? "no worker tasks" : "1 worker task";
  if (local == 0) return w;
  return fmt::format("{} local task{} (a single-process trainer), {}", local, local > 1 ? "s" : "",
                     w);
}

}  // namespace

std::string WhyRuleCannotRun(const AnalyzerInfo& a, const AnalysisInput& in, const Rule& rule) {
  const Capture& c = in.capture;
  const TaskStatsTable& st = in.stats;
  const std::string_view n = a.name;
  if (n == "k8s_live_mismatch") {
    if (in.k8s == nullptr || c.processes.empty()) {
      return "needs both a manifest or pod list and a bundle from tfdiag attach";
    }
    return "";
  }
  if (a.k8s && in.k8s == nullptr) return "needs a manifest or pod list (kubectl get -o yaml/json)";
  if (n == "thread_config" && in.k8s->replicas.empty()) {
    // Pods seen by kube-state-metrics (analyze --prometheus) come without env or thread flags:
    // silence there is no verdict (issue 39 item 3).
    const bool any_spec = std::any_of(in.k8s->pods.begin(), in.k8s->pods.end(),
                                      [](const K8sPod& p) { return p.SpecKnown(); });
    if (!any_spec)
      return "needs the containers' env (a manifest or kubectl get pods -o json): pods seen by "
             "Prometheus carry no thread settings";
  }
  if (a.live && c.processes.empty()) return "needs live samples (a bundle from tfdiag attach)";
  if (n == "slow_ps_link" && c.ops.empty()) {
    return "needs the PS timelines (op times, variable sizes) beside the bundle";
  }
  if (a.live || a.k8s) return "";
  // The remaining rules read timeline ops, except hot-ps, idle-ps and ps-worker-ratio, which
  // also read bundles and manifests.
  const bool has_traffic = !c.traffic.empty();
  if (n == "hot_ps" || n == "idle_ps") {
    const int min_ps = static_cast<int>(rule.Param("min_ps", 2));
    if (st.num_ps < min_ps && !(has_traffic && c.CountTasks(JobKind::kPs) >= min_ps)) {
      // A manifest declares PS but not their load.
      if (c.ops.empty() && !has_traffic && c.processes.empty())
        return "needs a timeline, profile or live data (PS load is measured, not declared)";
      return fmt::format("needs {} PS tasks; the capture has {}", min_ps, st.num_ps);
    }
    return "";
  }
  if (n == "ps_worker_ratio") {
    if ((st.num_ps == 0 || st.num_workers == 0) && in.k8s == nullptr) {
      return fmt::format("needs PS and worker tasks; the capture has {} PS and {}", st.num_ps,
                         Count(st.num_workers, "worker"));
    }
    return "";
  }
  if (c.ops.empty()) return "needs timeline ops (a TF timeline or profile)";
  if (n == "straggler_worker") {
    const int64_t need = static_cast<int64_t>(rule.Param("min_steps", 3));
    int workers = 0;
    for (const TaskStats& t : st.tasks) {
      if (IsTrainingTask(t.kind) && t.kind != JobKind::kLocal && t.steps >= need) ++workers;
    }
    if (workers < 2) {
      const std::string missing = MissingWorkers(st);
      if (!missing.empty()) {
        return fmt::format("needs 2 worker tasks with {} steps each; the capture has {}", need,
                           missing);
      }
      int64_t most = 0;
      for (const TaskStats& t : st.tasks) {
        if (IsTrainingTask(t.kind) && t.kind != JobKind::kLocal) most = std::max(most, t.steps);
      }
      return fmt::format("needs 2 workers with {} steps each; the most steps a worker has is {}",
                         need, most);
    }
    return "";
  }
  if (n == "host_bound" || n == "launch_bound") {
    if (c.step_breakdowns.empty()) {
      return "needs XProf's step-time breakdown: the XSpace of a TF2 profile (Keras TensorBoard "
             "callback, tf.profiler) of a GPU host";
    }
    return "";
  }
  if (n == "input_bound" || n == "worker_wait" || n == "sync_replicas") {
    if (MostWorkerSteps(st) == 0) return "needs worker steps (no worker ran ops)";
    if (n == "worker_wait") {
      // Every training task with steps has nothing cross-task to wait for: say which.
      // (A host of a multi-host job profiled alone reads as such a task: say what would help.)
      std::vector<std::string> alone;
      for (const TaskStats& t : st.tasks) {
        if (!IsTrainingTask(t.kind) || t.steps == 0) continue;
        if (!NothingCrossTaskToWaitFor(st, t)) return "";
        alone.push_back(t.label);
      }
      const size_t n = alone.size();
      if (n > 3) alone.resize(3);
      return fmt::format(
          "needs another task to wait for (a PS or other workers); the capture has {} task{}, "
          "{}{}, that receive{} nothing from another task (a multi-host job: give every host's "
          "profile)",
          n, n == 1 ? "" : "s", fmt::join(alone, ", "), n > 3 ? ", ..." : "", n == 1 ? "s" : "");
    }
    return "";
  }
  if (n == "oversharding" || n == "allreduce_candidate" || n == "ps_on_gpu" ||
      n == "dense_apply_on_embedding") {
    if (st.num_ps == 0) return fmt::format("needs PS tasks; the capture has none");
    return "";
  }
  return "";
}

}  // namespace tfdiag
