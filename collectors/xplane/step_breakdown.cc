#include "collectors/xplane/step_breakdown.h"

#include <algorithm>
#include <array>

#include "collectors/xplane/tf2_events.h"

namespace tfdiag {

namespace {

bool Starts(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// Prefix match ignoring ASCII case (absl::StartsWithIgnoreCase, as XProf matches names).
bool StartsNoCase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    char a = s[i], b = prefix[i];
    if (a >= 'A' && a <= 'Z') a = static_cast<char>(a - 'A' + 'a');
    if (b >= 'A' && b <= 'Z') b = static_cast<char>(b - 'A' + 'a');
    if (a != b) return false;
  }
  return true;
}

// xplane_to_step_events.cc IsExplicitHostStepMarker: a Keras "train*"/"test*" function or a
// TraceContext, whose name has no '/' (a TF op's node name would).
bool ExplicitHostStepMarker(std::string_view name) {
  return (Starts(name, "train") || Starts(name, "test") || Starts(name, "TraceContext")) &&
         name.find('/') == std::string_view::npos;
}

// xplane_to_step_events.cc IsRealCpuCompute: eager and function-run wrappers are not compute of
// their own (their children are).
bool RealCpuCompute(std::string_view name) {
  return !(Starts(name, "EagerExecute") || Starts(name, "EagerLocalExecute") ||
           Starts(name, "EagerKernelExecute") || Starts(name, "FunctionRun") ||
           ExplicitHostStepMarker(name));
}

// The report's category of an XProf event type (op_stats_to_input_pipeline_analysis.cc fills
// PerGenericStepDetails so; HOST_TO_HOST has no field there and is counted as other here).
StepCategory CategoryOf(XprofEventType t) {
  switch (t) {
    case XprofEventType::kHostCompute:
      return StepCategory::kHostCompute;
    case XprofEventType::kHostCompile:
      return StepCategory::kCompile;
    case XprofEventType::kHostToDevice:
      return StepCategory::kHostToDevice;
    case XprofEventType::kHostPrepare:
      return StepCategory::kKernelLaunch;
    case XprofEventType::kDeviceCollectives:
      return StepCategory::kDeviceCollectives;
    case XprofEventType::kHostWaitInput:
      return StepCategory::kInput;
    case XprofEventType::kDeviceToDevice:
      return StepCategory::kDeviceToDevice;
    case XprofEventType::kDeviceToHost:
      return StepCategory::kOutput;
    case XprofEventType::kDeviceCompute:
      return StepCategory::kDeviceCompute;
    case XprofEventType::kHostToHost:
    case XprofEventType::kNotCounted:
    case XprofEventType::kCount:
      break;
  }
  return StepCategory::kOther;
}

}  // namespace

XprofEventType ClassifyXprofHostEvent(std::string_view name, bool has_device, bool has_correlation,
                                      bool step_name) {
  if (step_name || !RealCpuCompute(name)) return XprofEventType::kNotCounted;
  std::string_view node, type;
  const bool infeed = ParseTfOpName(name, &node, &type) && Starts(type, "InfeedEnqueue");
  if (infeed || StartsNoCase(name, "MemcpyHToD")) {
    return XprofEventType::kHostToDevice;
  }
  if (StartsNoCase(name, "MemcpyHToH")) return XprofEventType::kHostToHost;
  if (has_device && (has_correlation || StartsNoCase(name, "ExecutorState::Process"))) {
    return XprofEventType::kHostPrepare;
  }
  if (StartsNoCase(name, "IteratorGetNext")) return XprofEventType::kHostWaitInput;
  return XprofEventType::kHostCompute;
}

