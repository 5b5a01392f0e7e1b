#include "collectors/xplane/tf2_events.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/escape.h"

namespace tfdiag {

namespace {

// A node name: [A-Za-z0-9._][A-Za-z0-9_./>-]* (TSL's IsTfOpName, with the leading '_' that
// TF's own internal nodes such as _SOURCE and _Recv carry).
bool IsNodeChar(char c, bool first) {
  if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
      c == '_') {
    return true;
  }
  return !first && (c == '/' || c == '>' || c == '-');
}

bool IsTypeChar(char c, bool first) {
  if ((c >= 'A' && c <= 'Z') || c == '_') return true;
  return !first && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'));
}

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

}  // namespace

bool ParseTfOpName(std::string_view full, std::string_view* node, std::string_view* type) {
  const size_t colon = full.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 >= full.size()) return false;
  if (full.find(':', colon + 1) != std::string_view::npos) return false;
  std::string_view n = full.substr(0, colon), t = full.substr(colon + 1);
  for (size_t i = 0; i < n.size(); ++i) {
    if (!IsNodeChar(n[i], i == 0)) return false;
  }
  for (size_t i = 0; i < t.size(); ++i) {
    if (!IsTypeChar(t[i], i == 0)) return false;
  }
  *node = n;
  *type = t;
  return true;
}

bool Tf2OpOf(std::string_view name, std::string_view long_name, std::string_view* node,
             std::string_view* type) {
  if (ParseTfOpName(name, node, type) ||
      (!long_name.empty() && ParseTfOpName(long_name, node, type))) {
    return true;
  }
  // The PS traffic of ParameterServerStrategy: "RecvTensor", "RecvTensor:<...>", "RecvTensor ...".
  for (std::string_view rpc : {std::string_view("RecvTensor"), std::string_view("SendTensor")}) {
    if (StartsWith(name, rpc) &&
        (name.size() == rpc.size() || name[rpc.size()] == ':' || name[rpc.size()] == ' ')) {
      *node = *type = rpc;
      return true;
    }
  }
  return false;
}

