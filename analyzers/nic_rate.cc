#include "analyzers/nic_rate.h"

#include <algorithm>
#include <cmath>

#include "analyzers/analysis_input.h"
#include "analyzers/capture_queries.h"
#include "analyzers/op_names.h"
#include "analyzers/replay_link.h"
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

NicDemand PsNicBytes(const AnalysisInput& in, const ReplayModel& m, bool beside_control) {
  NicDemand d;
  d.known = m.steps > 0;
  for (const ReplayModel::Ps& p : m.ps) {
    const TaskStats* t = p.task < in.stats.tasks.size() ? &in.stats.tasks[p.task] : nullptr;
    if (t == nullptr || t->task != p.task) {
      t = nullptr;
      for (const TaskStats& x : in.stats.tasks) t = x.task == p.task ? &x : t;
    }
    const bool busy = p.pull_ns + p.push_ns > 0;
    double out = -1, inb = -1;
    const int64_t bytes_out = t == nullptr     ? -1
                              : beside_control ? t->bytes_out_beside_control
                                               : t->bytes_out;
    if (bytes_out >= 0 && m.steps > 0) out = double(bytes_out) / m.steps;
    if (t != nullptr && t->bytes_in >= 0 && m.steps > 0) inb = double(t->bytes_in) / m.steps;
    AddPsDemand(out, inb, busy, &d);
  }
  return d;
}

void AddPsDemand(double out, double in, bool busy, NicDemand* d) {
  // A worker pushes a gradient of each variable it pulled, of the variable's (or, for a gather,
  // the gathered rows') shape, so a direction the capture has no sizes for (a TF1 timeline's
  // show_memory sizes the PS's answers, not the gradients it receives) carries what the other
  // direction does.
  if (out < 0 && in >= 0) out = in, d->mirrored = true;
  if (in < 0 && out >= 0) in = out, d->mirrored = true;
  if (busy && out < 0) d->known = false;
  d->out.push_back(std::max(0.0, out));
  d->in.push_back(std::max(0.0, in));
}

NicRateEstimate EstimateJobNicRate(const AnalysisInput& in, const ReplayModel& m,
                                   const NicDemand& d) {
  if (!d.known || m.sync || m.workers.empty()) return {};
  const double step = m.worker_median_step_ns > 0 ? m.worker_median_step_ns : m.measured_step_ns;
  if (step <= 0) return {};
  std::vector<double> by_task(in.capture.tasks.size(), -1.0);
  for (size_t p = 0; p < m.ps.size() && p < d.out.size(); ++p) {
    if (m.ps[p].task < by_task.size()) by_task[m.ps[p].task] = d.out[p];
  }
  const int n = int(m.workers.size());
  return EstimateNicRate(in, by_task, double(n) * 1e9 / step, n);
}

void SetLinks(const NicDemand& d, double bytes_per_s, bool as_captured, ReplayModel* m) {
  m->link_bytes_per_ns = bytes_per_s / 1e9;
  for (size_t p = 0; p < m->ps.size() && p < d.out.size(); ++p) {
    m->ps[p].out_bytes = d.out[p], m->ps[p].in_bytes = d.in[p];
  }
  double max_out = 0, max_in = 0;
  for (const ReplayModel::Ps& p : m->ps) {
    max_out = std::max(max_out, p.out_bytes), max_in = std::max(max_in, p.in_bytes);
  }
  m->link_explained_out_ns = max_out / m->link_bytes_per_ns;
  m->link_explained_in_ns = max_in / m->link_bytes_per_ns;
  if (!as_captured) return;
  const LinkTimes t = ReplayLinkTimes(*m);
  m->link_explained_out_ns = t.out_ns, m->link_explained_in_ns = t.in_ns;
}

