// Readers of the TF2 profiler's protobuf files into a CaptureBuilder, producing the same rows the
// timeline reader produces for the same run:
//   - XSpace (`<logdir>/plugins/profile/<run>/<host>.xplane.pb`, written by
//     tf.profiler.experimental.start/stop, tf.profiler.experimental.client.trace and the Keras
//     TensorBoard callback's profile_batch), schema in xplane.proto;
//   - Trace (`<host>.trace`, TF 2.0-2.1's profiler), schema in trace.proto.
// Thread-safety: reentrant; one builder per call.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "collectors/xplane/host_tasks.h"
#include "collectors/xplane/tf2_events.h"
#include "core/capture_builder.h"
#include "core/status.h"

namespace tfdiag {

struct ProfileReadOptions {
  // Maps the file's host (from its name) to a TF task; nullptr: a mapper without a cluster spec.
  HostMapper* hosts = nullptr;
  // Receives one line per host mapped ("<file>: host 'h' read as worker:0 (pod name)").
  std::vector<std::string>* notes = nullptr;
  // The wall time of the file's profiling session (log_dir.h SessionOfHostFile), ns since the
  // epoch: added to timestamps on the session's own clock (OnWallClock, tf2_events.h); 0: none.
  int64_t session_wall_ns = 0;
  // (bytes read, file size), after each plane.
  std::function<void(int64_t, int64_t)> progress;
};

// Reads an XSpace, XSpace.planes one at a time off a CodedInputStream, each plane's metadata
// parsed whole and its events decoded one at a time (xline_stream.h) (peak memory: the largest
// plane's metadata, plus the rows added; a GPU plane's kernels are held until its TensorFlow Ops
// row is read). What an event means is decided in tf2_events.h (shared with the TF2 trace-viewer
// JSON reader). Per plane:
//   "/host:CPU" (the host's TF task, see host_tasks.h) and "/job:..." planes: events named
//   "<node>:<op type>" (ParseTfOpName) are TF ops, one lane per XLine; events named RecvTensor /
//   SendTensor are ops of that type (PS traffic of ParameterServerStrategy); other events are
//   counted in stats().ignored. Steps: the `group_id` groups that are steps by
//   Tf2StepGroups::TakeSteps (a GPU's derived Steps line, else step markers, else every group but
//   tf.data function runs), over all planes of the task (unless the file runs `_SOURCE` ops, then
//   the timeline's recovery applies).
//   "/device:GPU:N" (the host's task): kernels and memcpys of each "Stream #S(...)" line become
//   ops on the sub-device ".../device:GPU:N/stream:S"; a kernel is typed and named by its TF op
//   (Tf2KernelTies: `tf_op` stat, launch correlation_id, TensorFlow Ops row), else type "unknown"
//   (FileStats::kernels, kernels_untied count them); memcpys keep their type. The derived lines
//   "TensorFlow Ops" and "Steps" are read for that, never as ops; other derived lines and other
//   planes are counted as ignored.
// Times: XLine.timestamp_ns + XEvent.offset_ps / 1000 (ns), moved by options.session_wall_ns when
// before kSessionClockNs (OnWallClock).
// Errors (kInvalidInput): "<file>: byte <N>: <what was expected>" for a truncated or corrupt
// file; kIo when it cannot be read.
Status ReadXSpace(const std::string& path, CaptureBuilder* builder,
                  const ProfileReadOptions& options = {});

// Reads a TF 2.0-2.1 Trace: events whose `label` arg names a device ("...,device=/job:...,...")
// are ops of type <event name> on that device (eager op execution); the rest are counted as
// ignored. Times: timestamp_ps / 1000 since tracing started, plus options.session_wall_ns. Errors
// as ReadXSpace.
Status ReadProfilerTrace(const std::string& path, CaptureBuilder* builder,
                         const ProfileReadOptions& options = {});

}  // namespace tfdiag
