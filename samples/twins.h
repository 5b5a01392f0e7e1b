// Fixed twins of the simulator's scenarios (issue 29): the same job with one fix applied, so a
// prediction of what the fix buys (analyzers/replay.h) can be checked against the twin's
// measured step. The twin keeps the scenario's seed, sizes and placement and changes only what
// the fix changes. Thread-safety: reentrant, as WriteScenario.
#pragma once

#include <string>

#include "core/status.h"
#include "samples/simulator.h"

namespace tfdiag::sim {

// Changes to a scenario before it is simulated.
struct Variant {
  // The fix: "partition" (the embedding cut into one part per PS, fixed_size_partitioner(num_ps)),
  // "prefetch" (input ready when the step asks: IteratorGetNext at the healthy 2% of a step),
  // "sparse-apply" (the embedding updated by SparseApplyAdagrad instead of dense ApplyAdam),
  // "straggler" (the slow worker at the others' speed), "unshard" (oversharded dense kernels cut
  // into one part per PS, fixed_size_partitioner(num_ps)), "gather-on-ps" (embedding_lookup
  // instead of tf.gather on the worker: the gather runs beside each part), "ps-count" (`ps` PS,
  // variables placed greedily, the embedding cut into one part per PS), "" (none). The last
  // three keep the job's compute: the simulator fits compute to the target step, so the twin's
  // target is set to what the same compute plus the twin's fixed work takes.
  std::string fix;
  // IteratorGetNext's share of a worker step before the fix, or -1 for the scenario's: a slow
  // input on top of the scenario's own bottleneck (two findings that interact).
  double input_frac = -1;
  int ps = 0;  // "ps-count": the PS count, 1..512
};

// Writes scenario `p` with `v` applied to `path` (see WriteScenario). Errors: kUsage for an
// unknown fix, a fix the scenario has nothing to apply to, or WriteScenario's errors.
Status WriteVariant(const ScenarioParams& p, const Variant& v, const std::string& path);

}  // namespace tfdiag::sim
