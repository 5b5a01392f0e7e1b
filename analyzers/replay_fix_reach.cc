#include "analyzers/replay_fix_reach.h"

#include <algorithm>

#include "analyzers/ps_count_saturated.h"

namespace tfdiag {

bool TouchesPs(const Fix& fix, uint32_t task) {
  if (fix.ps_count > 0 || fix.to_async)
    return true;  // every variable placed anew, or the
                  // applies run per push
  for (const auto& [t, share] : fix.partition) {
    if (t == task) return true;
  }
  for (const auto& [t, cut] : fix.ps_demand_cut) {
    if (t == task) return true;
  }
  for (uint32_t t : fix.drop_ps) {
    if (t == task) return true;
  }
  for (const auto& [t, speedup] : fix.host_speedup) {
    if (t == task) return true;
  }
  return false;
}

bool MovesPsBytes(const Fix& fix, uint32_t task) {
  if (fix.ps_count > 0) return true;
  for (const auto& [t, share] : fix.partition) {
    if (t == task) return true;
  }
  return std::find(fix.drop_ps.begin(), fix.drop_ps.end(), task) != fix.drop_ps.end();
}

int SaturatedUntouchedPs(const ReplayModel& m, const Fix& fix, double saturated,
                         double* utilisation, double step_ns, double* changed) {
  int best = -1;
  *utilisation = 0;
  if (changed != nullptr) *changed = 0;
  if (step_ns <= 0) return -1;
  for (size_t i = 0; i < m.ps.size(); ++i) {
    const ReplayModel::Ps& p = m.ps[i];
    // The work a gather moved beside its table adds or takes away (Fix::ps_demand_add: the
    // table's whole reads go) is the PS's after the fix (gen3 report33 7322: ps:0's reads were
    // 866 us of its 1.36 ms per worker step; counted, it would have bounded the fix at 77%
    // where its twin saves 88%).
    const double add = ForTask(fix.ps_demand_add, p.task);
    const double u = PsUtilisation(m, p, step_ns, add);
    if (u >= saturated && u > *utilisation && !TouchesPs(fix, p.task)) {
      best = int(i);
      *utilisation = u;
      if (changed != nullptr) *changed = add;
    }
  }
  return best;
}

double PartitionByteShare(const Fix& fix, uint32_t task) {
  for (const auto& [t, share] : fix.partition_bytes) {
    if (t == task) return std::clamp(share, 0.0, 1.0);
  }
  for (const auto& [t, share] : fix.partition) {
    if (t == task) return std::clamp(share, 0.0, 1.0);
  }
  return 0;
}

}  // namespace tfdiag
