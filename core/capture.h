// Capture: the immutable, in-memory model of one profiled run, built by CaptureBuilder from any
// mix of timelines (and, later, live bundles). Analyzers read it; nothing writes it after
// CaptureBuilder::Finish().
//
// Time is int64 nanoseconds in one clock domain (TF1 timelines: microseconds since the Unix
// epoch, converted once at import). Rows are compact structs with interned strings (StrId).
// Thread-safety: immutable after construction; safe for concurrent readers.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/default_init_allocator.h"
#include "core/device_name.h"
#include "core/horovod_stats.h"
#include "core/op_store.h"
#include "core/string_pool.h"

namespace tfdiag {

constexpr uint32_t kNoIndex = UINT32_MAX;

namespace capture_finish {
struct InputIndex;  // core/partition_inputs.h
}  // namespace capture_finish

// A TF task: one process of the cluster, e.g. ps:1 or worker:0.
struct TaskRow {
  StrId job = 0;    // "ps", "worker", "localhost"
  StrId label = 0;  // "ps:1"
  int32_t replica = 0;
  int32_t index = 0;
  JobKind kind = JobKind::kOther;
};

// A device of a task; GPU tracer sub-devices (stream:12, memcpy) are devices of their own.
struct DeviceRow {
  uint32_t task = 0;  // index into Capture::tasks
  StrId name = 0;     // canonical name, DeviceName::Canonical()
  StrId type = 0;     // "CPU", "GPU"
  int32_t index = 0;
  StrId sub = 0;  // "stream:12", "memcpy", ""
};

// A TF node as its ops ran: name, type and inputs, shared by every op of the node (a node runs
// once per step, with the same type and inputs each time). Capture::nodes holds each distinct
// (name, inputs, type) once, sorted in that order (ids compare like the rows).
struct NodeRow {
  StrId name = 0;             // node name, e.g. "dense/MatMul" (args.name)
  StrId type = 0;             // op type, e.g. "MatMul" (args.op)
  uint32_t inputs_begin = 0;  // index into Capture::inputs
  uint32_t inputs_count = 0;  // at most kMaxOpInputs
};

// A DataFlow arrow (s -> t pair with the same id) between two ops' devices.
struct FlowRow {
  TimeNs src_ts = 0, dst_ts = 0;  // ns
  uint32_t src_device = 0, dst_device = 0;
  StrId name = 0;  // tensor name
};

// A tensor size from a show_memory snapshot (`O` event, requested_bytes).
struct TensorRow {
  StrId name = 0;  // "w/read" (output 0) or "split:1"
  uint32_t device = 0;
  int64_t bytes = 0;  // requested_bytes
};

// One step of one task, [start, end] in ns (start <= end), recovered as described in
// CaptureBuilder::Finish() or marked by the input. Its task and 0-based index are where it sits
// in Capture::steps (Capture::task_steps): 16 bytes, since a 1 GB XSpace holds millions.
struct StepRow {
  TimeNs start = 0, end = 0;
};
static_assert(sizeof(StepRow) == 16, "README and bench/README count 16 bytes per step");

// The steps of one task in index order (so in start order; a step may overlap the next: an op
// that starts before the next _SOURCE can end after it, and marked steps are as marked): a view
// into Capture::steps, valid while the Capture is.
struct StepRange {
  const StepRow* first = nullptr;
  const StepRow* last = nullptr;
  const StepRow* begin() const { return first; }
  const StepRow* end() const { return last; }
  size_t size() const { return static_cast<size_t>(last - first); }
  bool empty() const { return first == last; }
  const StepRow& operator[](size_t i) const { return first[i]; }
};

// Where one step's time went, in XProf's categories (the input-pipeline analyzer's
// PerGenericStepDetails, openxla/xprof plugin/xprof/protobuf/input_pipeline.proto; event types and
// their priorities in xprof/utils/event_span.h). Each instant of the step counts once, for the
// highest-priority event type that covers it; time no event covers is `other` (XProf's "All
// others", unknown_time). Sum of the categories == step_ns. Made by the TF2 readers
// (collectors/xplane/step_breakdown.h) for steps they mark; ns.
enum class StepCategory : uint8_t {
  kInput,              // host waits for the tf.data iterator (HOST_WAIT_INPUT)
  kHostToDevice,       // host-to-device copies (HOST_TO_DEVICE, DEVICE_WAIT_HOST)
  kKernelLaunch,       // host prepares device work (HOST_PREPARE: launches, ExecutorState)
  kHostCompute,        // host computes (HOST_COMPUTE)
  kDeviceCompute,      // device kernels (DEVICE_COMPUTE_16/32)
  kDeviceToDevice,     // device-to-device copies (DEVICE_TO_DEVICE, DEVICE_WAIT_DEVICE)
  kDeviceCollectives,  // NCCL collectives (DEVICE_COLLECTIVES)
  kOutput,             // device-to-host copies (DEVICE_TO_HOST)
  kCompile,            // compilation (HOST_COMPILE)
  kOther,              // no event, or host-to-host copies (UNKNOWN_TIME, HOST_TO_HOST)
  kCount
};
constexpr int kStepCategories = static_cast<int>(StepCategory::kCount);
// The JSON key of a category ("input_ns", "host_to_device_ns", ...; docs/json.md).
const char* StepCategoryKey(StepCategory c);
// Its words in the report ("input", "host to device", "kernel launch", ...).
const char* StepCategoryWords(StepCategory c);

// The breakdown of one marked step of `task` (it starts at `start`, as its StepRow does).
struct StepBreakdownRow {
  uint32_t task = 0;
  TimeNs start = 0;
  TimeNs step_ns = 0;
  TimeNs ns[kStepCategories] = {};
  TimeNs& at(StepCategory c) { return ns[static_cast<int>(c)]; }
  TimeNs at(StepCategory c) const { return ns[static_cast<int>(c)]; }
};

// One stage of a task's tf.data input pipeline, summed over one input file: the TF2 profiler's
// "Iterator::" TraceMe events, one per GetNext of the stage (DatasetBaseIterator::GetNext in
// TensorFlow's tensorflow/core/framework/dataset.cc writes them; XProf's tf_data_stats reads them).
// `path` is the event's long name from the root, e.g. "Iterator::Model::ParallelMapV2::Prefetch":
// after "Iterator", each "::" name is a transformation and the next one its input (the root, the
// transformation the step reads from, first).
struct InputIteratorRow {
  uint32_t task = 0;
  StrId path = 0;
  TimeNs first = 0;     // the first GetNext's start, ns (which capture of the job it is in)
  int64_t count = 0;    // GetNext calls traced
  TimeNs total_ns = 0;  // their summed duration, ns
};

// One capture of the job: a time range its inputs cover without a gap between inputs. Inputs
// whose op time ranges overlap are one capture (a job's per-worker files); inputs that do not
// overlap are separate captures (ProfilerHook writes a file per captured step, minutes apart).
struct CaptureRange {
  TimeNs start = 0, end = 0;  // ns, the first op start and the last op end of its inputs
};

// How a cross-task edge was recognised.
enum class EdgeKind : uint8_t {
  kDataFlow,        // a DataFlow s/t pair whose ends sit on different tasks
  kPartitionInput,  // an input "<tensor>_S<N>" whose producer ran on another task
};

// A tensor that crosses tasks, aggregated over the run.
struct EdgeRow {
  uint32_t src_task = 0, dst_task = 0;
  StrId tensor = 0;  // producer node name (output slot kept when not 0)
  EdgeKind kind = EdgeKind::kPartitionInput;
  int64_t count = 0;   // transfers seen
  int64_t bytes = -1;  // total bytes when the tensor's size is known, else -1
};

// Per-input-file facts for the import statistics.
struct FileStats {
  std::string path;
  std::string format;  // "tf1-timeline", "tf2-trace", "chrome-trace"
  bool gzip = false;
  int64_t bytes = 0;       // bytes of the file on disk
  int64_t events = 0;      // trace events seen
  int64_t ops = 0;         // ops imported
  int64_t skipped = 0;     // malformed events skipped
  int chunks = 1;          // chunks parsed in parallel (1: read on one thread)
  bool fast_path = false;  // read by the fast tokenizer throughout (else RapidJSON re-read it)
  // TF2 profiles (XSpace, trace-viewer JSON): GPU kernels read, and those not tied to a TF op
  // (neither a launch's correlation_id nor a TensorFlow Ops row: typed "unknown").
  int64_t kernels = 0, kernels_untied = 0;
  // When the file gave no TF ops (or only ops on pids without a device name): what it is and why
  // nothing in it was analyzed, e.g. "the file holds no events"; "" otherwise.
  std::string note;
};

// An input left out because it repeats an earlier one (read once, not counted twice).
struct DuplicateInput {
  std::string path;     // the input as given
  std::string same_as;  // the earlier input it repeats
  std::string how;      // "same file (device and inode)" or "identical content (size, first and
                        // last 64 KiB)"
};

// tfdiag's step-time breakdown of one XSpace next to XProf's own, read from the tool file beside
// it (collectors/xplane/xprof_tools.h). Shares of the summed step time, percent, per StepCategory.
struct XprofCheck {
  std::string file;       // the XSpace
  std::string tool_file;  // XProf's <host>.input_pipeline.pb or .overview_page.pb
  int steps = 0, xprof_steps = 0;
  double step_ns = 0, xprof_step_ns = 0;  // summed step time
  double pct[kStepCategories] = {}, xprof_pct[kStepCategories] = {};
  double max_diff_pct = 0;                 // largest |pct - xprof_pct| over the categories (points)
  std::string xprof_input_classification;  // XProf's "host"/"both"/"device"/"unknown"
  std::string xprof_input_statement;
};

// What was read, and what was skipped and why (reason -> count).
struct ImportStats {
  std::vector<FileStats> files;
  std::map<std::string, int64_t> skipped;  // malformed events by reason
  std::map<std::string, int64_t> ignored;  // well-formed events tfdiag does not use, by kind
  // _S<N> inputs whose producer is not in the consumer's step (capture_finish::ResolveEdges).
  int64_t unresolved_inputs = 0;
  // _S<N> inputs that several tasks could have sent in the consumer's step and no DataFlow arrow
  // names (replicas running the same graph): counted, never credited to one of them.
  int64_t ambiguous_inputs = 0;
  std::vector<DuplicateInput> duplicates;  // inputs given twice, read once
  // GPU `stream:all` rows left out because the same GPU has per-stream rows (`stream:N`), which
  // hold the same kernels: devices and ops dropped (TF1 GPU tracer, timeline.py).
  int64_t stream_all_devices = 0, stream_all_ops = 0;
  // DataFlow arrows whose start and end sit in different files, paired when the files merged.
  int64_t cross_file_flows = 0;
  // Tasks whose steps are the ones the input marks itself (CaptureBuilder::AddStep: an XPlane's
  // group_id step stats), not recovered from _SOURCE ops.
  int64_t marked_step_tasks = 0;
  // What the import decided that changes the figures, one line each for the report's notes
  // (separate captures and how far apart; captures that share no task).
  std::vector<std::string> notes;
  // XProf's own figures beside XSpaces, compared with tfdiag's breakdown.
  std::vector<XprofCheck> xprof_checks;
  int64_t TotalSkipped() const;
};

// A TF task's process seen live by `tfdiag attach`, with its pod and CPU cgroup.
struct ProcessRow {
  uint32_t task = 0;  // index into Capture::tasks
  int32_t pid = 0;
  StrId pod = 0, pod_uid = 0, container = 0, qos = 0, cgroup = 0;  // "" when unknown
  StrId cpuset = 0;                                                // "0-3"
  double cpu_limit =
      0;  // CFS quota / period in CPUs (tightest of the cgroup and its parents); 0 none
  int64_t quota_us = -1;  // cpu.cfs_quota_us / cpu.max; -1 unlimited
  int64_t period_us = 0;
  int32_t cpuset_cpus = 0;           // CPUs in the cpuset; 0 unknown
  int32_t host_cpus = 0;             // CPUs of the node
  TimeNs first_ns = 0, last_ns = 0;  // first and last sample (CLOCK_REALTIME ns)
  bool exited = false;               // the process went away during the window
  // Cluster mode (analyze --prometheus): where the pod ran (kube_pod_info), "" when unknown.
  StrId node = 0, pod_ip = 0;
  double cpu_request = 0;  // CPUs requested by the pod's containers; 0 none or unknown
  int32_t restarts = 0;    // container restarts within the window
  // Where the task's own step counter was read (StepCountRow), e.g. "step counter file
  // /tmp/w0.tfdiag-steps (fd 5)"; "" when the task exports none.
  StrId step_source = 0;
};

// One sample of a process (every interval). Counters are cumulative; -1 when unknown.
struct ProcessSampleRow {
  TimeNs ts = 0;                               // CLOCK_REALTIME ns
  uint32_t process = 0;                        // index into Capture::processes
  int32_t threads = 0;                         // threads alive
  int32_t runnable = 0;                        // threads in state R; -1 unknown (cAdvisor)
  int64_t cpu_ns = 0;                          // user + system CPU of all threads
  int64_t voluntary = -1, involuntary = -1;    // context switches, summed over threads
  int64_t nr_periods = -1, nr_throttled = -1;  // cgroup CFS periods / throttled periods
  int64_t throttled_ns = -1;                   // cgroup time throttled
};

// One sample of one thread of a process. Counters are cumulative; -1 when unknown.
struct ThreadSampleRow {
  TimeNs ts = 0;
  uint32_t process = 0;
  int32_t tid = 0;
  StrId name = 0;    // "tf_intra_op", "grpc_global_timer", ...
  char state = '?';  // R, S, D, ...
  int64_t cpu_ns = 0;
  int64_t voluntary = -1, involuntary = -1;
};

// Bytes on one socket of a process, from the eBPF traffic probe (tfdiag attach). Counters are
// cumulative since attach; one row per socket per sample.
struct TrafficRow {
  TimeNs ts = 0;                  // CLOCK_REALTIME ns
  uint32_t process = 0;           // index into Capture::processes
  StrId local = 0;                // "127.0.0.1:47932"
  StrId peer = 0;                 // remote "ip:port"
  uint32_t peer_task = kNoIndex;  // the TF task listening there (cluster spec), else kNoIndex
  bool hdfs = false;              // the remote port is an HDFS DataNode's (--hdfs-port)
  int64_t bytes_sent = 0, bytes_received = 0;  // bytes
};

constexpr int kRunqHistSlots = 32;  // log2 buckets: slot i counts waits in [2^i, 2^(i+1)) ns

// Scheduling of one process from the eBPF sched probe, summed over its threads; cumulative
// since attach; one row per process per sample.
struct SchedRow {
  TimeNs ts = 0;                             // CLOCK_REALTIME ns
  uint32_t process = 0;                      // index into Capture::processes
  int64_t voluntary = 0, involuntary = 0;    // context switches (blocked / preempted)
  int64_t oncpu_ns = 0;                      // ns on a CPU
  int64_t runq_wait_ns = 0, runq_waits = 0;  // run-queue latency: total ns, waits measured
  int64_t runq_hist[kRunqHistSlots] = {};    // waits per log2 ns bucket
};

// Steps the task itself counted (a step counter it exports, collectors/attach/step_counter.h),
// read at a sample. Cumulative since the task started; one row per process per sample.
struct StepCountRow {
  TimeNs ts = 0;         // CLOCK_REALTIME ns
  uint32_t process = 0;  // index into Capture::processes
  int64_t steps = 0;     // steps completed
};

// Where a live capture came from.
struct CaptureMeta {
  std::string host, kernel, tool_version;
  TimeNs window_start = 0, window_end = 0;  // ns
  int64_t interval_ms = 0;
  std::vector<std::string> warnings;  // what could not be collected, and why
  std::string probes;                 // eBPF probes that ran, e.g. "sched,traffic(tp_btf)"; ""
  // Bundles: the share of the node's CPU time over the window that was steal (/proc/stat: the
  // VM's CPUs runnable while the hypervisor ran other guests), percent; -1 unknown (no /proc/stat,
  // a bundle written before it was recorded, or not a recording).
  double steal_pct = -1;
};

// The immutable run model. Ops are sorted by (device, start); `device_ops[d]` is the half-open
// range of device d's ops in `ops`.
struct Capture {
  StringPool strings;
  std::vector<TaskRow> tasks;      // sorted by (kind: ps first, worker, ...; replica; index)
  std::vector<DeviceRow> devices;  // sorted by (task, name)
  OpStore ops;                 // plain or packed (core/op_store.h); read with ForEach or operator[]
  std::vector<NodeRow> nodes;  // what OpRow::node indexes; distinct, sorted (NodeRow)
  std::vector<std::pair<uint32_t, uint32_t>> device_ops;  // per device [begin, end) into ops
  std::vector<StrId> inputs;                              // op inputs as written, e.g. "w/read_S11"
  std::vector<FlowRow> flows;
  std::vector<TensorRow> tensors;
  std::vector<StepRow> steps;  // task by task in task order, each task's in index order
  std::vector<std::pair<uint32_t, uint32_t>> task_steps;  // per task [begin, end) into steps
  // XProf's step-time breakdown of the marked steps of TF2 captures (StepBreakdownRow), sorted
  // by (task, start); empty for inputs that carry none (TF1 timelines, bundles).
  std::vector<StepBreakdownRow> step_breakdowns;
  // The tf.data pipeline stages of TF2 captures (InputIteratorRow), sorted by (task, path,
  // first); empty for inputs that record none (TF1 timelines, bundles).
  std::vector<InputIteratorRow> input_iterators;
  std::vector<EdgeRow> edges;  // sorted by (src_task, dst_task, tensor)
  // What `edges` resolved the _S<N> inputs with (core/partition_inputs.h), kept so the step graph
  // resolves by the same rules without a second index; null for a capture not made by
  // CaptureBuilder::Finish (then capture_finish::IndexInputs builds one). Shared on copy.
  std::shared_ptr<const capture_finish::InputIndex> input_index;
  ImportStats stats;
  HorovodStats horovod;       // Horovod timelines' figures (empty() when there were none)
  TimeNs start = 0, end = 0;  // span of all ops, ns
  // The separate captures of the job in time order (CaptureRange), when there are two or more;
  // empty when the inputs form one capture ([start, end]). A task's steps never span two.
  std::vector<CaptureRange> captures;
  // Live data (bundles).
  std::vector<ProcessRow> processes;              // sorted by (task, pid)
  std::vector<ProcessSampleRow> process_samples;  // sorted by (process, ts)
  std::vector<ThreadSampleRow> thread_samples;    // sorted by (process, tid, ts)
  std::vector<TrafficRow> traffic;                // sorted by (process, peer, local, ts)
  std::vector<SchedRow> sched;                    // sorted by (process, ts)
  std::vector<StepCountRow> step_counts;          // sorted by (process, ts)
  CaptureMeta meta;

