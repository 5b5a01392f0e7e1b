#include "report/scaling_report.h"

#include <fmt/format.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <cmath>

#include "core/plural.h"
#include "report/json_writer.h"
#include "report/table.h"
#include "report/wrap.h"

namespace tfdiag {

namespace {

// Control characters from inputs (paths, variable names) as \xNN, so they cannot drive a
// terminal.
std::string Printable(std::string_view s) {
  std::string out;
  for (unsigned char ch : s) {
    if (ch < 0x20 || ch == 0x7f) {
      out += fmt::format("\\x{:02x}", ch);
    } else {
      out += static_cast<char>(ch);
    }
  }
  return out;
}

std::string Pct(double v) { return v < 0 ? "-" : fmt::format("{:.0f}%", v); }

// Durations in ns whatever unit the figure uses, as the analyze JSON does.
std::string FigureText(const Figure& f) {
  if (f.unit == "ns") return FormatDuration(f.value);
  if (f.unit == "%") return fmt::format("{:.1f}%", f.value);
  if (f.unit == "count") return fmt::format("{:.0f}", f.value);
  if (f.unit == "ratio") return fmt::format("{:.2f}", f.value);  // not "12.74 ratio"
  return WithUnit(f.value, "{:.3g}", f.unit);                    // "0.0776 CPUs", "1 CPU"
}

std::string Chart(const ScalingResult& r) {
  constexpr int kWidth = 50;
  double top = 0;
  const ScalingRun& base = r.runs.front();
  for (const ScalingRun& run : r.runs) {
    top = std::max(
        {top, run.throughput_steps_per_s, base.throughput_steps_per_s * run.ideal_speedup});
  }
  if (top <= 0) return "";
  std::string s = fmt::format(
      "throughput ({}) against workers: '#' measured, '|' ideal (linear from the smallest "
      "run)\n",
      base.throughput_unit);
  for (const ScalingRun& run : r.runs) {
    const double ideal = base.throughput_steps_per_s * run.ideal_speedup;
    const int bar = static_cast<int>(std::lround(kWidth * run.throughput_steps_per_s / top));
    const int mark = std::min(kWidth, static_cast<int>(std::lround(kWidth * ideal / top)));
    std::string line(kWidth + 1, ' ');
    for (int i = 0; i < bar && i < kWidth + 1; ++i) line[i] = '#';
    line[mark] = '|';
    s += fmt::format("  {:>5} {:<7}  {}  {:.1f} (ideal {:.1f})\n", run.workers,
                     Noun(run.workers, "worker"), line, run.throughput_steps_per_s, ideal);
  }
  return s;
}

using json::Json;
using json::WriteFinding;

template <typename W>
void Write(const ScalingResult& r, W* w) {
  Json<W> j(w);
  w->StartObject();
  j.Str("schema", kScalingSchema);
  j.Key("tool");
  w->StartObject();
  j.Str("name", "tfdiag");
  j.Str("version", TFDIAG_VERSION);
  w->EndObject();
  j.Strings("warnings", r.warnings);
  j.Strings("notes", r.notes);
  j.Key("runs");
  w->StartArray();
  for (const ScalingRun& run : r.runs) {
    w->StartObject();
    j.Str("name", run.name);
    j.Int("workers", run.workers);
    j.Int("ps", run.ps);
    j.Int("steps", run.steps);
    j.Int("step_median_ns", run.step_median_ns);
    // A proxy is no steps/s: it has its own key, named for what it is.
    j.NumOrUnknown("throughput_steps_per_s",
                   run.throughput_proxy ? -1 : run.throughput_steps_per_s);
    j.NumOrUnknown("worker_bytes_per_s", run.throughput_proxy ? run.throughput_steps_per_s : -1);
    j.Str("throughput_source", run.throughput_source);
    j.Key("throughput_proxy");
    w->Bool(run.throughput_proxy);
    j.Str("throughput_unit", run.throughput_unit);
    j.NumOrUnknown("throughput_examples_per_s", run.throughput_examples_per_s);
    j.NumOrUnknown("speedup", run.speedup);
    j.NumOrUnknown("ideal_speedup", run.ideal_speedup);
    j.NumOrUnknown("efficiency", run.efficiency);
    j.NumOrUnknown("input_wait_pct", run.input_wait_pct);
    j.NumOrUnknown("throttled_pct", run.throttled_pct);
    j.NumOrUnknown("cpu_used_pct", run.cpu_used_pct);
    j.NumOrUnknown("runq_wait_pct", run.runq_wait_pct);
    j.NumOrUnknown("steal_pct", run.steal_pct);
    for (const auto& [key, c] :
         {std::pair{"worker_cpu", &run.worker_cpu}, std::pair{"ps_cpu", &run.ps_cpu}}) {
      j.Key(key);
      w->StartObject();
      j.Int("tasks", c->tasks);
      j.NumOrUnknown("cpu_cores", c->cpu_cores);
      j.NumOrUnknown("cpu_limit", c->cpu_limit);
      j.NumOrUnknown("runnable", c->runnable);
      j.NumOrUnknown("runq_wait_pct", c->runq_wait_pct);
      j.IntOrUnknown("runq_p99_ns", c->runq_p99_ns);
      j.NumOrUnknown("switches_per_s", c->switches_per_s);
      j.NumOrUnknown("involuntary_per_s", c->involuntary_per_s);
      j.NumOrUnknown("throttled_pct", c->throttled_pct);
      w->EndObject();
    }
    j.Key("ps_busy_pct");
    w->StartObject();
    for (const ScalingPs& p : run.ps_busy) j.NumOrUnknown(p.task, p.busy_pct);
    w->EndObject();
    // "ps_tasks", not a second "ps" beside the count (a duplicate key: most JSON readers keep
    // the last, so "ps" read as the list and the count was lost).
    j.Key("ps_tasks");
    w->StartArray();
    for (const ScalingPs& p : run.ps_busy) {
      w->StartObject();
      j.Str("task", p.task);
      j.NumOrUnknown("busy_pct", p.busy_pct);
      j.Str("basis", p.basis);
      j.Str("top_variable", p.top_variable);
      j.NumOrUnknown("top_variable_pct", p.top_variable_pct);
      j.NumOrUnknown("cpu_cores", p.cpu_cores);
      w->EndObject();
    }
    w->EndArray();
    w->EndObject();
  }
  w->EndArray();
  j.Key("findings");
  w->StartArray();
  for (const Finding& f : r.findings) WriteFinding(j, f);
  w->EndArray();
  w->EndObject();
}

}  // namespace

std::string RenderScalingText(const ScalingResult& r, size_t width) {
  std::string s =
      fmt::format("tfdiag scaling: {} runs of one job, by worker count\n\n", r.runs.size());
  const bool examples = !r.runs.empty() && r.runs.front().throughput_examples_per_s >= 0;
  const bool proxy = !r.runs.empty() && r.runs.front().throughput_proxy;
  std::vector<std::string> head = {"run",    ">workers",       ">PS",
                                   ">steps", ">step (median)", proxy ? ">bytes/s" : ">steps/s"};
  if (examples) head.push_back(">examples/s");
  for (const char* h : {">speed-up", ">ideal", ">efficiency", ">input wait", "PS busy"}) {
    head.push_back(h);
  }
  TextTable t(head);
  for (const ScalingRun& run : r.runs) {
    std::string busy;
    for (const ScalingPs& p : run.ps_busy) {
      // Without a busy share, the PS's CPU when known (no CPU limit to divide it by).
      busy +=
          fmt::format("{}{} {}", busy.empty() ? "" : ", ", p.task,
                      p.busy_pct < 0 && p.cpu_cores >= 0 ? fmt::format("{:.2f} CPUs", p.cpu_cores)
                                                         : Pct(p.busy_pct));
    }
    std::vector<std::string> row = {Printable(run.name),
                                    std::to_string(run.workers),
                                    std::to_string(run.ps),
                                    std::to_string(run.steps),
                                    FormatDuration(static_cast<double>(run.step_median_ns)),
                                    fmt::format("{:.1f}", run.throughput_steps_per_s)};
    if (examples) row.push_back(fmt::format("{:.0f}", run.throughput_examples_per_s));
    row.push_back(fmt::format("{:.2f}x", run.speedup));
    row.push_back(fmt::format("{:.2f}x", run.ideal_speedup));
    row.push_back(fmt::format("{:.0f}%", 100 * run.efficiency));
    row.push_back(Pct(run.input_wait_pct));
    row.push_back(busy.empty() ? "-" : busy);
    t.AddRow(std::move(row));
  }
  s += t.Render(2);
  if (!r.runs.empty() && !r.runs.front().ps_busy.empty()) {
    s += fmt::format("  (PS busy: {})\n", r.runs.front().ps_busy.front().basis.empty()
                                              ? "unknown"
                                              : r.runs.front().ps_busy.front().basis);
  }
  // How throughput was measured, once per distinct source.
  std::vector<std::string> sources;
  for (const ScalingRun& run : r.runs) {
    if (std::find(sources.begin(), sources.end(), run.throughput_source) == sources.end()) {
      sources.push_back(run.throughput_source);
    }
  }
  for (const std::string& src : sources) s += "  throughput measured as: " + Printable(src) + "\n";
  bool cpu = false;
  for (const ScalingRun& run : r.runs) cpu |= run.cpu_used_pct >= 0 || run.runq_wait_pct >= 0;
  if (cpu) {
    s += "  node CPUs (CPU used of the node's CPUs / run-queue wait share of runnable time):";
    for (const ScalingRun& run : r.runs) {
      s += fmt::format(" {}w {}/{}", run.workers, Pct(run.cpu_used_pct), Pct(run.runq_wait_pct));
    }
    s += "\n";
  }
  // What the tfdiag agents measured (scaling --prometheus), per run and role.
  for (const ScalingRun& run : r.runs) {
    for (const auto& [role, c] :
         {std::pair{"workers", &run.worker_cpu}, std::pair{"PS", &run.ps_cpu}}) {
      if (c->tasks == 0) continue;
      s += fmt::format(
          "  {} workers, {} (tfdiag agents): {}{}\n", run.workers, role, ScalingCpuText(*c),
          c->throttled_pct >= 0 ? fmt::format(", CFS throttled {:.0f}%", c->throttled_pct)
                                : std::string(", no CFS quota"));
    }
  }
  s += "\n" + Chart(r);
  for (const std::string& w : r.warnings) s += "\nwarning: " + Printable(w) + "\n";
  s += "\n";
  bool compared = false;
  for (size_t i = 1; i < r.runs.size(); ++i) compared |= r.runs[i].workers != r.runs[i - 1].workers;
  if (!compared) {
    s += "No two runs differ in worker count: nothing to compare.\n";
  } else if (r.findings.empty()) {
    s += "No scaling limit: throughput follows the worker count between every pair of runs";
    s += r.notes.empty() ? ".\n" : " (but see the notes below).\n";
  }
  for (const Finding& f : r.findings) {
    // "[HIGH]" as analyze prints it (issue 39).
    std::string sev(SeverityName(f.severity));
    std::transform(sev.begin(), sev.end(), sev.begin(), ::toupper);
    s += WrapText(
        fmt::format("[{}] {} {}: {}", sev, f.rule_id, Printable(f.subject), Printable(f.summary)),
        width, "", "    ");
    for (const Figure& fig : f.evidence) {
      s += fmt::format("    {}: {}\n", Printable(fig.label), FigureText(fig));
    }
    s += WrapText(f.fix, width, "  fix: ", "    ");
  }
  for (const std::string& n : r.notes) s += WrapText(Printable(n), width, "note: ", "  ");
  return s;
}

StatusOr<std::string> RenderScalingJson(const ScalingResult& r, bool pretty) {
  return json::RenderDocument(pretty, kScalingSchema, [&](auto* w) { Write(r, w); });
}

}  // namespace tfdiag
