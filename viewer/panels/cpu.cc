// CPU panel (bundles from `tfdiag attach`): per process, threads and runnable threads against the
// CPU limit, CPU used, involuntary context switches and CFS throttling over the window, from
// Capture::process_samples, with the per-process summary of ProcessStats.
#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include "core/escape.h"
#include "viewer/panels/panels.h"

namespace tfdiag::view {

namespace {

constexpr ImU32 kThreads = IM_COL32(0xB0, 0xB0, 0xB8, 0xFF);
constexpr ImU32 kRunnable = IM_COL32(0xF5, 0xA6, 0x23, 0xFF);
constexpr ImU32 kUsed = IM_COL32(0x4C, 0x8B, 0xF5, 0xFF);
constexpr ImU32 kLimit = IM_COL32(0xFF, 0x70, 0x70, 0xFF);
constexpr ImU32 kSwitches = IM_COL32(0x5B, 0xC0, 0xBE, 0xFF);
constexpr ImU32 kVoluntary = IM_COL32(0x3A, 0x70, 0x6E, 0xFF);  // a darker kSwitches

// One interval between two consecutive samples of a process.
struct Interval {
  TimeNs t0, t1;
  double threads, runnable, cpus_used;
  double involuntary_per_s;  // -1 unknown
  double voluntary_per_s;    // -1 unknown
  double throttled;          // throttled periods / periods in [0, 1]; -1 unknown
};

std::vector<Interval> Intervals(const Capture& c, uint32_t process) {
  std::vector<Interval> out;
  const auto& ss = c.process_samples;
  auto lo = std::lower_bound(ss.begin(), ss.end(), process,
                             [](const ProcessSampleRow& r, uint32_t p) { return r.process < p; });
  for (auto it = lo; it != ss.end() && it->process == process; ++it) {
    if (it == lo) continue;
    const ProcessSampleRow &a = *(it - 1), &b = *it;
    double dt = static_cast<double>(b.ts - a.ts) / 1e9;
    if (dt <= 0) continue;
    Interval iv{a.ts,
                b.ts,
                double(b.threads),
                double(b.runnable),
                static_cast<double>(b.cpu_ns - a.cpu_ns) / 1e9 / dt,
                -1,
                -1,
                -1};
    if (a.involuntary >= 0 && b.involuntary >= 0) {
      iv.involuntary_per_s = static_cast<double>(b.involuntary - a.involuntary) / dt;
    }
    if (a.voluntary >= 0 && b.voluntary >= 0) {
      iv.voluntary_per_s = static_cast<double>(b.voluntary - a.voluntary) / dt;
    }
    if (a.nr_periods >= 0 && b.nr_periods > a.nr_periods && b.nr_throttled >= 0) {
      iv.throttled = static_cast<double>(b.nr_throttled - a.nr_throttled) /
                     static_cast<double>(b.nr_periods - a.nr_periods);
    }
    out.push_back(iv);
  }
  return out;
}

// A line over consecutive intervals of the value `get` (skipped where it is negative: unknown).
template <typename Get>
void Series(ImDrawList* dl, const std::vector<Interval>& iv, Get get, ImU32 col, float thick,
            const std::function<ImVec2(TimeNs, double)>& at) {
  for (size_t k = 1; k < iv.size(); ++k) {
    double a = get(iv[k - 1]), b = get(iv[k]);
    if (a >= 0 && b >= 0) dl->AddLine(at(iv[k - 1].t1, a), at(iv[k].t1, b), col, thick);
  }
}

// The chart of one process: threads, runnable threads and CPUs used against its CPU limit (the
// CFS quota, else the CPUs it may run on, dashed), context switches per second on their own
// scale, and the CFS throttled share as a strip underneath.
void Chart(const ProcessRow& p, const ProcessStats& ps, const std::vector<Interval>& iv, TimeNs t0,
           TimeNs t1) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  ImVec2 o = ImGui::GetCursorScreenPos();
  float w = ImGui::GetContentRegionAvail().x - 8, h = 90, strip = 8;
  dl->AddRectFilled(o, ImVec2(o.x + w, o.y + h), IM_COL32(0x1C, 0x1E, 0x24, 0xFF));
  const double limit = p.cpu_limit > 0 ? p.cpu_limit : ps.cpus;  // CPUs it may use
  double ymax = std::max(1.0, limit * 1.2);
  double sw_max = 1;
  for (const Interval& i : iv) {
    ymax = std::max({ymax, i.threads, i.runnable, i.cpus_used});
    sw_max = std::max({sw_max, i.involuntary_per_s, i.voluntary_per_s});
  }
  auto X = [&](TimeNs t) {
    return o.x + static_cast<float>(static_cast<double>(t - t0) / std::max<double>(t1 - t0, 1) * w);
  };
  // Values are clamped to the chart: a rate computed across a restart can come out negative.
  auto Y = [&](double v) {
    return o.y + h - static_cast<float>(std::clamp(v / ymax, 0.0, 1.0)) * (h - 4);
  };
  auto at = [&](TimeNs t, double v) { return ImVec2(X(t), Y(v)); };
  auto at_sw = [&](TimeNs t, double s) {
    return ImVec2(X(t), o.y + h - static_cast<float>(std::clamp(s / sw_max, 0.0, 1.0)) * (h - 4));
  };
  Series(
      dl, iv, [](const Interval& i) { return i.voluntary_per_s; }, kVoluntary, 1, at_sw);
  Series(
      dl, iv, [](const Interval& i) { return i.involuntary_per_s; }, kSwitches, 1, at_sw);
  Series(
      dl, iv, [](const Interval& i) { return i.threads; }, kThreads, 1.5f, at);
  Series(
      dl, iv, [](const Interval& i) { return i.runnable; }, kRunnable, 2, at);
  bool throttling_known = false;
  for (const Interval& i : iv) {
    float xa = X(i.t0), xb = X(i.t1);
    dl->AddLine(ImVec2(xa, Y(i.cpus_used)), ImVec2(xb, Y(i.cpus_used)), kUsed, 2);
    if (i.throttled >= 0) {  // throttling strip under the chart: darker = more throttled
      throttling_known = true;
      auto a = static_cast<int>(0x30 + 0xC0 * std::clamp(i.throttled, 0.0, 1.0));
      dl->AddRectFilled(ImVec2(xa, o.y + h + 1), ImVec2(xb, o.y + h + strip),
                        IM_COL32(0xC0, 0x50, 0xE0, a));
    }
  }
  if (limit > 0) {
    float y = Y(limit);
    for (float x = o.x; x < o.x + w; x += 12) {
      dl->AddLine(ImVec2(x, y), ImVec2(std::min(x + 7, o.x + w), y), kLimit, 2);
    }
  }
  if (!throttling_known) {
    dl->AddText(ImVec2(o.x + 4, o.y + h + 1), IM_COL32(0x90, 0x90, 0x90, 0xFF),
                "throttling: none possible (no CFS quota)");
  }
  ImGui::Dummy(ImVec2(w, h + (throttling_known ? strip : ImGui::GetTextLineHeight()) + 2));
}

// The chart's scales, on a line of their own above it (drawn on the chart they hid its lines).
void Scale(const ProcessRow& p, const ProcessStats& ps, const std::vector<Interval>& iv,
           ViewState* v) {
  const double limit = p.cpu_limit > 0 ? p.cpu_limit : ps.cpus;
  double ymax = std::max(1.0, limit * 1.2), sw_max = 1;
  bool switches_known = false;
  for (const Interval& i : iv) {
    ymax = std::max({ymax, i.threads, i.runnable, i.cpus_used});
    sw_max = std::max({sw_max, i.involuntary_per_s, i.voluntary_per_s});
    switches_known |= i.involuntary_per_s >= 0 || i.voluntary_per_s >= 0;
  }
  // With no quota the line is the CPUs the process may run on: its cpuset or the node's, which
  // a cluster bundle does not know (no line then, and "-").
  const std::string line = p.cpu_limit > 0 ? fmt::format("CFS quota {:.2f} CPUs", limit)
                           : limit > 0     ? fmt::format("{:.0f} CPUs (no quota)", limit)
                                           : "- (no quota; the node's CPUs unknown)";
  std::string scale =
      fmt::format("chart: 0-{:.0f} threads/CPUs, switches {}; limit {}", ymax,
                  switches_known ? fmt::format("0-{:.0f}/s", sw_max) : std::string("-"), line);
  ImGui::TextDisabled("%s", scale.c_str());
  v->figures.push_back(std::move(scale));
}

// A legend entry, on the same line as the previous one when it fits.
void Key(const char* name, ImU32 col) {
  float last = ImGui::GetItemRectMax().x - ImGui::GetWindowPos().x;
  float need = ImGui::GetStyle().ItemSpacing.x + ImGui::CalcTextSize(name).x;
  if (last + need <= ImGui::GetWindowContentRegionMax().x) ImGui::SameLine();
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(col), "%s", name);
}

}  // namespace

