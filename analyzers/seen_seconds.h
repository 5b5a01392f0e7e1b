// How long a recorded process was measured, for rates over the time a task was seen (issue 36,
// issue 46): defined in analyzers/traffic_stats.cc, which reads every rate the worker x PS
// matrix shows over it; hot-ps's floor (hot_ps_floor.cc) reads the hot PS's bytes over it too.
// Thread-safety: a pure function of its arguments.
#pragma once

#include <cstdint>

#include "core/capture.h"

namespace tfdiag {

// Seconds process `process` was measured running (its samples while its CPU time grew, widened
// to its ProcessRow first_ns..last_ns where an agent counted it from then or it exited), within
// `window_s`; `window_s` when unknown. `counted_until` (ns; 0 unknown): the time of the sample
// whose counters the caller divides: where the process exited after it (a store that missed
// the scrapes after the exit), the span ends there, not at the exit; a process still running
// keeps its span.
double SeenSeconds(const Capture& c, uint32_t process, double window_s, TimeNs counted_until = 0);

}  // namespace tfdiag