bool ParseRendezvousKey(std::string_view s, RendezvousKey* key) {
  std::string_view part[5];
  for (int i = 0; i < 5; ++i) {
    const size_t semi = s.find(';');
    if ((semi == std::string_view::npos) != (i == 4)) return false;
    part[i] = s.substr(0, semi);
    if (i < 4) s.remove_prefix(semi + 1);
  }
  auto digits = [](std::string_view d, bool hex) {
    if (d.empty()) return false;
    for (char c : d) {
      const bool ok =
          (c >= '0' && c <= '9') || (hex && ((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')));
      if (!ok) return false;
    }
    return true;
  };
  const size_t colon = part[4].find(':');
  if (!StartsWith(part[0], "/job:") || !StartsWith(part[2], "/job:") || !digits(part[1], true) ||
      part[3].empty() || colon == std::string_view::npos ||
      !digits(part[4].substr(0, colon), false) || !digits(part[4].substr(colon + 1), false)) {
    return false;
  }
  *key = {part[0], part[2], part[3]};
  return true;
}

bool RendezvousKeyOfEvent(std::string_view name, std::string_view stat, RendezvousKey* key) {
  if (!stat.empty() && ParseRendezvousKey(stat, key)) return true;
  if (!StartsWith(name, "RecvTensor: ")) return false;
  name.remove_prefix(12);
  const size_t space = name.find(' ');  // "<step_id> <key>"
  return space != std::string_view::npos && ParseRendezvousKey(name.substr(space + 1), key);
}

bool IsTransferOpType(std::string_view t) {
  return t == "RecvTensor" || t == "_Recv" || t == "_HostRecv" || t == "SendTensor";
}

std::string_view ProducerOfEdge(std::string_view edge) {
  if (edge.rfind("edge_", 0) != 0) return edge;
  size_t i = 5;
  while (i < edge.size() && edge[i] >= '0' && edge[i] <= '9') ++i;
  if (i == 5 || i >= edge.size() || edge[i] != '_') return edge;
  return edge.substr(i + 1);
}

Tf2Line ClassifyTf2Line(std::string_view n) {
  if (StartsWith(n, "Stream #")) return Tf2Line::kStream;
  if (n == "TensorFlow Ops") return Tf2Line::kTfOps;
  if (n == "Steps") return Tf2Line::kSteps;
  // xplane_schema.cc's derived line names (kTensorFlowNameScopeLineName, kXlaOpLineName,
  // kXlaModuleLineName, kKernelLaunchLineName, kSourceLineName, ...).
  for (std::string_view d :
       {"TensorFlow Name Scope", "XLA Ops", "XLA Modules", "XLA TraceMe", "Launch Stats",
        "Source code", "Framework Ops", "Framework Name Scope"}) {
    if (n == d) return Tf2Line::kDerived;
  }
  return Tf2Line::kThread;
}

std::string StreamOfLine(std::string_view line) {
  if (!StartsWith(line, "Stream #")) return "";
  size_t i = 8, j = i;
  while (j < line.size() && line[j] >= '0' && line[j] <= '9') ++j;
  return j > i ? std::string(line.substr(i, j - i)) : "";
}

bool IsTf2PlaneName(std::string_view name) {
  return StartsWith(name, "/host:") || StartsWith(name, "/device:");
}

Tf2Stat ClassifyTf2Stat(std::string_view s) {
  using namespace tf2_stat;  // NOLINT: the names above, read as a table
  if (s == kGroupId) return Tf2Stat::kGroupId;
  if (s == kCorrelationId) return Tf2Stat::kCorrelationId;
  if (s == kIsRoot) return Tf2Stat::kIsRoot;
  if (s == kStepNum) return Tf2Stat::kStepNum;
  if (s == kStepName) return Tf2Stat::kStepName;
  if (s == kIsAsync) return Tf2Stat::kIsAsync;
  if (s == kTfOp) return Tf2Stat::kTfOp;
  if (s == kAnnotation) return Tf2Stat::kAnnotation;
  if (s == kRendezvousKey || s == kKey) return Tf2Stat::kRendezvousKey;
  return Tf2Stat::kOther;
}

bool IsStepMarkerName(std::string_view n) {
  return n == "TraceContext" || n == "SessionRun" || n == "train_function" ||
         StartsWith(n, "__inference_train_function");
}

Tf2Plane ClassifyTf2Plane(std::string_view plane) {
  if (StartsWith(plane, "/job:") || plane == "/host:CPU" || StartsWith(plane, "/device:CPU:")) {
    return Tf2Plane::kHost;
  }
  if (StartsWith(plane, "/device:") && !StartsWith(plane, "/device:CUSTOM")) {
    return Tf2Plane::kGpu;
  }
  return Tf2Plane::kNone;
}

std::string PrintableCut(std::string_view name) {
  std::string out = Printable(name.substr(0, 60));
  if (name.size() > 60) out += "...";
  return out;
}

std::string Tf2NotDeviceReason(std::string_view plane) {
  if (plane.empty()) return "TF2 plane that is not a device (unnamed)";
  return "TF2 plane that is not a device (" + PrintableCut(plane) + ")";
}

std::string Tf2PlaneDevice(std::string_view plane, std::string_view task) {
  if (StartsWith(plane, "/job:")) return std::string(plane);
  if (plane == "/host:CPU") return std::string(task) + "/device:CPU:0";
  if (ClassifyTf2Plane(plane) == Tf2Plane::kNone) return "";
  return std::string(task) + std::string(plane);
}

std::string Tf2NoOpsNote(std::string_view format, int64_t events, int64_t host_events,
                         int64_t gpu_planes) {
  return fmt::format(
      "a {} of {} events with no TF op and no GPU kernel: its host's {} event(s) are TraceMe "
      "markers, not ops, and its {} GPU plane(s) hold no kernels (the profiler recorded no op "
      "activity: was the capture taken outside the training steps, or the GPU tracer "
      "unavailable?)",
      format, events, host_events, gpu_planes);
}

bool IsTf2GpuPlane(std::string_view plane) { return ClassifyTf2Plane(plane) == Tf2Plane::kGpu; }

bool TfOpOfAnnotation(std::string_view a, std::string_view* node, std::string_view* type) {
  bool found = false;
  while (!a.empty()) {
    const size_t sep = a.find("::");
    std::string_view level = a.substr(0, sep);
    level = level.substr(0, level.find('#'));
    std::string_view n, t;
    if (ParseTfOpName(level, &n, &t)) {
      *node = n, *type = t;
      found = true;
    }
    if (sep == std::string_view::npos) break;
    a.remove_prefix(sep + 2);
  }
  return found;
}

bool IsTfDataFunctionName(std::string_view n) {
  return StartsWith(n, "InstantiatedCapturedFunction::Run");
}

namespace {

// Widens the span of `group` in `spans` to hold [start, end).
void Join(absl::flat_hash_map<int64_t, std::pair<TimeNs, TimeNs>>* spans, int64_t group,
          TimeNs start, TimeNs end) {
  auto [it, fresh] = spans->try_emplace(group, start, end);
  if (!fresh) {
    it->second.first = std::min(it->second.first, start);
    it->second.second = std::max(it->second.second, end);
  }
}

// Keeps the longest of the spans of `group` in `spans` (the first of equals).
void Longest(absl::flat_hash_map<int64_t, std::pair<TimeNs, TimeNs>>* spans, int64_t group,
             TimeNs start, TimeNs end) {
  auto [it, fresh] = spans->try_emplace(group, start, end);
  if (!fresh && end - start > it->second.second - it->second.first) it->second = {start, end};
}

}  // namespace

void Tf2StepGroups::AddEvent(int64_t group, TimeNs start, TimeNs end, uint8_t flags) {
  Join(&host_, group, start, end);
  if (flags != 0) {
    flags_[group] |= flags;
    any_marker_ |= (flags & kMarker) != 0;
    if ((flags & kMarker) != 0) Longest(&markers_, group, start, end);
  }
}

void Tf2StepGroups::AddStepsRow(int64_t group, TimeNs start, TimeNs end) {
  Longest(&rows_, group, start, end);
}

std::vector<std::pair<TimeNs, TimeNs>> Tf2StepGroups::TakeSteps(int64_t* dropped,
                                                                std::vector<int64_t>* groups) {
  std::vector<std::pair<Span, int64_t>> steps;
  int64_t left_out = 0;
  auto flags_of = [&](int64_t g) -> uint8_t {
    auto it = flags_.find(g);
    return it == flags_.end() ? 0 : it->second;
  };
  if (!rows_.empty()) {
    // The Steps rows name the steps; each spans its longest Steps event (the device's step
    // marker), or its longest host marker when that holds the device's (StepDetails::StepTime).
    for (const auto& [g, row] : rows_) {
      Span s = row;
      auto m = markers_.find(g);
      if (m != markers_.end() && m->second.first <= row.first && row.second <= m->second.second) {
        s = m->second;
      }
      steps.push_back({s, g});
    }
    for (const auto& [g, span] : host_) left_out += rows_.count(g) == 0;
  } else {
    for (const auto& [g, span] : host_) {
      const uint8_t f = flags_of(g);
      const bool step = any_marker_ ? (f & kMarker) != 0 : (f & kTfData) == 0;
      if (step) {
        // A marked group spans its longest marker (the host's step marker), else its events.
        auto m = any_marker_ ? markers_.find(g) : markers_.end();
        steps.push_back({m != markers_.end() ? m->second : span, g});
      } else {
        ++left_out;
      }
    }
  }
  std::sort(steps.begin(), steps.end());
  std::vector<Span> spans;
  spans.reserve(steps.size());
  if (groups != nullptr) groups->clear();
  for (const auto& [span, g] : steps) {
    spans.push_back(span);
    if (groups != nullptr) groups->push_back(g);
  }
  if (dropped != nullptr) *dropped += left_out;
  host_ = {};
  flags_ = {};
  rows_ = {};
  markers_ = {};
  any_marker_ = false;
  return spans;
}

void Tf2KernelTies::HostEvent(TimeNs start, TimeNs end, const Op* op, const int64_t* corr) {
  while (!stack_.empty() && !(stack_.back().start <= start && end <= stack_.back().end)) {
    stack_.pop_back();
  }
  if (corr != nullptr && !stack_.empty()) launches_[*corr] = stack_.back().op;
  if (op != nullptr) stack_.push_back({start, end, *op});
}

void Tf2KernelTies::TfOpsRow(TimeNs start, TimeNs end, Op op) {
  if (!rows_.empty() && start < rows_.back().start) sorted_ = false;
  rows_.push_back({start, end, op});
}

bool Tf2KernelTies::Tie(TimeNs start, TimeNs end, const int64_t* corr, Op* op) {
  if (corr != nullptr) {
    auto it = launches_.find(*corr);
    if (it != launches_.end()) {
      *op = it->second;
      return true;
    }
  }
  if (!sorted_) {
    std::stable_sort(rows_.begin(), rows_.end(),
                     [](const Row& a, const Row& b) { return a.start < b.start; });
    sorted_ = true;
  }
  // The last row starting at or before the kernel; rows of one device do not overlap.
  auto it = std::upper_bound(rows_.begin(), rows_.end(), start,
                             [](TimeNs t, const Row& r) { return t < r.start; });
  if (it == rows_.begin()) return false;
  --it;
  if (it->end < end) return false;
  *op = it->op;
  return true;
}

}  // namespace tfdiag
