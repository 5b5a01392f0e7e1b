// Whether a PS's threads outnumber its cores, from the capture alone (issue 44): the same op
// (the same node, step after step) takes longer when more of the PS's ops run at once. With c
// cores and n ops running, each op progresses at min(1, c/n) of its speed alone, so each op's
// duration d relates to the mean number of the PS's ops running during it, n, as
// d = work * max(1, n / c). FitPsCores picks the c (1 .. the most ops seen at once) that
// explains the durations best, in log space, each node's work its own; it is evidence the
// replay's model is not fitted to, and it turns each op's duration back into its work.
// Thread-safety: pure functions.
#pragma once

#include <vector>

#include "analyzers/analysis_input.h"

namespace tfdiag {

// One PS's ops as the fit sees them.
// Receives (IsRecvOpType) count among the ops running at once and in the fit; where the task's
// demand leaves them out (TaskStats::recv_busy_ns > 0) they are left out of work_ns and op_ns,
// so work_ns / op_ns scales that demand over the same ops.
struct PsOpLoad {
  double work_ns = 0;    // the ops' time with the fitted cores: sum of d / max(1, n / cores)
  double op_ns = 0;      // the ops' measured time (sum of d)
  double max_level = 1;  // the most ops running at once, averaged over an op's life
  int cores = 0;         // the fitted cores; 0 when the ops never ran at once for long enough
                         // to tell (no node seen at two levels of load)
  double fit_gain = 0;   // share of the log-duration variance the slowdown explains, [0, 1]
};

// The fit for the ops of PS `t` (each op's node name its group; ops of 0 duration skipped).
// Memory: the task's ops (two time points each).
PsOpLoad FitPsCores(const Capture& c, const TaskStats& t);

}  // namespace tfdiag
