#include "samples/twins.h"

#include "samples/sim_internal.h"

namespace tfdiag::sim {

Status WriteVariant(const ScenarioParams& p, const Variant& v, const std::string& path) {
  StatusOr<internal::Config> c = internal::ResolveConfig(p);
  if (!c.ok()) return c.status();
  if (v.input_frac >= 0) {
    if (v.input_frac >= 0.9)
      return UsageError("input_frac must be in [0, 0.9), got {}", v.input_frac);
    c->ign_frac = v.input_frac;
  }
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
  } else if (!v.fix.empty()) {
    return UsageError("unknown fix '{}' (known: partition, prefetch, sparse-apply, straggler)",
                      v.fix);
  }
  internal::Model m = internal::BuildModel(*c);
  return internal::WriteModel(m, path);
}

}  // namespace tfdiag::sim
