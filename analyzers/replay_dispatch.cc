#include "analyzers/replay_dispatch.h"

#include <algorithm>

namespace tfdiag {

ReplayModel AtDispatchCost(const ReplayModel& m) {
  ReplayModel dear = m;
  for (ReplayModel::Ps& p : dear.ps) p.op_floor_ns = std::max(p.op_floor_ns, kPartOpDispatchNs);
  return dear;
}

}  // namespace tfdiag
