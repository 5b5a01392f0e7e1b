// XProf's step-time breakdown of a TF2 capture: where each marked step's time went (input,
// host-to-device, kernel launch, host compute, device compute, ...), as XProf's input-pipeline
// analyzer and overview page count it, for both TF2 readers (XSpace and trace-viewer JSON).
// Semantics, read in openxla/xprof (https://github.com/openxla/xprof):
//   xprof/convert/xplane_to_step_events.cc: which events of a step count and their event type
//     (ClassifyCpuEvent on host threads: an event without a group_id, a step marker (names
//     "train*", "test*", "TraceContext*" without '/', or one with a step_name stat) and eager /
//     FunctionRun wrappers do not count; "MemcpyHToD*" is host-to-device, "MemcpyHToH*"
//     host-to-host, an event with a correlation_id (a kernel launch) or "ExecutorState::Process*"
//     on a host with a device is kernel launch, "IteratorGetNext*" (the tf.data iterator's
//     IteratorGetNextOp::DoCompute, on the iterator's own thread in TF 2.3+) is input wait, the
//     rest host compute; ClassifyGpuEvent on device streams, events with both a correlation_id
//     and a group_id: "MemcpyHToD*" / "MemcpyDToH*" / "MemcpyDToD*" copies, "nccl*" collectives,
//     the rest device compute; with a device, host events of groups the device did not run are
//     left out);
//   xprof/utils/event_span.{h,cc}: EventType priorities and ToNonOverlappedEvents (each instant
//     counts once, for the highest-priority type covering it), StepDetails::StepTime;
//   xprof/convert/step_events_to_steps_db.cc (ConvertStepDetailsToStepInfo: event time inside the
//     step marker, the rest unknown) and op_stats_to_input_pipeline_analysis.cc
//     (ComputeGenericInputPipelineAnalysisResult: the categories of PerGenericStepDetails).
// Step grouping (group_id) is TSL's group_events (tsl/profiler/utils/group_events.cc), read from
// the file's stats; which groups are steps is Tf2StepGroups (tf2_events.h).
// Thread-safety: not thread-safe; one instance per task of one reader.
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/capture.h"

namespace tfdiag {

// XProf's event types in priority order (event_span.h EventType: a higher value wins where
// events overlap). kNotCounted: the event is no part of the breakdown (a marker, a wrapper).
enum class XprofEventType : uint8_t {
  kNotCounted = 0,
  kHostCompute,
  kHostCompile,
  kHostToHost,
  kHostToDevice,
  kHostPrepare,  // kernel launch
  kDeviceCollectives,
  kHostWaitInput,
  kDeviceToDevice,
  kDeviceToHost,
  kDeviceCompute,
  kCount
};

// One typed event of a step, [start, end) ns.
struct XprofEvent {
  TimeNs start = 0, end = 0;
  XprofEventType type = XprofEventType::kNotCounted;
  // A host event's type when the host turns out to have no grouped device (its events are read
  // before the GPU planes'); a device event's is `type`.
  XprofEventType no_device = XprofEventType::kNotCounted;
};

// The type of a host-thread event named `name` (its XEventMetadata name; the JSON's long_name)
// of a step group: `has_device` the host has a GPU whose events are grouped, `has_correlation`
// the event carries a correlation_id (a launch), `step_name` it carries a step_name stat.
XprofEventType ClassifyXprofHostEvent(std::string_view name, bool has_device, bool has_correlation,
                                      bool step_name);
// The type of a GPU stream event named `name` (a kernel or memcpy) with a correlation_id.
XprofEventType ClassifyXprofDeviceEvent(std::string_view name);

// Collects the typed events of a task's step groups, and turns them into StepBreakdownRows once
// the steps are known. Events are held until then: 24 bytes each, at most kMaxEvents per task
// (past that the task gets no breakdown, and `overflowed()` says so).
class Tf2StepBreakdown {
 public:
  static constexpr size_t kMaxEvents = size_t{4} << 20;
  // A host-thread event of `group`: its ClassifyXprofHostEvent type with a device
  // (`with_device`) and without (`no_device`); which applies is decided at Take, once it is known
  // whether the task's GPU ran grouped events (the host plane is read first).
  void AddHost(int64_t group, TimeNs start, TimeNs end, XprofEventType with_device,
               XprofEventType no_device);
  // A GPU stream event of `group` with a correlation_id (ClassifyXprofDeviceEvent's type).
  void AddDevice(int64_t group, TimeNs start, TimeNs end, XprofEventType type);
  bool overflowed() const { return overflowed_; }
  bool has_device() const { return has_device_; }
  // One row per step (group, [start, end)) of `task`, and forgets everything. A step with no
  // counted event is all `other`. Empty when overflowed.
  std::vector<StepBreakdownRow> Take(
      uint32_t task, const std::vector<std::pair<int64_t, std::pair<TimeNs, TimeNs>>>& steps);

 private:
  void Add(int64_t group, const XprofEvent& e, bool device);
  absl::flat_hash_map<int64_t, std::vector<XprofEvent>> events_;  // by group
  size_t held_ = 0;
  bool overflowed_ = false, has_device_ = false;
};

// The breakdown of one step spanning [start, end) from its typed events (any order, may
// overlap): XProf's ToNonOverlappedEvents sweep clipped to the step. Pure function.
// `events` is reordered.
StepBreakdownRow BreakdownOfStep(TimeNs start, TimeNs end, std::vector<XprofEvent>* events);

}  // namespace tfdiag
