#include "analyzers/op_fixed_cost.h"

#include <algorithm>
#include <cmath>

namespace tfdiag {

double FitOpFixedCostNs(const std::vector<OpCostPoint>& points) {
  double lo = 0, hi = 0, min_t = 0;
  double n = 0, sx = 0, sy = 0;
  for (const OpCostPoint& p : points) {
    if (p.bytes <= 0 || p.ops <= 0) continue;
    if (n == 0 || p.bytes < lo) lo = p.bytes;
    if (n == 0 || p.bytes > hi) hi = p.bytes;
    if (n == 0 || p.ns_per_op < min_t) min_t = p.ns_per_op;
    n += 1, sx += p.bytes, sy += p.ns_per_op;
  }
  if (n < 2 || hi < kMinOpCostSizeRatio * lo) return 0;
  const double mx = sx / n, my = sy / n;
  double sxx = 0, sxy = 0;
  for (const OpCostPoint& p : points) {
    if (p.bytes <= 0 || p.ops <= 0) continue;
    sxx += (p.bytes - mx) * (p.bytes - mx);
    sxy += (p.bytes - mx) * (p.ns_per_op - my);
  }
  if (sxx <= 0 || sxy <= 0) return 0;
  const double slope = sxy / sxx, a = my - slope * mx;
  if (a <= 0) return 0;
  if (n == 2) {
    // Two points leave no residual to judge the line by: only an intercept the smaller
    // variable's ops nearly show themselves (their bytes' time at most the intercept).
    if (slope * lo > a) return 0;
  } else {
    double rss = 0;
    for (const OpCostPoint& p : points) {
      if (p.bytes <= 0 || p.ops <= 0) continue;
      const double e = p.ns_per_op - a - slope * p.bytes;
      rss += e * e;
    }
    const double se = std::sqrt(rss / (n - 2) * (1 / n + mx * mx / sxx));
    if (se > kMaxOpCostError * a) return 0;
  }
  return std::min(a, min_t);
}

}  // namespace tfdiag
