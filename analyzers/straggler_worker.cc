#include "analyzers/straggler_worker.h"

#include <fmt/format.h>

#include <algorithm>

#include "analyzers/capture_queries.h"
#include "core/duration.h"

namespace tfdiag {

namespace {

// Per worker, its median step less the sync-barrier time in it (StepNode::sync_ns), ns; the
// median step where the step graph has no steps for it.
std::vector<TimeNs> OwnStepMedians(const AnalysisInput& in,
                                   const std::vector<const TaskStats*>& workers) {
  std::vector<TimeNs> out;
  for (const TaskStats* w : workers) {
    TimeNs m = w->step_median_ns;
    if (in.graph != nullptr) {
      const auto [b, e] = in.graph->TaskSteps(w->task);
      std::vector<TimeNs> v;
      bool any_sync = false;
      for (uint32_t s = b; s < e; ++s) {
        const StepNode& n = in.graph->steps()[s];
        v.push_back(n.end - n.start - n.sync_ns);
        any_sync |= n.sync_ns > 0;
      }
      if (any_sync && !v.empty()) {
        std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
        m = v[v.size() / 2];
      }
    }
    out.push_back(m);
  }
  return out;
}

}  // namespace

std::vector<Finding> RunStragglerWorker(const AnalysisInput& in, const Rule& rule) {
  std::vector<Finding> out;
  std::vector<const TaskStats*> workers;
  for (const TaskStats& t : in.stats.tasks) {
    if (IsTrainingTask(t.kind) && t.kind != JobKind::kLocal && t.steps >= rule.Param("min_steps")) {
      workers.push_back(&t);
    }
  }
  if (workers.size() < 2) return out;
  // Under SyncReplicasOptimizer every replica's step ends at the barrier (the sync token), so
  // steps are alike and the slow replica shows in its own time: its step without the sync wait
  // (issue 35). Without sync waits that is the step itself.
  const std::vector<TimeNs> own = OwnStepMedians(in, workers);
  bool sync = false;
  for (size_t i = 0; i < workers.size(); ++i) sync |= own[i] != workers[i]->step_median_ns;
  const char* what = sync ? "step without its sync-token wait" : "step";
  // Asynchronous training: a straggler slows only itself, so the job loses the steps it does
  // not run: per straggler 1 - median / its step of one worker's share (1 / workers) of the
  // job's steps/s. Under async_min_loss_pct in all (issue 44: no finding of medium or above on a
  // healthy job), the findings are LOW.
  double async_loss_pct = 0;
  for (size_t i = 0; i < workers.size() && !sync; ++i) {
    std::vector<TimeNs> others;
    for (size_t j = 0; j < workers.size(); ++j) {
      if (j != i) others.push_back(own[j]);
    }
    std::nth_element(others.begin(), others.begin() + long(others.size() / 2), others.end());
    const double median = double(others[others.size() / 2]);
    if (median > 0 && own[i] >= rule.Param("min_ratio") * median) {
      async_loss_pct += 100 * (1 - median / double(own[i])) / double(workers.size());
    }
  }
  const bool async_low = !sync && rule.FindParam("async_min_loss_pct") != nullptr &&
                         async_loss_pct < rule.Param("async_min_loss_pct");
  for (size_t i = 0; i < workers.size(); ++i) {
    const TaskStats* w = workers[i];
    std::vector<TimeNs> others;
    for (size_t j = 0; j < workers.size(); ++j) {
      if (j != i) others.push_back(own[j]);
    }
    std::sort(others.begin(), others.end());
    const TimeNs median = others[others.size() / 2];
    if (median <= 0) continue;
    const double ratio = static_cast<double>(own[i]) / median;
    if (ratio < rule.Param("min_ratio")) continue;
    Finding f = MakeFinding(rule, "task", w->label);
    f.task = w->label;
    f.summary = fmt::format(
        "{}'s median {} takes {}, {:.1f}x the other workers' median ({}) over "
        "{} steps{}",
        w->label, what, FormatDuration(double(own[i])), ratio, FormatDuration(double(median)),
        w->steps, sync ? "; under SyncReplicasOptimizer every replica waits for it" : "");
    f.evidence = {{std::string("median ") + what + " of " + w->label, own[i] / 1e3, "us"},
                  {std::string("median ") + what + " of the other workers", median / 1e3, "us"},
                  {"ratio", ratio, "ratio"},
                  {"steps", double(w->steps), "count"},
                  {"busy time", w->busy_ns / 1e3, "us"}};
    if (!sync) {
      f.evidence.push_back(
          {"steps/s the job loses to its stragglers (asynchronous)", async_loss_pct, "%"});
    }
    if (async_low && f.severity > Severity::kLow) {
      f.summary += fmt::format(
          "; severity low, not {}: training is asynchronous, so a straggler slows only itself, "
          "and the job's stragglers cost it {:.1f}% of its steps/s (under {:g}%)",
          SeverityName(f.severity), async_loss_pct, rule.Param("async_min_loss_pct"));
      f.severity = Severity::kLow;
    }
    if (!w->by_type.empty()) f.ops = {w->by_type[0].type};
    f.range_start = w->first_ns;
    f.range_end = w->last_ns;
    out.push_back(std::move(f));
  }
  return out;
}

FixPlan StragglerWorkerFix(const AnalysisInput& in, const ReplayModel& m, const Finding& f,
                           const Rule&) {
  FixPlan plan;
  for (const FindingObject& o : f.objects) {
    const uint32_t t = in.capture.FindTask(o.subject);
    if (t != kNoIndex) plan.fix.median_workers.push_back(t);
  }
  plan.what =
      fmt::format("{} slow worker(s) at the other workers' median input and compute ({})",
                  plan.fix.median_workers.size(),
                  m.sync ? "sync: every replica's step waits for the slowest"
                         : "async: the step at the job's throughput, steps/s of all workers");
  plan.throughput = !m.sync;
  return plan;
}

}  // namespace tfdiag
