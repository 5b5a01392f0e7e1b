// One meaning of a TF2 profiler event, for both decoders of a capture: the XSpace reader
// (xplane_reader.h) and the TF2 trace-viewer JSON reader (collectors/timeline, the JSON that
// TensorBoard's trace viewer loads, `<host>.trace.json.gz`). Both give the same Capture for the
// same capture because every decision below is made here, on names and stat names only:
//   - what a line (JSON: a thread) is: a host thread, a GPU stream, or a derived row;
//   - what an event is: a TF op ("<node>:<type>"), an RPC, or a TraceMe marker;
//   - which event groups are steps;
//   - which TF op a GPU kernel ran for.
// Sources (TensorFlow 2.2-2.4, tensorflow/core/profiler/; since moved to tsl/profiler and
// xla/tsl/profiler):
//   utils/tf_op_utils.cc (ParseTfOpFullname: "<node>:<type>" names), utils/xplane_schema.cc
//   (line names "TensorFlow Ops", "TensorFlow Name Scope", "Steps", "XLA Ops", "XLA Modules";
//   stat names "group_id", "correlation_id", "_r", "step_num", "step_name", "_a", "tf_op";
//   event names "TraceContext", "SessionRun", "FunctionRun", "InstantiatedCapturedFunction::*"),
//   utils/group_events.cc (steps: groups rooted at TraceContext/SessionRun/FunctionRun/RunGraph
//   or an `_r` event; tf.data captured-function runs and `_a` async events stand apart),
//   utils/derived_timeline.cc (the device plane's derived rows), and
//   convert/xplane_to_trace_events.cc + trace_events_to_json.cc (the JSON: one process per plane,
//   one thread per line, name = display name with `args.long_name` = the metadata name, every
//   stat an args string, a trailing {}).
// Thread-safety: the free functions are pure; each class instance belongs to one reader.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/capture.h"