void DrawCpuPanel(const Snapshot& s, ViewState* v) {
  const Capture& c = s.capture;
  if (c.processes.empty()) {
    ImGui::TextWrapped(
        "No live samples. CPU data comes from bundles recorded on a node by `tfdiag attach` "
        "(threads, runnable threads, context switches, CFS quota and throttling).");
    return;
  }
  ImGui::TextDisabled("lines:");
  Key("threads", kThreads);
  Key("runnable", kRunnable);
  Key("CPUs used", kUsed);
  Key("CPU limit", kLimit);
  Key("switches/s: involuntary", kSwitches);
  Key("voluntary (own scale)", kVoluntary);
  Key("strip: CFS throttled share", IM_COL32(0xC0, 0x50, 0xE0, 0xFF));
  TimeNs t0 = INT64_MAX, t1 = INT64_MIN;
  for (const ProcessSampleRow& r : c.process_samples) {
    t0 = std::min(t0, r.ts);
    t1 = std::max(t1, r.ts);
  }
  ImGui::BeginChild("##cpu", ImVec2(0, 0), false);
  for (const ProcessStats& ps : s.analysis.processes) {
    if (ps.process >= c.processes.size()) continue;
    const ProcessRow& p = c.processes[ps.process];
    bool focus = p.task == v->focus_task;
    ImGui::PushStyleColor(ImGuiCol_Text, focus ? colors::kFocus : IM_COL32(0xE8, 0xE8, 0xE8, 0xFF));
    // Without /proc (a cluster bundle from analyze --prometheus) the pid is unknown: not "0".
    const std::string pid = p.pid > 0 ? fmt::format("pid {}", p.pid) : std::string();
    ImGui::Text("%s  %s  %.*s", ps.task.c_str(), pid.c_str(), static_cast<int>(c.Str(p.pod).size()),
                c.Str(p.pod).data());
    ImGui::PopStyleColor();
    // The figures wrap under the name: on one line they ran past the panel's edge.
    ImGui::PushTextWrapPos(0);
    // Unknown figures (-1; a CPU count of 0) read "-": cAdvisor has no runnable threads, context
    // switches or cpuset, and a cluster bundle no node CPU count.
    std::string limit = ps.cpu_limit > 0 ? fmt::format("limit {:.2f} CPUs", ps.cpu_limit)
                        : ps.cpus > 0    ? fmt::format("no CPU limit ({:.0f} CPUs)", ps.cpus)
                                         : std::string("no CPU limit (CPUs -)");
    const std::string cpuset = c.Str(p.cpuset).empty() ? "-" : Printable(c.Str(p.cpuset));
    std::string line = fmt::format(
        "{}, cpuset {} | threads {}, runnable {}, used {} CPUs | switches {} vol, {} invol | "
        "throttled {}{}",
        limit, cpuset, OrDash(ps.threads_mean, fmt::format("{:.0f}", ps.threads_mean)),
        OrDash(ps.runnable_mean, fmt::format("{:.1f}", ps.runnable_mean)),
        OrDash(ps.cpu_cores, fmt::format("{:.2f}", ps.cpu_cores)),
        OrDash(ps.voluntary_per_s, fmt::format("{:.0f}/s", ps.voluntary_per_s)),
        OrDash(ps.involuntary_per_s, fmt::format("{:.0f}/s", ps.involuntary_per_s)),
        OrDash(ps.throttled_pct, fmt::format("{:.0f}%", ps.throttled_pct)),
        p.exited ? " | exited" : "");
    ImGui::TextDisabled("%s", line.c_str());
    v->figures.push_back(ps.task + ": " + line);
    for (const SchedStats& sc : s.analysis.sched) {
      if (sc.process != ps.process) continue;
      std::string sched = fmt::format(
          "  eBPF sched: run-queue wait mean {}, p99 {} over {} waits; {}% of switches "
          "involuntary",
          // As the text report's Scheduling table: durations, the p99 as its bucket's bound.
          OrDash(sc.runq_mean_us, FormatNs(sc.runq_mean_us * 1e3)),
          OrDash(sc.runq_p99_us, "<= " + FormatNs(sc.runq_p99_us * 1e3)),
          OrDash(static_cast<double>(sc.runq_waits), std::to_string(sc.runq_waits)),
          OrDash(sc.involuntary_share, fmt::format("{:.0f}", 100 * sc.involuntary_share)));
      ImGui::TextDisabled("%s", sched.c_str());
      v->figures.push_back(ps.task + ":" + sched);
    }
    std::vector<Interval> iv = Intervals(c, ps.process);
    Scale(p, ps, iv, v);
    ImGui::PopTextWrapPos();
    Chart(p, ps, iv, t0, t1);
  }
  ImGui::EndChild();
}

}  // namespace tfdiag::view
