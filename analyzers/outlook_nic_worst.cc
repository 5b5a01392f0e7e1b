#include "analyzers/outlook_nic_worst.h"

#include <algorithm>

#include "analyzers/outlook_links.h"  // MovesWork

namespace tfdiag {

double WorstNicBytes(const ReplayModel& m, const NicDemand& d, const Fix& fix, int* ps) {
  *ps = -1;
  if (!d.known) return 0;
  if (MovesWork(fix)) {  // the bytes spread evenly over the PS after the fix
    double out = 0, in = 0;
    for (size_t p = 0; p < m.ps.size(); ++p) out += d.out[p], in += d.in[p];
    size_t n = fix.ps_count > 0 ? size_t(fix.ps_count) : m.ps.size() - fix.drop_ps.size();
    n = std::max<size_t>(1, n);
    const double worst = std::max(out, in) / double(n);
    if (worst > 0) *ps = 0;
    return worst;
  }
  double worst = 0;
  for (size_t p = 0; p < m.ps.size(); ++p) {
    const double x = std::max(d.out[p], d.in[p]);
    if (x > worst) worst = x, *ps = int(p);
  }
  return worst;
}

double ReceiveBusyFloor(const NicDemand& d, const std::vector<PsLinkEvidence>& links,
                        double captured_steps_per_s, int* ps) {
  if (ps != nullptr) *ps = -1;
  if (!d.known || captured_steps_per_s <= 0) return 0;
  double least = 0;
  for (size_t p = 0; p < links.size() && p < d.in.size(); ++p) {
    const double share = links[p].recv_share;
    if (share <= 0 || d.in[p] <= 0) continue;
    const double x = d.in[p] * captured_steps_per_s / share;
    if (least <= 0 || x < least) {
      least = x;
      if (ps != nullptr) *ps = int(p);
    }
  }
  return least;
}

}  // namespace tfdiag