NicRateEstimate FitSyncNicRate(const ReplayModel& m, const NicDemand& d) {
  NicRateEstimate r;
  if (!d.known || !m.sync || m.workers.empty()) return r;
  std::vector<double> x;
  for (const ReplayModel::Worker& w : m.workers) {
    if (w.pull_xfer_ns > 0) x.push_back(w.pull_xfer_ns);
  }
  if (x.empty() || 2 * x.size() < m.workers.size()) return r;
  const double target = MedianInPlace(&x);
  // The largest answer's link time falls as the bandwidth grows: bisect on its logarithm.
  double lo = std::log(1e6), hi = std::log(1e12);  // bytes/s: 8 Mb/s to 8 Tb/s
  ReplayModel linked = m;
  auto link_ns = [&](double log_rate) {
    SetLinks(d, std::exp(log_rate), /*as_captured=*/false, &linked);
    return ReplayLinkTimes(linked).out_ns;
  };
  if (link_ns(hi) > target || link_ns(lo) < target) return r;  // no bandwidth explains it
  for (int i = 0; i < 30; ++i) {
    const double mid = (lo + hi) / 2;
    (link_ns(mid) > target ? lo : hi) = mid;
  }
  r.bytes_per_s = std::exp((lo + hi) / 2);
  r.workers = int(x.size());
  return r;
}

NicRateEstimate JobNicRate(const AnalysisInput& in, const ReplayModel& m, const NicDemand& d) {
  const NicRateEstimate r = m.sync ? FitSyncNicRate(m, d) : EstimateJobNicRate(in, m, d);
  return r.bytes_per_s > kMaxNicBytesPerS ? NicRateEstimate{} : r;
}

double HeldTransferShare(const ReplayModel& m) {
  if (m.link_bytes_per_ns <= 0 || m.workers.empty() || m.measured_step_ns <= 0) return 0;
  std::vector<double> x;
  for (const ReplayModel::Worker& w : m.workers) {
    const HeldTransfers held = HeldBeyondLinks(w.pull_xfer_ns, w.push_xfer_ns,
                                               m.link_explained_out_ns, m.link_explained_in_ns);
    x.push_back(held.pull_ns + held.push_ns);
  }
  return MedianInPlace(&x) / m.measured_step_ns;
}

double EstimatedNicBytesPerS(const AnalysisInput& in) {
  const Capture& c = in.capture;
  if (in.graph == nullptr) return 0;
  int64_t worker_steps = 0;
  int workers = 0;
  double steps_per_s = 0;
  for (const TaskStats& t : in.stats.tasks) {
    if (!IsTrainingTask(t.kind) || t.steps <= 0 || t.step_median_ns <= 0) continue;
    worker_steps += t.steps;
    steps_per_s += 1e9 / double(t.step_median_ns);
    ++workers;
  }
  if (worker_steps <= 0) return 0;
  std::vector<double> by_task(c.tasks.size(), -1.0);
  bool sync = false;
  StringTest sync_type(c, IsSyncReplicasOpType), sync_name(c, IsSyncReplicasOpName);
  for (const TaskStats& t : in.stats.tasks) {
    if (t.kind != JobKind::kPs) continue;
    if (t.bytes_out < 0 && t.edges_out == 0) continue;  // an idle PS: nothing to size
    if (t.bytes_out < 0) return 0;
    if (t.task < by_task.size()) by_task[t.task] = double(t.bytes_out) / double(worker_steps);
    ForEachOpOfTask(c, t, [&](const OpRow& op) {
      sync = sync || sync_type(c.OpType(op)) || sync_name(c.OpName(op));
    });
    if (sync) return 0;
  }
  const double rate = EstimateNicRate(in, by_task, steps_per_s, workers).bytes_per_s;
  return rate > kMaxNicBytesPerS ? 0 : rate;
}

double UnexplainedOverLinks(const ReplayModel& l) {
  if (l.workers.empty() || l.measured_step_ns <= 0) return 0;
  std::vector<double> u;
  for (const ReplayModel::Worker& w : l.workers) {
    const double on_links = std::max(
        0.0, l.link_explained_out_ns + l.link_explained_in_ns - w.pull_xfer_ns - w.push_xfer_ns);
    u.push_back(std::max(0.0, w.recv_ns + w.tail_ns - on_links));
  }
  return UpperMedian(std::move(u)) / l.measured_step_ns;
}

}  // namespace tfdiag
