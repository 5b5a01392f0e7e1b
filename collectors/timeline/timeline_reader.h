// Reading TensorFlow timelines into a CaptureBuilder.
//
// Formats (Chrome Trace Event Format,
// https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU):
//  - the object form {"traceEvents":[...], ...} and the bare array form [...], whose closing
//    bracket may be missing (and a trailing comma present), as Horovod writes it;
//  - TF1 Timeline JSON (tensorflow/python/client/timeline.py, generate_chrome_trace_format):
//    integer-microsecond ts/dur, "<device> Compute|Tensors" process names, args.name/op/inputN,
//    DataFlow s/t arrows, N/O/D tensor snapshots with requested_bytes (show_memory=True);
//  - TF2 trace-viewer JSON: displayTimeUnit, fractional-microsecond ts/dur, every args value a
//    string, a trailing {} event. When its processes are an XSpace's planes ("/host:CPU",
//    "/device:GPU:0"; TF's xplane_to_trace_events.cc), its X events are read at the end of the
//    file with the XSpace's rules (collectors/xplane/tf2_events.h): TF ops by name or
//    args.long_name "<node>:<type>", TraceMe markers and derived rows (TensorFlow Ops, Steps, ...)
//    not ops, stream kernels typed by their TF op, steps from the step groups; the host's task
//    from the file name (TimelineReadOptions::hosts, collectors/xplane/host_tasks.h). Such a
//    file is read by one thread (a chunked import gives way);
//  - X events and B/E pairs; plain or gzip (detected by magic bytes).
// The file is streamed through a SAX tokenizer (collectors/timeline/fast_json.h) that gives up on
// anything but plain JSON, and then through a RapidJSON SAX Reader, which is the reference for
// every error message and the lenient cases; no DOM of the file is ever built.
//
// Errors: a file-level fault returns kInvalidInput "<file>: byte <N>: <what was expected>" (the
// offset counts decompressed bytes for gzip input); the builder may then hold partial rows and
// must be discarded. A single malformed event is skipped and counted in ImportStats::skipped.
// Thread-safety: ReadTimeline may run concurrently on different builders.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "collectors/xplane/host_tasks.h"
#include "core/capture_builder.h"
#include "core/status.h"

namespace tfdiag {

struct TimelineReadOptions {
  // Called as the file is consumed: (bytes of the file read, file size in bytes).
  std::function<void(int64_t, int64_t)> progress;
  // Threads for one plain file of at least 16 MiB (collectors/timeline/parallel_import.h) or one
  // gzip file (collectors/timeline/gzip_import.h); the result is the same whatever the count.
  int threads = 1;
  // Try the fast tokenizer first (the result is the same; tests compare both paths).
  bool fast_path = true;
  // gzip input with threads > 1: inflated bytes per chunk of the parallel import
  // (collectors/timeline/gzip_import.h); 0 = 2 MiB, and files under 2 MiB compressed are read
  // sequentially. A value > 0 also applies the parallel import to small files (for tests).
  size_t chunk_bytes = 0;
  // A TF2 trace-viewer JSON's host: mapped to a TF task by this mapper (the same one as the
  // load's XSpaces, collectors/xplane/host_tasks.h; nullptr: one without a cluster spec), with a
  // line for `notes` when set.
  HostMapper* hosts = nullptr;
  std::vector<std::string>* notes = nullptr;
  // A TF2 trace-viewer JSON's profiling session's wall time, ns since the epoch: added to its
  // events' times when they are on the session's own clock (OnWallClock, tf2_events.h), as the
  // XSpace reader does. 0: none.
  int64_t session_wall_ns = 0;
};

// A TF2 trace-viewer file's name gives its host's task ("worker-3.trace.json.gz"): kInvalidInput
// naming the file when that task index is out of range (as the XSpace reader refuses it); OK for
// any other name. Every way a timeline is read calls it first (ReadTimeline, the parallel pool).
Status CheckTraceJsonHostName(const std::string& path);

// Streams one timeline file into `builder`, appending a FileStats entry.
Status ReadTimeline(const std::string& path, CaptureBuilder* builder,
                    const TimelineReadOptions& options = {});

// The start (ns) of the first complete event (ph "X" with a numeric ts, in microseconds) of a
// Chrome trace JSON file, plain or gzip, reading no further than that event (at most the first
// `max_bytes` of the decompressed stream): enough to tell which profiling session a TF2
// trace-viewer JSON comes from without reading it. nullopt when no such event comes first
// (none, a malformed file, or past `max_bytes`). Errors: kIo when the file cannot be opened.
StatusOr<std::optional<int64_t>> FirstCompleteEventNs(const std::string& path,
                                                      size_t max_bytes = size_t{64} << 20);

// Parses a JSON number's text as microseconds into nanoseconds, exactly for up to three
// fractional digits ("1578906108771153", "12.250", "1e3"). Returns false if not a number.
bool ParseMicrosAsNanos(std::string_view text, int64_t* ns);

// Extracts requested_bytes from a TF tensor_description text proto; -1 when absent.
int64_t RequestedBytesFromDescription(std::string_view description);

}  // namespace tfdiag
