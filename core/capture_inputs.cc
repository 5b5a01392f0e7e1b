// CaptureBuilder's inputs as captures: which inputs are one capture of the job (their op time
// ranges overlap) and which are separate ones, and the notes that say so.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "core/capture_builder.h"
#include "core/median.h"

namespace tfdiag {

namespace {

// "151.0 days", "99 min", "12.5 s", "10.0 ms": a gap between captures, for notes.
std::string Gap(TimeNs ns) {
  if (ns >= 86'400'000'000'000) return fmt::format("{:.1f} days", ns / 86400e9);
  if (ns >= 60'000'000'000) return fmt::format("{:.0f} min", ns / 60e9);
  if (ns >= 1'000'000'000) return fmt::format("{:.1f} s", ns / 1e9);
  return fmt::format("{:.1f} ms", ns / 1e6);
}

}  // namespace

CaptureTaskFigures FiguresInCapture(const Capture& c, const CaptureRange& r, uint32_t task) {
  CaptureTaskFigures f;
  std::vector<TimeNs> steps;
  for (const StepRow& s : c.TaskSteps(task)) {
    // A step overlapping r is r's: a step marker may start before the capture's first op.
    if (s.start <= r.end && s.end >= r.start) steps.push_back(s.end - s.start);
  }
  std::vector<std::pair<TimeNs, TimeNs>> iv;
  for (uint32_t d = 0; d < c.devices.size() && d < c.device_ops.size(); ++d) {
    if (c.devices[d].task != task) continue;
    c.ops.ForEach(c.device_ops[d].first, c.device_ops[d].second, [&](const OpRow& op) {
      if (op.start >= r.start && op.start <= r.end) iv.emplace_back(op.start, op.end());
    });
  }
  f.any = !iv.empty() || !steps.empty();
  std::sort(iv.begin(), iv.end());
  TimeNs cs = 0, ce = INT64_MIN;
  for (const auto& [s, e] : iv) {
    if (s > ce) {
      if (ce != INT64_MIN) f.busy_ns += ce - cs;
      cs = s, ce = e;
    } else {
      ce = std::max(ce, e);
    }
  }
  if (ce != INT64_MIN) f.busy_ns += ce - cs;
  f.steps = static_cast<int64_t>(steps.size());
  if (!steps.empty()) f.step_median_ns = static_cast<TimeNs>(MedianInPlace(&steps));
  f.busy_pct = r.end > r.start ? 100.0 * static_cast<double>(f.busy_ns) / (r.end - r.start) : 0.0;
  return f;
}

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
  capture_names_.clear();
  for (const InputRange& r : in) {
    if (!caps.empty() && r.start <= caps.back().end) {
      caps.back().end = std::max(caps.back().end, r.end);
    } else {
      caps.push_back({r.start, r.end});
      capture_names_.emplace_back();
    }
    const std::string& what = r.name;
    std::vector<std::string>& names = capture_names_.back();
    if (std::find(names.begin(), names.end(), what) == names.end()) names.push_back(what);
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
  // Each capture's figures (up to 20 captures, 8 tasks each): its inputs, steps and median step,
  // and each task's busy share of the capture (the union of its ops' intervals in it).
  if (caps.size() <= 20) {
    for (size_t j = 0; j < caps.size(); ++j) {
      const CaptureRange& r = caps[j];
      std::vector<std::string> per_task;
      for (uint32_t t = 0; t < c_.tasks.size() && per_task.size() < 8; ++t) {
        const CaptureTaskFigures f = FiguresInCapture(c_, r, t);
        if (!f.any) continue;
        const int64_t n = f.steps;
        per_task.push_back(fmt::format(
            "{}: {} step{}{}, busy {:.1f}%", c_.TaskLabelOf(t), n, n == 1 ? "" : "s",
            n == 0 ? "" : fmt::format(" (median {:.2f} ms)", f.step_median_ns / 1e6), f.busy_pct));
      }
      const std::string gap =
          j == 0 ? std::string()
                 : fmt::format(", {} after capture {}", Gap(r.start - caps[j - 1].end), j);
      c_.stats.notes.push_back(fmt::format(
          "capture {} ({}; {:.1f} ms{}): {}", j + 1,
          j < capture_names_.size() ? fmt::format("{}", fmt::join(capture_names_[j], ", "))
                                    : std::string("?"),
          (r.end - r.start) / 1e6, gap,
          per_task.empty() ? "no ops" : fmt::format("{}", fmt::join(per_task, "; "))));
    }
  }
  // The tasks of each capture (those with a step in it). A capture that shares no task with any
  // other may be of another job: warned, up to 3 named.
  std::vector<std::set<uint32_t>> tasks(caps.size());
  for (uint32_t t = 0; t < c_.tasks.size(); ++t) {
    for (const StepRow& s : c_.TaskSteps(t)) {
      // The capture the step ends in (its marker may start before the capture's first op).
      auto it = std::upper_bound(caps.begin(), caps.end(), s.end,
                                 [](TimeNs x, const CaptureRange& r) { return x < r.start; });
      if (it != caps.begin()) tasks[static_cast<size_t>(it - caps.begin() - 1)].insert(t);
    }
  }
  // Runs kept apart (SplitRuns) are compared within themselves: a run of one capture is alone
  // by design, and said so below.
  const auto run_of = [&](TimeNs t) {
    return std::upper_bound(run_starts_.begin(), run_starts_.end(), t) - run_starts_.begin();
  };
  std::vector<int> captures_of(c_.tasks.size(), 0);
  std::vector<int> caps_in_run(run_starts_.size() + 1, 0);
  for (size_t j = 0; j < caps.size(); ++j) {
    ++caps_in_run[run_of(caps[j].start)];
    for (uint32_t t : tasks[j]) ++captures_of[t];
  }
  std::vector<std::string> alone;
  for (size_t j = 0; j < caps.size(); ++j) {
    if (tasks[j].empty() || caps_in_run[run_of(caps[j].start)] < 2) continue;
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
  // Captures days apart are other runs of a job, even where their tasks share a name (every
  // single-process timeline is localhost:0): their steps are merged into one task's figures, so
  // a finding one of them has alone may fade. Warned, with where to split them.
  for (size_t j = 1; j < caps.size(); ++j) {
    const TimeNs gap = caps[j].start - caps[j - 1].end;
    if (gap < kUnrelatedCapturesNs) continue;
    if (!run_starts_.empty()) {
      std::vector<std::string_view> labels;
      for (uint32_t t : tasks[j]) labels.push_back(c_.TaskLabelOf(t));
      c_.stats.notes.push_back(fmt::format(
          "warning: capture {} starts {:.0f} days after capture {} and shares no task with it "
          "(a task name such as localhost:0 is every single-process program's): another run, "
          "kept apart as task(s) of its own ({}), with its own findings",
          j + 1, gap / 86400e9, j,
          labels.empty() ? "no steps" : fmt::format("{}", fmt::join(labels, ", "))));
      continue;
    }
    c_.stats.notes.push_back(fmt::format(
        "warning: capture {} starts {:.0f} days after capture {}: most likely another run, not "
        "part of one job; its tasks are merged with the earlier captures' by name, and a finding "
        "of one run alone may not show: analyze the runs one at a time",
        j + 1, gap / 86400e9, j));
  }
}

}  // namespace tfdiag