namespace tfdiag {

// Timestamps before this (2001-09-09, 1e18 ns since the Unix epoch) are on a session's own clock,
// not the epoch: TF 2.4+ XSpaces (XLine.timestamp_ns) and their trace JSON (`ts`) start near zero
// in every profiling session. Readers add the session's wall time to them
// (ProfileReadOptions::session_wall_ns, log_dir.h SessionOfHostFile), so that the sessions of a
// log directory are separate captures in time order.
constexpr int64_t kSessionClockNs = 1'000'000'000'000'000'000;

// `ns` placed on the epoch: `ns` + `session_wall_ns` when `ns` is on a session's own clock
// (before kSessionClockNs), else `ns`.
inline int64_t OnWallClock(int64_t ns, int64_t session_wall_ns) {
  return ns < kSessionClockNs ? ns + session_wall_ns : ns;
}

// Splits a TF op name "<node>:<type>" (tf_op_utils.cc's naming: one ':', node
// [A-Za-z0-9._][A-Za-z0-9_./>-]*, type [A-Z_][A-Za-z0-9_]*; "GatherV2:GatherV2" is node
// "GatherV2", type "GatherV2"); false when `full` is not one.
bool ParseTfOpName(std::string_view full, std::string_view* node, std::string_view* type);

// The TF op a GPU kernel's "annotation" stat names: the annotation stack TF's ScopedAnnotation
// records at the launch, levels joined by "::", each "<name>[#k=v,...#]"; the innermost level
// that is a TF op name (ParseTfOpName), e.g. "model/conv2d/Conv2D:Conv2D" of
// "train_function::model/conv2d/Conv2D:Conv2D#id=12#". False when no level is one.
bool TfOpOfAnnotation(std::string_view annotation, std::string_view* node, std::string_view* type);

// The TF op of a host event: its name or, in the JSON, its `args.long_name` (the XEvent metadata
// name when the display name differs), "<node>:<type>"; or an RPC of ParameterServerStrategy's
// PS traffic, "RecvTensor" / "SendTensor" (alone or followed by ':' or ' '), node = type = that
// word (views of static storage). False otherwise.
bool Tf2OpOf(std::string_view name, std::string_view long_name, std::string_view* node,
             std::string_view* type);

// A rendezvous key of TF's distributed runtime, which names one cross-device transfer:
// "<src_device>;<src_incarnation>;<dst_device>;<tensor_name>;<frame_id>:<iter_id>"
// (tensorflow/core/kernels/sendrecv_ops.cc GetRendezvousKey; the gRPC worker splits it on ';'
// into five parts, src_device = [0], dst_device = [2], tensor name = [3], grpc_remote_worker.cc).
// Views into the parsed text.
struct RendezvousKey {
  std::string_view src_device, dst_device, tensor;
};
// Parses `s` as a rendezvous key: five ';'-separated parts, both devices "/job:..." names, the
// incarnation hex digits, the frame "<digits>:<digits>"; false otherwise.
bool ParseRendezvousKey(std::string_view s, RendezvousKey* key);
// The rendezvous key a transfer event (RecvTensor, _Recv, _HostRecv, SendTensor) carries: the
// value of its `rendezvous_key` or `key` stat (`stat`, may be empty), else its name after
// "RecvTensor: <step_id> " (the gRPC worker's trace text, grpc_worker_service.cc); false when
// neither parses.
bool RendezvousKeyOfEvent(std::string_view name, std::string_view stat, RendezvousKey* key);
// A transfer op type whose event may carry a rendezvous key (RendezvousKeyOfEvent).
bool IsTransferOpType(std::string_view type);
// "edge_12_w/read" -> "w/read": the producer node of a partition Send/Recv tensor name
// (graph_partition.cc names them edge_<id>_<src node>); any other name as is.
std::string_view ProducerOfEdge(std::string_view edge);

// What a line of a plane (a thread of a JSON process) holds.
enum class Tf2Line : uint8_t {
  kThread,   // a host thread (TF ops, TraceMe markers)
  kStream,   // "Stream #N(...)": a GPU stream's kernels and memcpys
  kTfOps,    // "TensorFlow Ops": derived, the TF op each device span ran for
  kSteps,    // "Steps": derived, one event per step group on the device
  kDerived,  // other derived rows ("TensorFlow Name Scope", "XLA Ops", "XLA Modules", ...)
};
Tf2Line ClassifyTf2Line(std::string_view line_name);

// "Stream #12(Compute)" -> "12"; "" when the line is not a stream.
std::string StreamOfLine(std::string_view line_name);

// Plane / process names of an XSpace: "/host:CPU" (the host's TF ops and markers), a device
// plane "/device:GPU:N" (kernels on stream lines). True for either.
bool IsTf2PlaneName(std::string_view name);

// What a plane of an XSpace (a process of its trace JSON) is, one rule for both readers
// (plane names: TF 2.4+ core/profiler/utils/xplane_schema.cc, kHostThreadsPlaneName,
// kGpuPlanePrefix, kTpuPlanePrefix, kCustomPlanePrefix, kMetadataPlaneName, ...):
enum class Tf2Plane : uint8_t {
  // No device: "/host:metadata", "/host:python-tracer", "/host:CUPTI", "/host:tfstreamz",
  // "/host:TPU-runtime", "/device:CUSTOM:*", "Task Environment", an unnamed process. Its events
  // are counted, never read as ops, step groups or kernel launches.
  kNone,
  // The host's threads: "/host:CPU", a "/job:..." device, "/device:CPU:<N>". TF ops, TraceMe
  // step markers, kernel launches; its groups make the task's steps.
  kHost,
  // A device whose events sit on its streams: "/device:<TYPE>:<N>" other than CPU and CUSTOM
  // (GPU, TPU). Its kernels go to "<device>/stream:N" sub-devices; its derived rows ("Steps",
  // "TensorFlow Ops") name steps and type kernels. Such a plane is no device of its own.
  kGpu,
};
Tf2Plane ClassifyTf2Plane(std::string_view plane);

// The TF device a plane (a JSON process) of host task `task` ("/job:worker/replica:0/task:0")
// stands for (ClassifyTf2Plane): "/job:..." planes are their own name; "/host:CPU" is the task's
// CPU:0; "/device:<TYPE>:<N>" is that device of the task (a GPU's events go to its streams'
// sub-devices); a kNone plane is no device: "".
std::string Tf2PlaneDevice(std::string_view plane, std::string_view task);
// ClassifyTf2Plane(plane) == Tf2Plane::kGpu.
bool IsTf2GpuPlane(std::string_view plane);

// A workload's name (a process or plane name) for a note or reason: its first 60 bytes through
// Printable (core/escape.h: control characters as "\xNN"), "..." when cut. Pure function.
std::string PrintableCut(std::string_view name);

// The FileStats::ignored reason for the events of a kNone plane (a JSON process) named `plane`,
// one wording for both readers: "TF2 plane that is not a device (NAME)", NAME "unnamed" when
// empty, else its first 60 bytes with control characters as "\xNN" (a plane name is the
// workload's) and "..." when cut. Thread-safety: pure function.
std::string Tf2NotDeviceReason(std::string_view plane);

// What a TF2 capture that gave no op says (the exit-2 line of analyze, FileStats::note), one
// wording for both readers: `format` ("XSpace", "TF2 trace-viewer JSON"), its `events`, the
// `host_events` on host planes that are not ops (TraceMe markers) and its `gpu_planes` (none of
// which held a kernel).
std::string Tf2NoOpsNote(std::string_view format, int64_t events, int64_t host_events,
                         int64_t gpu_planes);

// The stat names both readers act on, spelled here once (xplane_schema.cc's GetStatTypeStr; in
// the trace JSON, keys of an event's `args`).
namespace tf2_stat {
inline constexpr std::string_view kGroupId = "group_id";
inline constexpr std::string_view kCorrelationId = "correlation_id";
inline constexpr std::string_view kIsRoot = "_r";
inline constexpr std::string_view kStepNum = "step_num";
inline constexpr std::string_view kStepName = "step_name";
inline constexpr std::string_view kIsAsync = "_a";
inline constexpr std::string_view kTfOp = "tf_op";
// A GPU kernel's annotation stack (TfOpOfAnnotation); the trace JSON's `args.annotation`.
inline constexpr std::string_view kAnnotation = "annotation";
// The trace JSON only: an event's XEventMetadata name when its display name differs
// (trace_events_to_json.cc).
inline constexpr std::string_view kLongName = "long_name";
// A transfer's rendezvous key (RendezvousKey:
// src_device;src_incarnation;dst_device;name;frame_iter); "key" on some TF versions' RecvTensor
// events.
inline constexpr std::string_view kRendezvousKey = "rendezvous_key";
inline constexpr std::string_view kKey = "key";
}  // namespace tf2_stat

// What a stat says about its event, from the stat's name (xplane_schema.cc).
enum class Tf2Stat : uint8_t {
  kOther,
  kGroupId,        // "group_id": the event's step group (group_events.cc)
  kCorrelationId,  // "correlation_id": a kernel launch (host) and its kernel (device) share it
  kIsRoot,         // "_r": a user-defined step root when non-zero
  kStepNum,        // "step_num": set on step markers (TraceContext, keras "train")
  kStepName,       // "step_name": group_events.cc adds it to user-defined root events
  kIsAsync,        // "_a": an async event, outside the nesting (and the step spans)
  kTfOp,           // "tf_op": the TF op of a kernel or memcpy (TF >= 2.5)
  kRendezvousKey,  // "rendezvous_key" or "key": a transfer's rendezvous key (RendezvousKey)
  kAnnotation,     // "annotation": a kernel's annotation stack (TfOpOfAnnotation)
};
Tf2Stat ClassifyTf2Stat(std::string_view stat_name);

// A step marker by its name: TraceContext (Keras 2.2-2.3 `trace.Trace('TraceContext',
// step_num=)`), SessionRun, train_function / __inference_train_function* (a Keras training
// function's run).
bool IsStepMarkerName(std::string_view name);

// A tf.data captured-function run (InstantiatedCapturedFunction::Run*): a FunctionRun below it
// is an input-pipeline group, never a step.
bool IsTfDataFunctionName(std::string_view name);

// The per-group facts the readers collect, and the decision which groups are steps.
// Not thread-safe.
class Tf2StepGroups {
 public:
  // Flags of one event of a group.
  enum : uint8_t { kMarker = 1, kTfData = 2 };
  // An event of `group` on a host (TF-op) line, spanning [start, end) ns; async events (`_a`)
  // are not passed.
  void AddEvent(int64_t group, TimeNs start, TimeNs end, uint8_t flags);
  // An event of a device plane's derived "Steps" line: the authority on which groups are steps.
  void AddStepsRow(int64_t group, TimeNs start, TimeNs end);
  // The steps, as (start, end) spans in start order, and forgets every group. Which groups:
  //   1. groups with a "Steps" row event, where any device has one;
  //   2. else groups holding a step marker (IsStepMarkerName, `_r`, step_num, step_name);
  //   3. else every group that is not a tf.data function run (files without markers: TF1-style
  //      executors group one step per RunGraph).
  // Their spans, as XProf times a step (TF 2.4 core/profiler/utils/event_span.cc
  // StepDetails::StepTime, over the step markers op_stats collects per group): with a Steps row,
  // its longest event on any device (the device step marker: from the step's first to its last
  // device activity), unless the group's longest host marker holds it (a step synchronized with
  // its device at the end), then that marker; without one, the longest host marker; a group
  // without markers (3.) spans its host events. Checked against the step times XProf wrote in
  // input_pipeline.pb (tests/tf2_sessions_test.cc).
  // `dropped` (may be null) gets how many groups were not steps; `groups` (may be null) the
  // group_id of each step, in the same order.
  std::vector<std::pair<TimeNs, TimeNs>> TakeSteps(int64_t* dropped,
                                                   std::vector<int64_t>* groups = nullptr);
  bool empty() const { return host_.empty() && rows_.empty(); }

