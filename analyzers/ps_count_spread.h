// A fix adding PS predicted from how the PS load spreads (issue 44 item 2, "PS-count fixes
// modelled exactly as their fix text says"), where the PS model explains too little of the
// workers' waits for a replay: most of each worker's wait is on a PS resource the capture does not
// show (a NIC, a CPU quota, per-message costs, locks), so no queue can be replayed. In an
// asynchronous job whose workers wait on the PS for much of their step, the busiest PS's
// throughput sets the step (the throughput identity of a closed system: workers / step = the rate
// that PS serves; Lazowska et al., "Quantitative System Performance", 1984, ch. 5, bottleneck
// analysis). Re-partitioning every variable over the new count (the rule's fix text,
// fixed_size_partitioner(num_ps)) gives every PS the same share of the load, so the step falls
// by the busiest PS's load after over before, down to the workers' own compute and input.
// Which PS resource holds the waits is not known, so the scaling is read twice, from the PS's op
// time and from their bytes: where the two spread alike, the factor is the same whichever it is;
// where they do not, no prediction. Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "analyzers/analysis_input.h"
#include "analyzers/finding.h"
#include "analyzers/nic_rate.h"
#include "analyzers/replay.h"

namespace tfdiag {

// What the spread reads (LoadSpread): each factor is the busiest PS's load after the fix over its
// load now (ratio; the load after is the PS's summed load over the new count).
struct LoadSpread {
  double ops_factor = 0;    // from op time per worker step per thread, part ops at the PS's op cost
  double dear_factor = 0;   // the same at kPartOpDispatchNs per part op added
  double bytes_factor = 0;  // from each PS's bytes (SpreadBytes)
  // The median worker's own time per step, ns: compute and input, or the larger of compute and
  // its input producer's time where the input is prefetched.
  double floor_ns = 0;
  double evenness = 0;  // PsLoadEvenness (analyzers/ps_count_saturated.h), ratio
  std::string why_not;  // why no prediction is made ("" when one is)
};

// Each PS's bytes as the spread reads them (m.ps's order): its bytes out and in per worker step
// where the capture sizes every PS's transfers (PsNicBytes), else the sizes of the variables it
// hosts (show_memory's sizes of the variables themselves; their optimizer slots are not sized)
// where every variable on a PS with load is sized; empty where neither. `*source` names which, for
// the why.
std::vector<double> SpreadBytes(const AnalysisInput& in, const ReplayModel& m, std::string* source);

// The spread for `fix` (a new PS count over m's PS, every variable re-partitioned over it) on `m`,
// with its PS bytes `bytes` (SpreadBytes; empty: unknown) and `unexplained` (the share of the step
// the PS model does not explain, ratio), under `lim`. why_not is set where: the job is under
// SyncReplicasOptimizer (the barrier paces the step), the fix does more or other than add PS
// (a partition, PS dropped or spread, fewer PS; or the model has no PS), the PS share a node
// (PsPacked: a PS added there shares its NIC; PS whose nodes are unknown are taken each on a node
// of its own, as the convoy takes them, and the why says so), the unexplained wait is under
// lim.min_unexplained, the PS load is uneven (under lim.min_evenness: the waits at a PS carrying
// most of it need not be its load's), the bytes are not known, the two factors are more than
// lim.max_apart apart, no PS carries load, or the part ops' cost moves the factor more than
// kMaxPartOpSensitivity. The op-time factor reads each PS's op time per thread, a PS after the
// fix on the median PS's threads.
LoadSpread ReadLoadSpread(const ReplayModel& m, const std::vector<double>& bytes, const Fix& fix,
                          double unexplained, const SpreadLimits& lim);

// ReadLoadSpread's prediction into `*im`, scaled from `step_ns` (the step the prediction is
// judged on, ns: ImpactReplay::scale_ns) at the larger of the op-time and bytes factors, down to
// LoadSpread::floor_ns (method replay, medium at most, low on a thin capture: EnoughToPredict;
// range from both factors and the dearer part ops, widened by `spread` and |miss|, ratios): true
// where it is made, with `what` (the fix modelled) and `checks` in its why; false with `*why_not`
// set and `*im` untouched.
// Set on the spent sets of sessions 41-43 (gen3 report17-20, gen2 report18-21 and report4, 9, 11,
// indep report25): 5 jobs pass every check, each within 7% of its twin (rules/default.rules.json,
// ps-worker-ratio's spread_* params).
bool PredictFromLoadSpread(const ReplayModel& m, const std::vector<double>& bytes,
                           const std::string& bytes_source, const Fix& fix, double step_ns,
                           double unexplained, double miss, double spread, const SpreadLimits& lim,
                           const std::string& what, const std::string& checks, Impact* im,
                           std::string* why_not);

// The limits (SpreadLimits, analyzers/replay.h) from ps-worker-ratio's `rule`:
// spread_min_unexplained_pct, spread_max_apart_pct and spread_min_evenness_pct, in percent
// (rules/default.rules.json gives each one's source); a param the rule lacks keeps the refusing
// default.
SpreadLimits SpreadLimitsOf(const Rule& rule);

}  // namespace tfdiag
