#include "samples/twins.h"

#include <algorithm>
#include <vector>

#include "samples/sim_internal.h"

namespace tfdiag::sim {

namespace {

// Span (ns) of `plan` laid out from 0 as the scheduler does (samples/simulator.cc,
// Scheduler::Schedule) at the ops' mean durations and latencies (no jitter, no PS thread limits);
// step-fraction ops last step_frac * `frac_target`.
double MeanSpan(const internal::StepPlan& plan, double frac_target, double scale) {
  std::vector<double> end(plan.ops.size(), 0);
  double last = 0;
  for (size_t i = 0; i < plan.ops.size(); ++i) {
    const internal::PlanOp& op = plan.ops[i];
    double ready = 0;
    for (int d = op.dep_begin; d < op.dep_end; ++d) ready = std::max(ready, end[plan.deps[d]]);
    const double dur =
        double(op.cost.base_ns) + op.cost.weight * scale + op.cost.step_frac * frac_target;
    end[i] = ready + double(op.cost.latency_ns) + std::max(500.0, dur);
    last = std::max(last, end[i]);
  }
  return last;
}

// The compute scale (ns per unit of compute weight) the scheduler fits to a step of `target` ns
// (Scheduler::Step: compute fills what the fixed work leaves, at least 35% of the target).
double FittedScale(const internal::StepPlan& plan, double target, double frac_target) {
  const double w = plan.total_weight;
  if (w <= 0) return 0;
  const double span0 = MeanSpan(plan, frac_target, 0);
  const double min_scale = 0.35 * target / w;
  double scale = std::max(min_scale, (target - span0) / w);
  const double span1 = MeanSpan(plan, frac_target, scale);
  if (span1 > span0 && target > span0) {
    scale = std::max(min_scale, scale * (target - span0) / (span1 - span0));
  }
  return scale;
}

// The simulator fits each step's compute to the target step time, so a twin that only removes
// fixed work (transfers, PS ops) would refill the time with compute. Sets `after`'s target step
// (and its input share, to keep the input's absolute time) so that the scheduler fits the same
// compute to `after` as to `before`: worker 0's plans, solved by bisection.
void KeepCompute(const internal::Config& before, internal::Config* after) {
  const internal::Model mb = internal::BuildModel(before);
  internal::Config probe = *after;
  probe.ign_frac = before.ign_frac;
  probe.step_ms = before.step_ms;
  const internal::Model ma = internal::BuildModel(probe);
  const double t = before.step_ms * 1e6;
  const double scale = FittedScale(mb.plans[0], t, t);
  double lo = 0.01 * t, hi = 4 * t;
  for (int i = 0; i < 60; ++i) {
    const double mid = (lo + hi) / 2;
    (FittedScale(ma.plans[0], mid, t) < scale ? lo : hi) = mid;
  }
  after->step_ms = hi / 1e6;
  after->ign_frac = before.ign_frac * t / hi;
}

}  // namespace

Status WriteVariant(const ScenarioParams& p, const Variant& v, const std::string& path) {
  StatusOr<internal::Config> c = internal::ResolveConfig(p);
  if (!c.ok()) return c.status();
  if (v.input_frac >= 0) {
    if (v.input_frac >= 0.9)
      return UsageError("input_frac must be in [0, 0.9), got {}", v.input_frac);
    c->ign_frac = v.input_frac;
  }
  const internal::Config before = *c;
  if (v.fix == "partition") {
    if (!c->sparse)
      return UsageError("fix 'partition': scenario '{}' has no embedding", p.scenario);
    c->emb_parts = c->ps;
  } else if (v.fix == "prefetch") {
    // The simulator fits compute to fill the target step T (samples/simulator.cc, Step), so the
    // twin keeps the job's compute by shortening T by the input time prefetch hides: the input
    // op (IteratorGetNext, on the step's critical path) drops to the healthy share.
    const double healthy = internal::Config().ign_frac;
    if (c->ign_frac > healthy) {
      const double removed = c->ign_frac - healthy;
      c->step_ms *= 1 - removed;
      c->ign_frac = healthy / (1 - removed);  // the same absolute dequeue time as a healthy job
    }
  } else if (v.fix == "sparse-apply") {
    c->emb_opt = internal::EmbeddingOptimizer::kSparseAdagrad;
  } else if (v.fix == "straggler") {
    c->straggler_factor = 1.0;  // the slow worker at the others' speed
  } else if (v.fix == "unshard") {
    if (c->kernel_parts <= c->ps)
      return UsageError("fix 'unshard': scenario '{}' has no oversharded kernel", p.scenario);
    c->kernel_parts = c->ps;  // fixed_size_partitioner(num_ps)
    KeepCompute(before, &*c);
  } else if (v.fix == "gather-on-ps") {
    if (!c->gather_on_worker)
      return UsageError("fix 'gather-on-ps': scenario '{}' gathers on the PS", p.scenario);
    c->gather_on_worker = false;  // embedding_lookup: the gather colocated with each part
    KeepCompute(before, &*c);
  } else if (v.fix == "ps-count") {
    if (v.ps < 1 || v.ps > 512) return UsageError("fix 'ps-count': ps must be in 1..512");
    c->ps = v.ps;
    c->placement = internal::Placement::kGreedy;
    c->busy_ps = 0;
    if (c->sparse) c->emb_parts = v.ps;  // partitioned over the new PS count
    KeepCompute(before, &*c);
  } else if (!v.fix.empty()) {
    return UsageError(
        "unknown fix '{}' (known: partition, prefetch, sparse-apply, straggler, unshard, "
        "gather-on-ps, ps-count)",
        v.fix);
  }
  internal::Model m = internal::BuildModel(*c);
  return internal::WriteModel(m, path);
}

}  // namespace tfdiag::sim