XprofEventType ClassifyXprofDeviceEvent(std::string_view name) {
  // tf_op_utils.cc ParseTfOpFullname's memcpy categories match these prefixes, any case. CUPTI's
  // own names ("MemcpyH2D", "MemcpyD2H") match none of them, and XProf counts those copies as
  // device compute: so does this, to give XProf's figures.
  if (StartsNoCase(name, "MemcpyHToD")) return XprofEventType::kHostToDevice;
  if (StartsNoCase(name, "MemcpyDToH")) return XprofEventType::kDeviceToHost;
  if (StartsNoCase(name, "MemcpyDToD")) return XprofEventType::kDeviceToDevice;
  if (StartsNoCase(name, "nccl")) return XprofEventType::kDeviceCollectives;
  return XprofEventType::kDeviceCompute;
}

StepBreakdownRow BreakdownOfStep(TimeNs start, TimeNs end, std::vector<XprofEvent>* events) {
  StepBreakdownRow row;
  row.start = start;
  row.step_ns = std::max<TimeNs>(0, end - start);
  // Boundaries in time order, ends before starts at the same instant (event_span.cc
  // CmpEventBoundaries); between two boundaries the highest type with an open event owns the time.
  struct Edge {
    TimeNs t;
    uint8_t type;
    bool open;
  };
  std::vector<Edge> edges;
  edges.reserve(events->size() * 2);
  for (const XprofEvent& e : *events) {
    if (e.type == XprofEventType::kNotCounted || e.end <= e.start) continue;
    edges.push_back({e.start, static_cast<uint8_t>(e.type), true});
    edges.push_back({e.end, static_cast<uint8_t>(e.type), false});
  }
  std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) {
    if (a.t != b.t) return a.t < b.t;
    return a.open < b.open;
  });
  std::array<int64_t, static_cast<size_t>(XprofEventType::kCount)> open{};
  TimeNs counted = 0;
  for (size_t i = 0; i + 1 < edges.size(); ++i) {
    open[edges[i].type] += edges[i].open ? 1 : -1;
    int top = 0;
    for (int k = static_cast<int>(open.size()) - 1; k > 0; --k) {
      if (open[k] > 0) {
        top = k;
        break;
      }
    }
    if (top == 0) continue;
    const TimeNs lo = std::max(edges[i].t, start), hi = std::min(edges[i + 1].t, end);
    if (hi <= lo) continue;
    row.at(CategoryOf(static_cast<XprofEventType>(top))) += hi - lo;
    counted += hi - lo;
  }
  row.at(StepCategory::kOther) += std::max<TimeNs>(0, row.step_ns - counted);
  return row;
}

void Tf2StepBreakdown::Add(int64_t group, const XprofEvent& e, bool device) {
  if (overflowed_) return;
  has_device_ |= device;
  if (e.type == XprofEventType::kNotCounted && e.no_device == XprofEventType::kNotCounted) return;
  if (++held_ > kMaxEvents) {
    overflowed_ = true;
    events_ = {};
    return;
  }
  events_[group].push_back(e);
}

void Tf2StepBreakdown::AddHost(int64_t group, TimeNs start, TimeNs end, XprofEventType with_device,
                               XprofEventType no_device) {
  Add(group, {start, end, with_device, no_device}, false);
}

void Tf2StepBreakdown::AddDevice(int64_t group, TimeNs start, TimeNs end, XprofEventType type) {
  Add(group, {start, end, type, type}, true);
}

std::vector<StepBreakdownRow> Tf2StepBreakdown::Take(
    uint32_t task, const std::vector<std::pair<int64_t, std::pair<TimeNs, TimeNs>>>& steps) {
  std::vector<StepBreakdownRow> out;
  if (!overflowed_) {
    out.reserve(steps.size());
    std::vector<XprofEvent> none;
    for (const auto& [group, span] : steps) {
      auto it = events_.find(group);
      std::vector<XprofEvent>* evs = it != events_.end() ? &it->second : &none;
      if (!has_device_) {
        for (XprofEvent& e : *evs) e.type = e.no_device;
      }
      StepBreakdownRow row = BreakdownOfStep(span.first, span.second, evs);
      row.task = task;
      out.push_back(row);
    }
  }
  events_ = {};
  held_ = 0;
  return out;
}

}  // namespace tfdiag