 private:
  using Span = std::pair<TimeNs, TimeNs>;
  // Host spans by group (16 bytes a group: a PS of a large job holds millions at once), and
  // apart, the few groups with flags and those with Steps row events.
  absl::flat_hash_map<int64_t, Span> host_;
  absl::flat_hash_map<int64_t, uint8_t> flags_;
  absl::flat_hash_map<int64_t, Span> rows_;     // the longest Steps row event
  absl::flat_hash_map<int64_t, Span> markers_;  // the longest host step marker
  bool any_marker_ = false;
};

// What a host line (thread) tells about its events' groups, events fed in start order: a step
// marker, or an event inside a tf.data captured-function run (IsTfDataFunctionName), whose
// FunctionRun roots an input-pipeline group (group_events.cc IsTfDataEvent). Not thread-safe.
class Tf2LineState {
 public:
  // Tf2StepGroups flags of an event spanning [start, end).
  uint8_t FlagsOf(TimeNs start, TimeNs end, bool marker, bool tf_data_function) {
    uint8_t f = marker ? Tf2StepGroups::kMarker : 0;
    if (tf_data_function || start < tf_data_end_) f |= Tf2StepGroups::kTfData;
    if (tf_data_function && end > tf_data_end_) tf_data_end_ = end;
    return f;
  }

