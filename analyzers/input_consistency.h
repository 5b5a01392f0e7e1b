// Checks that inputs analyzed together describe one run: a timeline and a bundle (or several
// timelines) that cover different times or different clusters are merged without complaint by
// the importer, and their figures would then mix two runs. Thread-safety: pure function.
#pragma once

#include <string>
#include <vector>

#include "analyzers/task_stats.h"
#include "core/capture.h"

namespace tfdiag {

// One line per inconsistency, e.g. "the timeline ops (12:00:01-12:00:05) and the bundle's
// window (13:10:00-13:10:30) do not overlap: they come from different runs". Empty when the
// inputs agree or only one kind of input was given.
std::vector<std::string> InputConsistencyNotes(const Capture& c, const TaskStatsTable& stats);

}  // namespace tfdiag
