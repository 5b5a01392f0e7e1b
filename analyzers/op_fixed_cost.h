// The fixed cost of one PS op (gRPC request handling and executor dispatch), measured from the
// capture: a dense variable's ops touch all of its bytes, so over variables of different sizes the
// time per op is a line in the bytes, and its intercept is what every op pays whatever its size.
// Partitioning adds ops that each pay it (gen2 report35 7424, spent: 32.6 us per op drawn, the
// PS's NoOps 1 us; 16 -> 48 PS predicted to save 44% at the NoOp cost, -42% off its twin).
// Thread-safety: pure functions.
#pragma once

#include <vector>

namespace tfdiag {

// One dense variable on one PS: its size, its op time per op (ns, its PS's work, not its wait)
// and its op count (> 0).
struct OpCostPoint {
  double bytes = 0;
  double ns_per_op = 0;
  double ops = 0;
};

// The intercept (ns per op) of an unweighted least-squares line of ns_per_op in bytes over
// `points` (one job-wide line: a slow PS host's points stay as measured), at most
// the smallest ns_per_op; 0 where the points cannot show it: fewer than two sizes, the largest
// under kMinOpCostSizeRatio times the smallest, a line that does not rise with the bytes or
// crosses at or under 0 (each op's time does not follow its size: the fit would be noise), an
// intercept whose standard error is over kMaxOpCostError of it, or, of two points, one the
// smaller variable's ops do not nearly show (their bytes' time on the line over the intercept).
double FitOpFixedCostNs(const std::vector<OpCostPoint>& points);

// The sizes a fit needs: the largest variable at least this many times the smallest, so the
// line's slope is measured over a span its noise does not swamp.
inline constexpr double kMinOpCostSizeRatio = 4.0;

// The most standard error an intercept may have, as a share of it (gen2 report35 and gen3
// report34, spent: over all their PS, the fits over it, gen2 7418 and 7420 and gen3 7521 and 7531,
// were 0.5-8 times the drawn per-request cost, from PS whose small ops shared their cores with big
// ones; of the 29 the replay takes, 24 are within 15% of it).
inline constexpr double kMaxOpCostError = 0.2;

}  // namespace tfdiag