 private:
  TimeNs tf_data_end_ = INT64_MIN;
};

// Ties GPU kernels to the TF ops they ran for (group_events.cc connects a kernel launch on the
// host to its kernel by `correlation_id`; derived_timeline.cc draws the device's "TensorFlow
// Ops" row from the same tie):
//   1. the kernel's correlation_id names a host launch event nested in a TF op event on its host
//      thread: that op;
//   2. else the device's "TensorFlow Ops" row event spanning the kernel.
// Host lines must be fed before the device planes that use them (the XSpace writes /host:CPU
// first; a device plane read earlier uses its TensorFlow Ops row alone).
// Not thread-safe.
class Tf2KernelTies {
 public:
  struct Op {
    StrId name = 0, type = 0;
  };
  // Host side, one line (thread) at a time, events in start order.
  void BeginHostLine() { stack_.clear(); }
  // `op`: the event's TF op, or null; `correlation`: its correlation_id, or null.
  void HostEvent(TimeNs start, TimeNs end, const Op* op, const int64_t* correlation);
  // Device side: the device's "TensorFlow Ops" row, then Tie per kernel. BeginDevice clears it.
  void BeginDevice() {
    rows_.clear();
    sorted_ = true;
  }
  void TfOpsRow(TimeNs start, TimeNs end, Op op);
  // The op of a kernel spanning [start, end) with `correlation` (null: none); false untied.
  bool Tie(TimeNs start, TimeNs end, const int64_t* correlation, Op* op);

 private:
  struct Open {
    TimeNs start, end;
    Op op;
  };
  struct Row {
    TimeNs start, end;
    Op op;
  };
  std::vector<Open> stack_;
  absl::flat_hash_map<int64_t, Op> launches_;  // correlation_id -> op
  std::vector<Row> rows_;
  bool sorted_ = true;
};

}  // namespace tfdiag