  std::string_view Str(StrId id) const { return strings.Get(id); }
  // The node an op ran (its name, type and inputs).
  const NodeRow& Node(const OpRow& op) const { return nodes[op.node]; }
  StrId OpName(const OpRow& op) const { return nodes[op.node].name; }
  StrId OpType(const OpRow& op) const { return nodes[op.node].type; }
  std::string_view TaskLabelOf(uint32_t task) const { return Str(tasks[task].label); }
  // The steps of `task` (empty for a task without steps or out of range).
  StepRange TaskSteps(uint32_t task) const {
    if (task >= task_steps.size()) return {};
    return {steps.data() + task_steps[task].first, steps.data() + task_steps[task].second};
  }
  // The time captured, ns: the captures' lengths summed (not the gaps between them), else
  // end - start.
  TimeNs CapturedNs() const;
  // The captures in time order: `captures`, or the whole [start, end] when that is empty.
  std::vector<CaptureRange> CaptureRanges() const {
    return captures.empty() ? std::vector<CaptureRange>{{start, end}} : captures;
  }
  // Index of the task labelled `label` ("ps:0"), or kNoIndex.
  uint32_t FindTask(std::string_view label) const;
  // Number of tasks of the given kind.
  int CountTasks(JobKind kind) const;
};

// One task's figures within one capture range `r` (core/capture_inputs.cc): its steps that start
// in r, their median length, and its busy time (the union of its ops' intervals that start in r)
// as a share of r's own length. O(ops of the task).
struct CaptureTaskFigures {
  int64_t steps = 0;
  TimeNs step_median_ns = 0;  // 0 without steps
  TimeNs busy_ns = 0;
  double busy_pct = 0;  // 100 * busy_ns / (r.end - r.start); 0 for an empty range
  bool any = false;     // the task has an op or a step in r
};
CaptureTaskFigures FiguresInCapture(const Capture& c, const CaptureRange& r, uint32_t task);

}  // namespace tfdiag
