// Scenario simulator: writes synthetic but realistic TensorFlow PS/worker timelines, each showing
// exactly one known bottleneck (or none), plus the findings a correct diagnosis must produce.
//
// Output is either a TF1 timeline (what tensorflow/python/client/timeline.py
// generate_chrome_trace_format() writes: integer microsecond ts/dur, args with name/op/inputN)
// or a TF2 trace-viewer JSON (fractional microseconds, every args value a string, trailing {}).
// Both carry the top-level key "tfdiagGroundTruth" (see WriteScenario).
// The writer streams: memory use does not grow with `steps`, so 1 GB files are fine.
// Thread-safety: all functions are reentrant; distinct calls may run concurrently.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace tfdiag::sim {

// Flavour of the generated trace file.
enum class TraceFormat {
  kTf1,  // TF1 timeline.py Chrome trace: integer microseconds since the epoch
  kTf2,  // TF2 profiler trace-viewer JSON: fractional microseconds (3 decimals), string args
  // The TF2 profiler's XSpace: `path` ending in .xplane.pb is one file whose planes are named by
  // full device names ("/job:ps/replica:0/task:0/device:CPU:0"); any other `path` is a log
  // directory, path/plugins/profile/<run>/<job>-<index>.xplane.pb per task (Kubeflow pod names),
  // the task's CPU:0 as "/host:CPU". Ops are events named "<node>:<type>". No ground truth key.
  kXPlane,
  // The TF 2.2+ trace-viewer JSON (what TensorBoard's trace viewer loads): `path` is a log
  // directory, path/plugins/profile/<run>/<job>-<index>.trace.json.gz per task, each the JSON
  // TensorFlow's profiler makes of kXPlane's XSpace of that task (markers, derived rows such as
  // a GPU's TensorFlow Ops, every args value a string, a trailing {}). No ground truth key.
  kTraceJson,
  // A TF1 RunMetadata (binary): per-device node_stats with timeline_label as TF writes them,
  // RecvTensor labels "[<N>B] edge_<id>_<node> from <src> to <dst>". No ground truth key.
  kRunMetadata,
};

// What to simulate. Every -1 field takes the scenario's default.
struct ScenarioParams {
  std::string scenario = "balanced";  // one of ScenarioNames()
  int ps = -1;                        // number of PS tasks
  int workers = -1;                   // number of worker tasks
  int steps = 10;                     // training steps per worker (>= 1)
  TraceFormat format = TraceFormat::kTf1;
  bool pretty = false;  // json.dumps(indent=4, separators=(',', ': ')) layout, as TF's pretty=True
  bool gzip = false;    // gzip-compress the output stream
  // XSpace and trace-json only: workers run as TF2 training functions do, without the TF1
  // executor's _SOURCE ops, each step marked by a Keras-style `train` TraceMe (`_r`=1,
  // `step_num`), so their steps are the marked groups, beside the tf.data function runs.
  bool tf2_steps = false;
  // Each worker task has a GPU beside its CPU ("/job:worker/.../device:GPU:0") running the dense
  // layers' MatMuls, its executor's _SOURCE about 1 ms after the CPU's, as a CPU+GPU task's
  // partitions start in a TF1 timeline.
  bool worker_gpu = false;
  // > 0: what ProfilerHook(save_steps=N) leaves, one file per captured step, each
  // `profiler_hook_minutes` minutes after the last: `path` is a directory and step k (1-based)
  // of the job (every worker's k-th step and what the PS run for it) is written to
  // path/timeline-<k>.json (kTf1, kTf2; .json.gz with gzip) or path/step-<k>.xplane.pb (kXPlane,
  // one XSpace). Step k is simulated with seed + k - 1.
  int profiler_hook_minutes = 0;
  // Log directories (kXPlane to a directory, kTraceJson): beside each task's trace, the files
  // TF 2.2-2.3's profiler also saved for TensorBoard's tools (xplane_to_tools_data, TF 2.2-2.3
  // save_profile.cc): <task>.overview_page.pb, .input_pipeline.pb, .tensorflow_stats.pb,
  // .kernel_stats.pb, .memory_profile.json.gz in the run directory, and an empty events file
  // `events.out.tfevents.<time>.<task>.profile-empty` in the log directory. Their contents are
  // placeholders (a short message; tfdiag skips these files by name, never reads them).
  bool tool_files = false;
  // XSpace and trace-json: timestamps on the profiling session's own clock, starting near zero
  // (1 ms), as TF 2.4+'s profiler writes them, instead of the Unix epoch.
  bool session_clock = false;
  // XSpace and trace-json with tf2_steps: each worker host also has a GPU tracer plane
  // ("/device:GPU:0") whose compute stream runs each step from 1 ms after the host's step marker
  // starts to this many ns past its end (an asynchronous GPU whose last kernel outlives the host
  // step), with the derived "Steps" row TF draws from the step's first to its last device
  // activity. 0: none. The fixture of XProf's step time on GPUs (tests/tf2_device_tail_test.cc).
  int64_t device_tail_ns = 0;
  // XSpace and trace-json: each cross-device RecvTensor carries its rendezvous key (a
  // `rendezvous_key` stat, "<src device>;<incarnation>;<dst device>;<tensor>;0:0"), from which
  // tfdiag ties TF2 transfers to their sending task (collectors/xplane/tf2_events.h). Off by
  // default: a transfer costs the analysis ~70 bytes (a 141 MB XSpace: 53 -> 133 MB peak).
  bool rendezvous_keys = false;
  uint64_t seed = 1;            // same params and seed => byte-identical output
  int64_t embedding_rows = -1;  // rows of the embedding table (sparse scenarios only)
  int64_t embedding_dim = -1;   // floats per embedding row (sparse scenarios only)
  int dense_layers = -1;        // hidden dense layers (>= 1)
  // Threads each PS task runs its ops on (TF's inter-op pool): a PS serves the ops it receives
  // in arrival order, a free thread never idling while an op waits. 0: unbounded (a PS op never
  // waits for its PS); -1: the scenario's (hot-ps: 1, others: 0). At most 256.
  int ps_threads = -1;
};

// Names of all scenarios, in a stable order ("balanced" first).
std::vector<std::string> ScenarioNames();

// One-line description of a scenario; empty if `name` is unknown.
std::string ScenarioDescription(const std::string& name);

// Simulates `p` and writes the trace to `path` atomically ("-" = stdout). The top-level key
// "tfdiagGroundTruth" holds {"scenario","format","ps","workers","steps","seed",
// "embedding_rows","embedding_dim","dense_layers","show_memory","expect":[{"rule","subject"
// [,"variable"]}]}. Errors: kUsage for an unknown scenario or out-of-range parameters, kIo when
// the file cannot be written.
Status WriteScenario(const ScenarioParams& p, const std::string& path);

}  // namespace tfdiag::sim
