#include "analyzers/straggler_worker.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

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
  std::vector<double> ratio(workers.size(), 0);
  std::vector<TimeNs> others_median(workers.size(), 0);
  for (size_t i = 0; i < workers.size(); ++i) {
    std::vector<TimeNs> others;
    for (size_t j = 0; j < workers.size(); ++j) {
      if (j != i) others.push_back(own[j]);
    }
    std::sort(others.begin(), others.end());
    others_median[i] = others[others.size() / 2];
    if (others_median[i] > 0) ratio[i] = double(own[i]) / double(others_median[i]);
  }
  // The steps/s the workers at `min` x the others' median or slower cost an asynchronous job.
  auto async_loss = [&](double min) {
    double pct = 0;
    for (size_t i = 0; i < workers.size() && !sync; ++i) {
      if (ratio[i] > 0 && ratio[i] >= min) pct += 100 * (1 - 1 / ratio[i]) / double(workers.size());
    }
    return pct;
  };
  const double min_ratio = rule.Param("min_ratio");
  const double async_loss_pct = async_loss(min_ratio);
  const bool async_rule = !sync && rule.FindParam("async_min_loss_pct") != nullptr;
  const bool async_low = async_rule && async_loss_pct < rule.Param("async_min_loss_pct");
  // Milder stragglers of an asynchronous job (issue 44: Fix first on every job with a fix that
  // buys 5%): the workers at async_mild_min_ratio x the others' median or slower, where together
  // they cost the job async_min_loss_pct of its steps/s. In a small job one worker 30% slower
  // costs that much (a third of 1 - 1/1.3 of three workers' steps/s), under min_ratio. Reported
  // LOW: under min_ratio the median over few steps is noisy.
  double mild_min = HUGE_VAL, mild_loss_pct = 0;
  if (async_rule && rule.FindParam("async_mild_min_ratio") != nullptr &&
      rule.Param("async_mild_min_ratio") < min_ratio) {
    mild_loss_pct = async_loss(rule.Param("async_mild_min_ratio"));
    if (mild_loss_pct >= rule.Param("async_min_loss_pct")) {
      mild_min = rule.Param("async_mild_min_ratio");
    }
  }
  for (size_t i = 0; i < workers.size(); ++i) {
    const TaskStats* w = workers[i];
    const TimeNs median = others_median[i];
    if (median <= 0) continue;
    const bool mild = ratio[i] < min_ratio;
    if (mild && ratio[i] < mild_min) continue;
    Finding f = MakeFinding(rule, "task", w->label);
    f.task = w->label;
    f.summary = fmt::format(
        "{}'s median {} takes {}, {:.1f}x the other workers' median ({}) over "
        "{} steps{}",
        w->label, what, FormatDuration(double(own[i])), ratio[i], FormatDuration(double(median)),
        w->steps, sync ? "; under SyncReplicasOptimizer every replica waits for it" : "");
    f.evidence = {{std::string("median ") + what + " of " + w->label, own[i] / 1e3, "us"},
                  {std::string("median ") + what + " of the other workers", median / 1e3, "us"},
                  {"ratio", ratio[i], "ratio"},
                  {"steps", double(w->steps), "count"},
                  {"busy time", w->busy_ns / 1e3, "us"}};
    if (!sync) {
      // A mild straggler's figure counts the workers at async_mild_min_ratio, under its own
      // label; a straggler's, those at min_ratio (its severity's).
      if (mild) {
        f.evidence.push_back(
            {"steps/s the job loses to its workers at async_mild_min_ratio or "
             "slower (asynchronous)",
             mild_loss_pct, "%"});
      } else {
        f.evidence.push_back(
            {"steps/s the job loses to its stragglers (asynchronous)", async_loss_pct, "%"});
      }
    }
    if (mild) {
      f.summary += fmt::format(
          "; severity low: under {:g}x, but training is asynchronous and the workers at {:g}x or "
          "more cost the job {:.1f}% of its steps/s (at least {:g}%)",
          min_ratio, mild_min, mild_loss_pct, rule.Param("async_min_loss_pct"));
      f.severity = Severity::kLow;
    } else if (async_low && f.severity > Severity::kLow) {
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
