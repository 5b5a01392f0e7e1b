#include "analyzers/replay_dispatch.h"

#include <algorithm>

namespace tfdiag {

ReplayModel AtDispatchCost(const ReplayModel& m) {
  ReplayModel dear = m;
  for (ReplayModel::Ps& p : dear.ps) p.op_floor_ns = std::max(p.op_floor_ns, kPartOpDispatchNs);
  return dear;
}

bool OrderUnseenReadings(const ReplayModel& m) {
  return m.order_unseen && !m.sync && m.link_bytes_per_ns <= 0;
}

void AnyOrderReadings(const ReplayModel& m, ReplayModel* any, ReplayModel* any_dear) {
  *any = m;
  any->any_order = true;
  *any_dear = AtDispatchCost(*any);
}

}  // namespace tfdiag
