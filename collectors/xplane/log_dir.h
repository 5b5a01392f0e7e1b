// Finding the profile of a TensorBoard log directory: the TF2 profiler writes
// `<logdir>/plugins/profile/<run>/<host>.xplane.pb` (TF 2.0-2.1: `<host>.trace`), one file per
// profiled host, a run per capture named by its start time ("2024_05_01_12_00_00", TF 2.0:
// "2019-10-07_12-49-01"); the Keras TensorBoard callback writes under `<logdir>/train/`.
// Thread-safety: reentrant.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"

namespace tfdiag {

struct ProfileRun {
  std::string dir;                 // the run's directory
  std::string name;                // the run's name (its directory's name)
  std::vector<std::string> files;  // its host files (*.xplane.pb, *.trace), sorted
  std::vector<std::string> runs;   // every run found, sorted (for messages)
};

// `dir` may be a log directory (plugins/profile/ below it or below one of its subdirectories),
// a plugins/profile directory, or a run directory itself. `run` picks a run by name; "" takes
// the latest (run names are timestamps, so the greatest name). Errors (kInvalidInput):
// "<dir>: no profile runs (expected plugins/profile/<run>/<host>.xplane.pb below it)" for an
// empty log directory; "<dir>: no run named 'x' (runs: a, b)"; "<run dir>: no host files
// (*.xplane.pb, *.trace) in this profile run"; runs of the same name under several log
// subdirectories (train/, validation/) are ambiguous and listed.
StatusOr<ProfileRun> FindProfileRun(const std::string& dir, const std::string& run);

// True when `path` is a directory.
bool IsDirectory(const std::string& path);

}  // namespace tfdiag
