// CaptureBuilder's inputs as captures: which inputs are one capture of the job (their op time
// ranges overlap) and which are separate ones, and the notes that say so.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "core/capture_builder.h"

namespace tfdiag {

namespace {

// "99 min", "12.5 s", "10.0 ms": a gap between captures, for notes.
std::string Gap(TimeNs ns) {
  if (ns >= 60'000'000'000) return fmt::format("{:.0f} min", ns / 60e9);
  if (ns >= 1'000'000'000) return fmt::format("{:.1f} s", ns / 1e9);
  return fmt::format("{:.1f} ms", ns / 1e6);
}

}  // namespace

std::pair<TimeNs, TimeNs> CaptureBuilder::EndInput(std::string name) {
  const std::pair<TimeNs, TimeNs> range(open_input_.start, open_input_.end);
  open_input_.name = std::move(name);
  if (open_input_.start <= open_input_.end) inputs_ended_.push_back(std::move(open_input_));
  open_input_ = InputRange{};
  return range;
}

void CaptureBuilder::SetCaptures() {
  c_.captures.clear();
  std::vector<InputRange> in = std::move(inputs_ended_);
  if (open_input_.start <= open_input_.end && !in.empty()) in.push_back(open_input_);
  std::sort(in.begin(), in.end(), [](const InputRange& a, const InputRange& b) {
    return a.start != b.start ? a.start < b.start : a.end < b.end;
  });
  // Overlapping (or touching) ranges are one capture.
  std::vector<CaptureRange> caps;
  for (const InputRange& r : in) {
    if (!caps.empty() && r.start <= caps.back().end) {
      caps.back().end = std::max(caps.back().end, r.end);
    } else {
      caps.push_back({r.start, r.end});
    }
  }
  if (caps.size() > 1) c_.captures = std::move(caps);
}

void CaptureBuilder::NoteCaptures() {
  const std::vector<CaptureRange>& caps = c_.captures;
  if (caps.size() < 2) return;
  TimeNs lo = INT64_MAX, hi = 0;
  for (size_t j = 1; j < caps.size(); ++j) {
    lo = std::min(lo, caps[j].start - caps[j - 1].end);
    hi = std::max(hi, caps[j].start - caps[j - 1].end);
  }
  const std::string apart =
      Gap(lo) == Gap(hi) ? Gap(lo) : fmt::format("{} to {}", Gap(lo), Gap(hi));
  c_.stats.notes.push_back(fmt::format(
      "{} captures, {} apart (inputs whose time ranges do not overlap): steps are counted within "
      "each capture and busy shares over the {:.1f} ms captured, not over the gaps",
      caps.size(), apart, c_.CapturedNs() / 1e6));
  // The tasks of each capture (those with a step in it). A capture that shares no task with any
  // other may be of another job: warned, up to 3 named.
  std::vector<std::set<uint32_t>> tasks(caps.size());
  for (uint32_t t = 0; t < c_.tasks.size(); ++t) {
    for (const StepRow& s : c_.TaskSteps(t)) {
      auto it = std::upper_bound(caps.begin(), caps.end(), s.start,
                                 [](TimeNs x, const CaptureRange& r) { return x < r.start; });
      if (it != caps.begin()) tasks[static_cast<size_t>(it - caps.begin() - 1)].insert(t);
    }
  }
  std::vector<int> captures_of(c_.tasks.size(), 0);
  for (const std::set<uint32_t>& ts : tasks) {
    for (uint32_t t : ts) ++captures_of[t];
  }
  std::vector<std::string> alone;
  for (size_t j = 0; j < caps.size(); ++j) {
    if (tasks[j].empty()) continue;
    bool shared = false;
    std::vector<std::string_view> labels;
    for (uint32_t t : tasks[j]) {
      shared |= captures_of[t] > 1;
      labels.push_back(c_.TaskLabelOf(t));
    }
    if (!shared) alone.push_back(fmt::format("capture {} ({})", j + 1, fmt::join(labels, ", ")));
  }
  if (!alone.empty()) {
    const size_t n = alone.size();
    if (n > 3) alone.resize(3);
    c_.stats.notes.push_back(fmt::format(
        "warning: {}{} share(s) no task with the other captures: inputs of different jobs or "
        "clusters? Their figures are not of one job",
        fmt::join(alone, "; "), n > 3 ? fmt::format(" and {} more", n - 3) : ""));
  }
}

}  // namespace tfdiag
