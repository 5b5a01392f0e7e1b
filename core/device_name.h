// Parsing of TensorFlow device names as they appear in timelines' process_name metadata.
//
// Accepted forms (TensorFlow's DeviceNameUtils, tensorflow/core/util/device_name_utils.cc, and
// timeline.py, which appends " Compute" / " Tensors" to the device of each pid):
//   /job:ps/replica:0/task:1/device:CPU:0            full name
//   /job:localhost/replica:0/task:0/cpu:0            legacy lower-case device
//   /job:worker/replica:0/task:0/device:GPU:0/stream:12, .../stream:all, .../memcpy
//   /gpu:0/stream:12, /device:GPU:0/memcpy, /host:CPU  (no job: the local task)
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"

namespace tfdiag {

// The role of a task's job, from its job name ("ps", "worker", "chief", ...): the first five
// in kTfRoles' order (core/tf_roles.h).
enum class JobKind : uint8_t { kPs, kWorker, kChief, kMaster, kEvaluator, kLocal, kOther };

// Maps a job name to its kind: "ps" -> kPs, "worker" -> kWorker, "localhost"/"" -> kLocal, ...
JobKind JobKindOf(std::string_view job);
// "ps", "worker", ... for reports.
std::string_view JobKindName(JobKind kind);

// A parsed device name. `job` is empty when the name carries none (single-process traces).
struct DeviceName {
  std::string job;        // "ps", "worker", "localhost"; "" if absent
  int replica = 0;        // /replica:N
  int task = 0;           // /task:N
  std::string type;       // "CPU", "GPU", "TPU", ... upper-cased
  int index = 0;          // device ordinal
  std::string sub;        // "stream:12", "stream:all", "memcpy", "" (GPU tracer sub-devices)
  std::string lane_kind;  // "Compute", "Tensors", or "" (timeline.py suffix)

  // "/job:ps/replica:0/task:1/device:CPU:0[/stream:12]": one spelling per device, so that the
  // legacy and modern spellings of the same device merge. Without a job: "/device:GPU:0[/sub]".
  std::string Canonical() const;
};

// Parses `text` (a process_name value). Errors: kInvalidInput when `text` names no device
// (e.g. "Allocators", "python3"), with the reason.
StatusOr<DeviceName> ParseDeviceName(std::string_view text);

// The task id used throughout tfdiag: "ps:1", "worker:0"; "ps:1@r2" when replica != 0.
std::string TaskLabel(std::string_view job, int replica, int task);

}  // namespace tfdiag
