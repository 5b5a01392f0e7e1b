// The viewer's background loader and the read-only snapshot it produces.
//
// A Loader runs `tfdiag analyze`'s pipeline (AnalyzeInputs(), pipeline/pipeline.h: manifests,
// TF_CONFIG, LoadInputs(), Analyze() with the built-in rule set) on its own thread and builds the
// timeline index the UI draws from. The UI thread polls Progress() each
// frame and, once Done(), takes the finished Snapshot: it never waits on I/O.
// Thread-safety: Loader's public methods may be called from one thread (the UI thread) while the
// worker runs; a Snapshot is immutable once handed over and may be read from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "analyzers/analysis.h"
#include "analyzers/scaling.h"
#include "core/capture.h"
#include "core/k8s_deployment.h"
#include "core/status.h"

namespace tfdiag::view {

// How an op is drawn in the timeline.
enum class OpKind : uint8_t {
  kCompute,  // MatMul, GatherV2, ... (everything not below)
  kComm,     // RecvTensor, _Send/_Recv, collectives, memcpy: moving tensors
  kInput,    // IteratorGetNext, ReaderRead*, input QueueDequeue*: waiting for training data
  kApply,    // Apply*/SparseApply*/Resource*Apply*: optimizer updates
  kOther,    // bookkeeping: NoOp, _SOURCE, Identity, Const, variables, ...
  kCount,
};
std::string_view OpKindName(OpKind kind);
// Classifies an op by its type (args.op) and node name (args.name).
OpKind ClassifyOp(std::string_view type, std::string_view name);

// One drawn row of the timeline: the ops of one lane (tid) of one device, as the half-open range
// [begin, end) of TimelineIndex::order and ::max_end.
struct TimelineRow {
  uint32_t task = 0;    // index into Capture::tasks
  uint32_t device = 0;  // index into Capture::devices
  uint16_t lane = 0;
  uint32_t begin = 0, end = 0;
};

// The timeline's draw index. Rows are grouped by task (PS first, Capture::tasks order), then
// device, then lane. Within a row ops are in start order, and max_end[i] is the largest op end
// (ns) over the row's ops up to i: it is non-decreasing, so the first op that can reach a time t
// is found by binary search even when ops nest or overlap.
struct TimelineIndex {
  std::vector<TimelineRow> rows;
  std::vector<uint32_t> order;      // op indices into Capture::ops, row by row
  std::vector<TimeNs> max_end;      // prefix max of op end within each row, parallel to order
  std::vector<OpKind> kinds;        // per op (Capture::ops order)
  std::vector<uint32_t> task_rows;  // per task: index of its first row (rows.size() if none)
};

// Builds the index. O(ops log lanes).
TimelineIndex BuildTimelineIndex(const Capture& c);

// Everything the UI shows. Immutable once built.
struct Snapshot {
  std::vector<std::string> paths;
  Capture capture;
  // The manifests' objects and pods (null when none was given): analysis.k8s points here.
  std::shared_ptr<const K8sDeployment> k8s;
  AnalysisResult analysis;  // with the measured bytes and run-queue figures the rules used
  TimelineIndex timeline;
  double load_seconds = 0;  // reading + analysis + indexing, wall clock
  // --scaling: the runs compared (analyzers/scaling.h), one per path, each loaded and analyzed
  // on its own; `capture` is then empty and `analysis.findings` holds the scaling-limit
  // findings. Null when the paths were merged into one capture.
  std::shared_ptr<const ScalingResult> scaling;
  double saturation_pct = 90;  // the rule's saturation_pct: PS busy shares at or above it are hot
};

// What the loader is doing, for the progress bar.
struct LoadProgress {
  enum Phase { kReading, kAnalyzing, kIndexing, kDone, kFailed } phase = kReading;
  size_t file = 0, files = 0;               // file being read (0-based) and how many
  int64_t bytes_done = 0, bytes_total = 0;  // of the file being read
  double Fraction() const;                  // overall, in [0, 1]
  const char* PhaseName() const;
};

// What to load, as the command line gave it.
struct LoadRequest {
  std::vector<std::string> paths;  // timelines, bundles, profiles, log directories, manifests
  std::vector<std::string> names;  // the paths as the user gave them (empty: the paths)
  int threads = 0;                 // parser threads per large timeline (0: one per core)
  // Each path is one run of a job (a file or a directory of the run's files, as for `tfdiag
  // scaling`), compared as runs (Snapshot::scaling) instead of merged; needs 2 paths.
  bool scaling = false;
  std::string run;        // --run: the profile run of a TensorBoard log directory (empty: latest)
  std::string tf_config;  // --tf-config FILE|JSON: hosts of profile files -> TF tasks
};

// Loads a request on a background thread. Kubernetes manifests and pod lists among the paths map
// profiled hosts to tasks and feed the k8s rules, as in `tfdiag analyze`. The thread owns a
// shared state, so destroying a Loader whose thread still reads (the window was closed mid-load)
// detaches it instead of waiting.
class Loader {
 public:
  // Starts loading at once.
  explicit Loader(LoadRequest request);
  ~Loader();
  Loader(const Loader&) = delete;
  Loader& operator=(const Loader&) = delete;

  LoadProgress Progress() const;
  // True once the snapshot (or the error) is ready.
  bool Done() const;
  // The finished snapshot, or nullptr while loading or after a failure. Never blocks.
  std::shared_ptr<const Snapshot> snapshot() const;
  // The load error (OK while loading or after success).
  Status error() const;

 private:
  struct State;
  // The worker: everything slow happens here, never on the UI thread.
  static void Run(std::shared_ptr<State> st, LoadRequest rq);
  // The worker of a --scaling load.
  static void RunScaling(std::shared_ptr<State> st, LoadRequest rq);

  std::shared_ptr<State> state_;
  std::thread thread_;
};

}  // namespace tfdiag::view
