#include "analyzers/nic_rate.h"

#include <algorithm>

#include "analyzers/analysis_input.h"
#include "analyzers/step_graph.h"
#include "core/median.h"

namespace tfdiag {

NicRateEstimate EstimateNicRate(const AnalysisInput& in,
                                const std::vector<double>& ps_bytes_per_step, double steps_per_s,
                                int num_workers) {
  NicRateEstimate r;
  if (in.graph == nullptr || steps_per_s <= 0 || num_workers <= 0) return r;
  const StepGraph& g = *in.graph;
  const Capture& c = in.capture;
  auto bytes_of = [&](uint32_t t) {
    return t < ps_bytes_per_step.size() && c.tasks[t].kind == JobKind::kPs ? ps_bytes_per_step[t]
                                                                           : -1.0;
  };
  double per_worker_step = 0;  // bytes all PS answer one worker per step
  for (uint32_t t = 0; t < c.tasks.size(); ++t) {
    const double b = bytes_of(t);
    if (b > 0) per_worker_step += b;
  }
  const double lambda_all = steps_per_s;                        // answers/s a PS sends
  const double lambda_one = steps_per_s / double(num_workers);  // steps/s of one worker
  std::vector<double> est;
  for (uint32_t t = 0; t < c.tasks.size(); ++t) {
    if (c.tasks[t].kind != JobKind::kWorker) continue;
    const uint32_t s = g.MedianStep(t);
    if (s == kNoIndex) continue;
    const StepNode& n = g.steps()[s];
    // The last PS answer of the step: the wait a PS's tensor ended that ended latest.
    double secs = 0;
    uint32_t src = kNoIndex;
    TimeNs ended = 0;
    for (uint32_t i = n.waits_begin; i < n.waits_end; ++i) {
      const StepWait& w = g.waits()[i];
      if (w.step_tail || w.edge == kNoIndex) continue;
      const GraphEdge& e = g.edges()[w.edge];
      if (e.push || e.ambiguous() || bytes_of(e.src_task) <= 0 || w.end < ended) continue;
      const TimeNs from = std::max(e.sent, w.last_sent);
      if (w.end <= from) continue;
      ended = w.end;
      secs = double(w.end - from) * 1e-9;
      src = e.src_task;
    }
    // No PS tensor ended a wait (the profile ties no answer to the op that ran when it came):
    // the step's waits do not bound the transfer either (the worker may have run its input
    // meanwhile), so this worker gives no estimate.
    if (src == kNoIndex || secs <= 0) continue;
    const double tx = bytes_of(src) * (1 / secs + lambda_all);
    const double rx = per_worker_step * (1 / secs + lambda_one);
    est.push_back(std::max(tx, rx));
    r.limited_by_ps += tx >= rx;
  }
  // Half the workers at least: one worker's step can be an outlier.
  if (est.empty() || 2 * est.size() < size_t(num_workers)) return r;
  r.workers = int(est.size());
  r.bytes_per_s = MedianInPlace(&est);
  return r;
}

}  // namespace tfdiag
