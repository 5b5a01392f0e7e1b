#include "analyzers/outlook_sync.h"

#include <algorithm>

namespace tfdiag {

double AggregateGrowth(double async_apply_share, double workers) {
  if (workers <= 1 || !(async_apply_share > 0) || async_apply_share > 1) return 0;
  return std::clamp((1 / async_apply_share - 1) / (workers - 1), 0.0, 1.0);
}

}  // namespace tfdiag
