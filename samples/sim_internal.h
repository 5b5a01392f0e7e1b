// Internal pieces of the scenario simulator (samples/simulator.h): the resolved scenario
// configuration, the simulated cluster's devices and variables, per-op output templates and the
// per-worker step plans the scheduler replays every step. Not part of the public API.
// Times are int64 nanoseconds unless a name says otherwise; sizes are bytes.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "samples/simulator.h"

namespace tfdiag::sim::internal {

// How dense (non-embedding) variables are spread over the PS tasks.
enum class Placement {
  kGreedy,      // least estimated load first (GreedyLoadBalancingStrategy): balanced PS
  kRoundRobin,  // replica_device_setter default, in variable creation order
  kIdle,        // big variables on the first `busy_ps` PS, one tiny variable on each other PS
};

// Optimizer applied to the embedding table.
enum class EmbeddingOptimizer { kSparseAdagrad, kDenseAdam };

// A scenario with all defaults and parameters resolved.
struct Config {
  std::string scenario;
  int ps = 2, workers = 8, steps = 10;
  TraceFormat format = TraceFormat::kTf1;
  bool pretty = false, gzip = false;
  bool tf2_steps = false;        // ScenarioParams::tf2_steps
  bool worker_gpu = false;       // ScenarioParams::worker_gpu
  bool tool_files = false;       // ScenarioParams::tool_files
  bool session_clock = false;    // ScenarioParams::session_clock
  bool rendezvous_keys = false;  // ScenarioParams::rendezvous_keys
  int64_t device_tail_ns = 0;    // ScenarioParams::device_tail_ns
  int64_t epoch_offset_ns = 0;   // added to every timestamp (ProfilerHook captures, later files)
  uint64_t seed = 1;
  bool sparse = true;    // model has an embedding table gathered by ids
  int64_t emb_rows = 0;  // embedding table rows (0 for dense models)
  int64_t emb_dim = 0;   // floats per row
  int emb_parts = 1;     // fixed_size_partitioner shards (1 = unpartitioned)
  EmbeddingOptimizer emb_opt = EmbeddingOptimizer::kSparseAdagrad;
  bool gather_on_worker = false;  // tf.gather on the worker instead of embedding_lookup
  int dense_layers = 3;
  int64_t dense_width = 256;  // width of the first hidden layer
  bool taper = true;          // halve the width every layer (min 16)
  int64_t dense_input = 512;  // feature width of a dense model's input
  int kernel_parts = 1;       // partitions per dense kernel (oversharding: 32)
  Placement placement = Placement::kGreedy;
  int busy_ps = 0;  // Placement::kIdle: PS that host the real load
  bool sync_replicas = false;
  double ign_frac = 0.02;  // IteratorGetNext share of a worker step
  int straggler = -1;      // worker task that is slow, -1 none
  double straggler_factor = 1.0;
  bool ps_gpu = false;          // PS devices are GPUs
  bool show_memory = false;     // emit N/O/D tensor events with snapshots
  int64_t batch = 512;          // examples per worker step
  int64_t ids_per_example = 8;  // embedding ids per example
  double step_ms = 100;         // target worker step time
  // Threads each PS task serves its ops on (ScenarioParams::ps_threads); 0: unbounded (an op
  // never waits for its PS). With N > 0 a PS is a work-conserving FIFO server: ops queue in the
  // order they arrive (their inputs ready) and a free thread takes the oldest, so a PS loaded
  // past its N threads stretches every worker's step (hot-ps: 1, for sweeps).
  int ps_threads = 0;
};

// One expected finding of the ground truth.
struct Expectation {
  std::string rule, subject, variable;  // variable may be empty
};

// Resolves defaults and validates parameters. Errors: kUsage.
StatusOr<Config> ResolveConfig(const ScenarioParams& p);
// The findings a correct analysis of `c` reports.
std::vector<Expectation> ExpectedFindings(const Config& c);
// The compact JSON object stored under "tfdiagGroundTruth".
std::string GroundTruthJson(const Config& c);

// A traced device: one "Compute" and one "Tensors" pid in the trace.
struct Device {
  std::string name;  // e.g. "/job:ps/replica:0/task:0/device:CPU:0"
  bool ps = false;   // job ps (else worker)
  int task = 0;
  bool stream = false;    // GPU ".../stream:all" tracing device (kernel and memcpy records)
  int pid = 0;            // "<name> Compute"
  int tensors_pid = 0;    // "<name> Tensors"
  std::string allocator;  // "cpu" or "GPU_0_bfc"
  int threads = 0;        // ops served at once, in arrival order (Config::ps_threads); 0: all
  bool gpu = false;       // a worker's GPU compute device (Config::worker_gpu)
};

// An output tensor of an op, for show_memory.
struct TensorShape {
  std::string dtype = "DT_FLOAT";
  std::vector<int64_t> dims;
  int elem_bytes = 4;
};

// One op instance on one device with all text it prints pre-rendered for the chosen format:
// an X event is head + <tid> + ",\"ts\":" + <ts> + mid + <dur> + tail.
struct OpTemplate {
  int device = 0;
  std::string node;  // node name (args.name)
  std::string head, mid, tail;
  std::string flow_name;  // JSON-escaped tensor name for DataFlow arrows
  // For the protobuf formats (proto_writer.cc): the op as written, not rendered.
  std::string type;
  std::vector<std::string> inputs;
  bool gputrace = false;
  int64_t recv_bytes = -1;  // RecvTensor: bytes, the producer's device and the edge name
  int recv_src = -1;
  std::string recv_edge;
  struct Mem {
    std::string head;      // ,"cat":"Tensor","name":..,"pid":..,"tid":0,"ts":
    std::string snapshot;  // "args" object of the O event
  };
  std::vector<Mem> mem;  // one per output tensor (show_memory only)
  // RunMetadata: each output's requested bytes (NodeExecStats.output; show_memory only, as the
  // timeline of the same job has them) and the device's allocator.
  std::vector<int64_t> output_bytes;
  std::string allocator;
};

// Duration model of a plan op. Duration = (base_ns + weight * compute_scale + step_frac * T)
// times (1 +- jitter); start = max(end of deps, step start) + latency_ns (+- 30%).
struct Cost {
  int64_t base_ns = 0;
  double weight = 0;     // compute work (roughly FLOPs); scaled so the step lasts T
  double step_frac = 0;  // share of the worker's target step time T
  int64_t latency_ns = 0;
  float jitter = 0.08f;
};

// One op of a worker step (on the worker or on a PS serving it).
struct PlanOp {
  int tmpl = 0;
  Cost cost;
  int dep_begin = 0, dep_end = 0;  // range in StepPlan::deps (indices of earlier ops)
  int flow_from = -1;              // producer op index for a DataFlow arrow, -1 none
};

// Everything one worker's step executes, in topological order.
struct StepPlan {
  int worker = 0;
  std::vector<PlanOp> ops;
  std::vector<int> deps;
  double total_weight = 0;  // sum of compute weights
  int64_t step_ns = 0;      // target step time T of this worker
};

// The simulated job, ready to be replayed.
struct Model {
  Config cfg;
  std::vector<Device> devices;
  std::vector<OpTemplate> templates;
  std::vector<StepPlan> plans;  // one per worker
};

// Builds devices, variables, templates and step plans for `c`.
Model BuildModel(const Config& c);

// Renders the template of op `type`/`node` on device `d` (index `device`) for `c.format`.
// `gputrace` ops (stream devices) carry only name and op in args, like timeline.py's
// _parse_kernel_label. `outputs` get tensor events when c.show_memory.
OpTemplate RenderOp(const Config& c, const Device& d, int device, std::string_view type,
                    std::string_view node, const std::vector<std::string>& inputs,
                    const std::vector<TensorShape>& outputs, bool gputrace);

// JSON string escaping (without the quotes).
std::string JsonEscape(std::string_view s);

// Re-indents compact JSON the way Python's json.dumps(indent=4, separators=(',', ': ')) lays it
// out. Streaming: input may be split anywhere, state carries over between Feed calls.
class PrettyPrinter {
 public:
  // Appends the pretty form of `in` to `out`.
  void Feed(std::string_view in, std::string& out);

