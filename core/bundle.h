// The bundle: a Capture recorded live by `tfdiag attach`, on disk as versioned JSON
// (schema "tfdiag.bundle/1"), written atomically. `tfdiag analyze` reads bundles next to
// timelines. Layout (all times ns since the Unix epoch, CPU times ns, counters cumulative,
// -1 unknown):
//   {"schema":"tfdiag.bundle/1", "tool":{"name","version"},
//    "meta":{"host","kernel","window_start_ns","window_end_ns","interval_ms","warnings":[...]},
//    "tasks":[{"job","replica","index"}],
//    "processes":[{"task":"ps:0","pid","pod","pod_uid","container","qos","cgroup","cpuset",
//                  "cpu_limit","quota_us","period_us","cpuset_cpus","host_cpus",
//                  "first_ns","last_ns","exited"}],
//    "process_sample_columns":[...], "process_samples":[[...], ...],   (row per sample)
//    "thread_sample_columns":[...],  "thread_samples":[[...], ...],
//    (eBPF, optional: "meta.probes", and)
//    "traffic_columns":[...], "traffic":[[ts,process,local,peer,peer_task,hdfs,sent,received]],
//    "sched_columns":[...],   "sched":[[ts,process,vol,invol,oncpu_ns,wait_ns,waits,[32 slots]]],
//    (tasks exporting a step counter, optional: "processes[].step_source", and)
//    "step_count_columns":["ts_ns","process","steps"], "step_counts":[[ts,process,steps]]}
// The reader streams the file (core/bundle_stream.h): the head (all but the sample rows) as a
// DOM, then the rows one at a time into the builder, so its memory is the head plus one row and
// a 64 KiB buffer, not the file; a file over 256 MiB is still refused by its size before it is
// read (kInvalidInput naming the size and the limit), since the Capture keeps every sample.
// Thread-safety: reentrant.
#pragma once

#include <string>
#include <string_view>

#include "core/capture.h"
#include "core/capture_builder.h"
#include "core/status.h"

namespace tfdiag {

constexpr std::string_view kBundleSchema = "tfdiag.bundle/1";

// Serialises the live part of `c` (tasks, processes, samples, meta). Pure.
std::string BundleJson(const Capture& c);
// Writes BundleJson(c) to `path` atomically. Errors: kIo.
Status WriteBundle(const Capture& c, const std::string& path);

// True when the first bytes of `head` (the start of a file) declare a tfdiag bundle.
bool LooksLikeBundle(std::string_view head);
// Reads a bundle into `builder`. Errors: kInvalidInput "<file>: <field>: <what was expected>"
// (or the byte offset of a JSON syntax error), kIo.
Status ReadBundle(const std::string& path, CaptureBuilder* builder);

}  // namespace tfdiag
