// Loading one run of `tfdiag scaling` (and of `tfdiag-view --scaling`): a run is any input
// `analyze` takes, or a directory of one run's files (timelines, profiles, bundles, and the
// Kubernetes manifests or pod lists that map its hosts to tasks). Each run is loaded and analyzed
// as `analyze` would, then measured by MeasureRun (analyzers/scaling.h).
// Thread-safety: reentrant; each call reads its own files.
#pragma once

#include <string>
#include <vector>

#include "analyzers/scaling.h"
#include "core/status.h"
#include "rules/rule_set.h"

namespace tfdiag {

// The files of one run: `run` itself; a TensorBoard log directory (a `plugins` folder in it, or
// only folders) as one input, as `analyze DIR` reads it; else every regular file of the
// directory `run` (sorted by name, hidden files and symbolic links skipped). Errors: kIo when it
// cannot be read, kInvalidInput when the directory holds neither files nor folders.
StatusOr<std::vector<std::string>> ScalingRunFiles(const std::string& run);

// Loads the run's files (Kubernetes files among them map profiled hosts to tasks), analyzes them
// with `rules` on `threads` threads (0: one per core; results do not depend on it) and measures
// the run. `batch_size` > 0 adds examples/s. Errors: those of the readers, naming the file;
// kInvalidInput when the run holds only Kubernetes files or has no steps (MeasureRun).
StatusOr<ScalingRun> LoadScalingRun(const std::string& run, const RuleSet& rules,
                                    int64_t batch_size, int threads = 0);

}  // namespace tfdiag