 private:
  int depth_ = 0;
  bool in_string_ = false, escape_ = false, pending_open_ = false;
};

// Buffered output stream of a trace: compact JSON is appended to buf() and flushed every ~1 MB,
// optionally re-indented (pretty) and gzip-compressed, into an AtomicFile.
class OutputSink {
 public:
  OutputSink();
  ~OutputSink();
  OutputSink(const OutputSink&) = delete;
  OutputSink& operator=(const OutputSink&) = delete;

  // Opens `path` ("-" = stdout). Errors: kIo.
  Status Open(const std::string& path, bool pretty, bool gzip);
  // The buffer to append compact JSON to.
  std::string& buf() { return buf_; }
  // Flushes when the buffer holds more than ~1 MB. Errors: kIo.
  Status MaybeFlush() { return buf_.size() >= kFlushBytes ? Flush(false) : OkStatus(); }
  // Flushes everything, ends the gzip stream and commits the file. Errors: kIo.
  Status Finish();

 private:
  static constexpr size_t kFlushBytes = 1 << 20;
  Status Flush(bool finish);
  Status Deflate(std::string_view data, bool finish);

  struct Impl;  // the AtomicFile and zlib state
  std::unique_ptr<Impl> impl_;
  std::string buf_, pretty_buf_;
  bool pretty_ = false, gzip_ = false;
  PrettyPrinter printer_;
};

// The protobuf formats' writer (samples/proto_writer.cc): receives every op instance in the
// order the scheduler writes them (per device in start order, devices interleaved).
class ProtoSink {
 public:
  virtual ~ProtoSink() = default;
  // One op of template `t`; times in ns (RunMetadata keeps microseconds, as TF1 does); `lane` is
  // the timeline lane (thread_id / XLine id); `step` numbers the worker step the op belongs to
  // (XSpace: the event's group_id stat, as TF2's profiler groups a step's events).
  virtual Status Event(const OpTemplate& t, int64_t start_ns, int64_t end_ns, int lane,
                       int64_t step) = 0;
  // Writes what is buffered and commits the file(s). Errors: kIo.
  virtual Status Finish() = 0;
};
// Opens the sink for m.cfg.format (kXPlane, kTraceJson: an XSpace; kRunMetadata) at `path`.
// Errors: kIo, kUsage.
StatusOr<std::unique_ptr<ProtoSink>> OpenProtoSink(const Model& m, const std::string& path);
// The TF 2.2+ trace-viewer JSON of an XSpace file (trace_json_writer.cc); gzip when `json_path`
// ends in .gz. Errors: kIo.
Status XSpaceToTraceJson(const std::string& xplane_path, const std::string& json_path);
// Replaces each <host>.xplane.pb of the simulator's log directory `dir` by <host>.trace.json.gz.
Status ConvertLogDirToTraceJson(const std::string& dir);

// Writes the profiler's tool files of every task of `m` into the simulator's log directory `dir`
// (ScenarioParams::tool_files). Errors: kIo.
Status WriteToolFiles(const Model& m, const std::string& dir);

// The GPU tracer plane of ScenarioParams::device_tail_ns (device_tail.cc), serialized, for a
// worker host whose step markers span `host_steps` (step -> [start, end) ns): plane `id`
// "/device:GPU:0",
// per step two kernels on "Stream #1(Compute)" from start + 1 ms to end + `tail_ns`, their
// "TensorFlow Ops" row, and one "Steps" event spanning them (stat group_id = the step, metadata
// id `group_stat`).
std::string DeviceTailPlane(const std::map<int64_t, std::pair<int64_t, int64_t>>& host_steps,
                            int64_t tail_ns, int64_t id, int64_t group_stat);

// Streams the trace of `m` to `path` (see WriteScenario). Errors: kIo.
Status WriteModel(const Model& m, const std::string& path);

}  // namespace tfdiag::sim::internal
