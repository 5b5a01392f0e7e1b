// Loading every input of an `analyze` (or `view`) call into one Capture.
// Inputs, told apart by content: TF1/TF2 timelines (plain or gzip), bundles, TF2 XSpace
// (*.xplane.pb), TF 2.0 profiler Trace (*.trace), RunMetadata / StepStats (binary or text); and
// directories: a TensorBoard log directory or profile run (collectors/xplane/log_dir.h), whose
// host files are all read as one job. Several files (one per worker, or several steps)
// merge into one Capture: devices with the same name are one device, and timestamps are kept as
// they are (TF1 timelines use the Unix epoch, so files of one job line up).
// Thread-safety: reentrant.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "collectors/discovery/tf_config.h"
#include "core/capture.h"
#include "core/k8s_deployment.h"
#include "core/status.h"

namespace tfdiag {

struct LoadOptions {
  // (file index, path, bytes read, file size): called as each file is consumed. The index is
  // that of the input given (a log directory's host files all report the directory's).
  std::function<void(size_t, const std::string&, int64_t, int64_t)> progress;
  int threads = 1;  // per large plain timeline (TimelineReadOptions::threads), and Finish()
  // If set, receives the wall time of reading all files and of CaptureBuilder::Finish(), in s.
  double* read_s = nullptr;
  double* finish_s = nullptr;
  // The inputs' names as the user gave them, by index (for copies made of pipes, see
  // core/spooled_inputs.h): FileStats::path and errors name them. Empty: the paths themselves.
  std::vector<std::string> names;
  // Log directories: the profile run to read ("" = the latest).
  std::string run;
  // Maps profiled hosts to TF tasks (--tf-config); empty: by pod name, else localhost:<n>.
  ClusterSpec cluster;
  // Manifests and pod lists given beside the profiles (read by the caller, k8s_reader.h): map
  // profiled hosts by pod name, hostname or IP and by replica spec (host_tasks.h). Not owned.
  const K8sDeployment* k8s = nullptr;
  // If set, receives one line per choice made for the user to see: the run read from a log
  // directory, the task each host was read as and why.
  std::vector<std::string>* notes = nullptr;
};

// Errors: the first file that cannot be read, as "<file>: byte <N>: <what was expected>"; a
// directory without a profile run (log_dir.h).
StatusOr<Capture> LoadInputs(const std::vector<std::string>& paths, const LoadOptions& options);

}  // namespace tfdiag
