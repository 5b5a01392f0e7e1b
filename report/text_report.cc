#include <algorithm>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "analyzers/capture_queries.h"
#include "analyzers/grouping.h"
#include "analyzers/worker_wait.h"
#include "core/duration.h"
#include "core/escape.h"
#include "core/plural.h"
#include "core/saturating.h"
#include "report/breakdown_sections.h"
#include "report/import_sections.h"
#include "report/report.h"
#include "report/table.h"
#include "report/text_style.h"
#include "report/wrap.h"

namespace tfdiag {

namespace text {

std::string Pct(double v) { return fmt::format("{:.1f}%", v); }

std::string FormatFigure(const Figure& f) {
  // -1 marks an unknown figure (as in JSON); no duration, size, rate or count is negative.
  if (f.value == -1 || (f.value < 0 && f.unit != "%" && f.unit != "ratio")) return "unknown";
  if (f.unit == "us") return FormatDuration(f.value * 1e3);
  if (f.unit == "ns") return FormatDuration(f.value);
  if (f.unit == "s") return FormatDuration(f.value * 1e9);
  if (f.unit == "bytes") return FormatBytes(f.value);
  if (f.unit == "bytes/s") return FormatBytes(f.value) + "/s";
  if (f.unit == "%") return fmt::format("{:.1f}%", f.value);
  if (f.unit == "count") {
    // Averages (1.4 runnable threads) keep their fraction; counts print whole.
    return f.value == static_cast<double>(static_cast<int64_t>(f.value))
               ? fmt::format("{:.0f}", f.value)
               : fmt::format("{:.1f}", f.value);
  }
  if (f.unit == "ratio") return fmt::format("{:.2f}", f.value);
  return WithUnit(f.value, "{:.3g}", f.unit);
}

std::string MoreRows(size_t shown, size_t total) {
  return fmt::format("  {} of {} shown; -f json for all\n", shown, total);
}

}  // namespace text

namespace {

using text::FormatFigure;
using text::kMaxRows;
using text::MoreRows;
using text::Pct;
using text::Style;

void Cluster(const Capture& c, const AnalysisResult& r, const Style& st, std::string* out) {
  std::map<std::string, int> jobs;
  for (const TaskRow& t : c.tasks) ++jobs[std::string(c.Str(t.job))];
  std::string jl;
  for (const auto& [job, n] : jobs) {
    jl += fmt::format("{}{} ({} task{})", jl.empty() ? "" : ", ", job, n, n == 1 ? "" : "s");
  }
  int64_t steps = 0;
  for (const TaskStats& t : r.stats.tasks) {
    if (t.kind != JobKind::kPs) steps = std::max(steps, t.steps);
  }
  *out += st.Bold("Cluster") + "\n";
  // Manifests alone: no task ran, but the job they declare is there (issue 39).
  std::string declared;
  if (jl.empty() && r.k8s != nullptr) {
    std::map<std::string, int> roles;
    for (const K8sReplicaType& rt : r.k8s->replicas) {
      if (!rt.role.empty()) roles[rt.role] += rt.replicas;
    }
    for (const K8sPod& p : r.k8s->pods) {
      if (!p.role.empty()) ++roles[p.role];
    }
    for (const auto& [role, n] : roles) {
      declared +=
          fmt::format("{}{} ({} task{})", declared.empty() ? "" : ", ", role, n, n == 1 ? "" : "s");
    }
  }
  *out += fmt::format("  jobs     {}\n", !jl.empty() ? Printable(jl)
                                         : !declared.empty()
                                             ? "none profiled; declared: " + Printable(declared)
                                             : std::string("none"));
  if (!c.ops.empty()) {
    *out += fmt::format("  devices  {}\n", DeviceCount(c));
    // Steps come from _SOURCE ops when the trace has them, from the profile's own step marks
    // (XPlane group_id stats) when it gives them; otherwise each task is one step.
    const StrId source = c.strings.Find("_SOURCE");
    bool from_source = false;
    if (source != StringPool::kNotFound) {
      for (const NodeRow& node : c.nodes) {  // every node ran at least once
        if (node.name == source) {
          from_source = true;
          break;
        }
      }
    }
    const bool marked = c.stats.marked_step_tasks > 0;
    // "per worker" only where there is one (a chief or a single process steps alone).
    bool worker = false;
    for (const TaskStats& t : r.stats.tasks) worker = worker || t.kind == JobKind::kWorker;
    const std::string per = worker ? "per worker" : "per task";
    *out += fmt::format(
        "  steps    {} ({})\n", steps,
        from_source && marked ? per + ", from _SOURCE ops and the profile's group_id step stats"
        : from_source         ? per + ", from _SOURCE ops"
        : marked              ? per + ", from the profile's group_id step stats"
                              : "no _SOURCE ops nor step stats: each task's ops count as one step");
    if (c.captures.size() > 1) {
      // Separate captures (ProfilerHook dumps): the time captured, not the gaps (issue 39).
      *out += fmt::format("  captured {} ({} over {}; {} ops)\n",
                          FormatDurationShort(double(c.CapturedNs())),
                          Count(c.captures.size(), "capture"),
                          FormatDuration(double(SatSub(c.end, c.start))), c.ops.size());
    } else {
      *out += fmt::format("  span     {} ({} ops)\n",
                          FormatDuration(double(SatSub(c.end, c.start))), c.ops.size());
    }
  }
  if (!c.processes.empty()) {
    *out += fmt::format("  live     {} over {:.1f} s\n", Count(c.processes.size(), "process"),
                        (c.meta.window_end - c.meta.window_start) / 1e9);
  }
  *out += "\n";
}

void Tasks(const AnalysisResult& r, const TextReportOptions& o, const Style& st, std::string* out) {
  TextTable t({"task", ">devices", ">ops", ">busy", ">busy%", ">op time", ">RecvTensor",
               ">recv time", ">steps", ">step median", "top op types (time)"});
  for (const TaskStats& s : r.stats.tasks) {
    std::string types;
    for (int i = 0; i < o.max_op_types && i < static_cast<int>(s.by_type.size()); ++i) {
      const std::string next = fmt::format("{}{} {}", i ? ", " : "", s.by_type[i].type,
                                           FormatDuration(double(s.by_type[i].total_ns)));
      // On a terminal the free-text cell stays short: the types that fit in 48 columns (at least
      // one), then "..." (-f json lists them all).
      if (i > 0 && st.width > 0 && TextColumns(types) + TextColumns(next) > 48) {
        types += ", ...";
        break;
      }
      types += next;
    }
    t.AddRow({s.label, std::to_string(s.devices), std::to_string(s.ops),
              FormatDuration(double(s.busy_ns)), Pct(s.busy_pct),
              FormatDuration(double(s.op_time_ns)), std::to_string(s.recv_count),
              FormatDuration(double(s.recv_ns)), std::to_string(s.steps),
              FormatDuration(double(s.step_median_ns)), types});
  }
  *out += st.Bold("Tasks") + st.Dim("  (busy = union of op intervals; op time = sum)") + "\n";
  *out += t.Render() + "\n";
  for (const TaskStats& s : r.stats.tasks) {
    if (s.warmup_steps == 0) continue;
    *out += fmt::format(
        "  warm-up: {} of {}'s first step(s) of a session ({} the longest, > 3x the median of the "
        "rest) left out of its step median and of the median step the rules look at\n",
        s.warmup_steps, s.label, FormatDuration(double(s.warmup_ns)));
  }
}

// XProf's step-time breakdown per task (and per capture), under the Tasks table.
void Breakdowns(const Capture& c, const AnalysisResult& r, std::string* out) {
  const std::string text = BreakdownText(c, r.stats);
  if (!text.empty()) *out += text + "\n";
}

void Edges(const Capture& c, const Style& st, std::string* out);

// Where the variables live when the job has no PS (a worker acting as one), in one line.
void VariableHosts(const AnalysisResult& r, const Style& st, std::string* out) {
  if (r.stats.num_ps > 0) return;
  std::string hosts;
  for (const TaskStats& s : r.stats.tasks) {
    if (s.variables.empty()) continue;
    hosts += fmt::format("{}{} ({} variable{}: {}{})", hosts.empty() ? "" : ", ", s.label,
                         s.variables.size(), s.variables.size() == 1 ? "" : "s",
                         s.variables[0].name, s.variables.size() > 1 ? ", ..." : "");
  }
  if (hosts.empty()) return;
  *out += st.Bold("Variables") + st.Dim("  (no PS task: the tasks below host the variables)") +
          "\n  " + hosts + "\n\n";
}

// Per worker, its median step's critical path on the worker: its largest segments in time
// order (compute runs, and waits with the tensor and task that ended them). Workers with the
// longest median step first, 8 at most.
void CriticalPaths(const Capture& c, const AnalysisResult& r, const Style& st, std::string* out) {
  if (r.graph == nullptr) return;
  const StepGraph& g = *r.graph;
  std::vector<std::pair<TimeNs, uint32_t>> workers;  // (median step length, step)
  for (uint32_t t = 0; t < c.tasks.size(); ++t) {
    if (c.tasks[t].kind != JobKind::kWorker && c.tasks[t].kind != JobKind::kChief &&
        c.tasks[t].kind != JobKind::kMaster) {
      continue;
    }
    const uint32_t s = g.MedianStep(t);
    if (s != kNoIndex) workers.emplace_back(g.steps()[s].end - g.steps()[s].start, s);
  }
  if (workers.empty()) return;
  std::stable_sort(workers.begin(), workers.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  *out += st.Bold("Critical path of the median step") +
          st.Dim(
              "  (per worker, in its median step: the largest segments, in order; a finding's "
              "waits are means over all its steps)") +
          "\n";
  if (c.edges.empty() && g.TransferCounts().empty() && g.ambiguous_inputs() == 0) {
    // A profile whose events carry no op inputs, DataFlow arrows, RecvTensor labels or
    // rendezvous keys: no wait can be tied to a tensor (issue 35: say so, never guess).
    *out +=
        "  waits not named: this profile records no cross-task transfers (no op inputs, "
        "DataFlow arrows, RecvTensor labels or rendezvous keys)\n";
  }
  for (size_t k = 0; k < workers.size() && k < 8; ++k) {
    const StepNode& n = g.steps()[workers[k].second];
    std::vector<PathSegment> seg = g.Segments(workers[k].second);
    // The 4 largest, kept in time order.
    std::vector<size_t> idx(seg.size());
    for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
      return seg[a].end - seg[a].start > seg[b].end - seg[b].start;
    });
    if (idx.size() > 4) idx.resize(4);
    std::sort(idx.begin(), idx.end());
    std::string line;
    for (size_t i : idx) {
      const PathSegment& p = seg[i];
      const std::string dur = FormatDurationShort(double(p.end - p.start));
      std::string what = "compute " + dur;
      if (p.wait) {
        const WaitLabel l = LabelWait(c, g, p);
        what = l.input ? "input " + dur : "wait " + dur + Printable(l.what);
      }
      line += (line.empty() ? "" : " -> ") +
              fmt::format("+{} {}", FormatDurationShort(double(p.start - n.start)), what);
    }
    *out += WrapText(fmt::format("{} (step {}, {}): {}", c.TaskLabelOf(n.task), n.index + 1,
                                 FormatDurationShort(double(n.end - n.start)), line),
                     st.width, "  ", "      ");
  }
  if (workers.size() > 8) *out += fmt::format("  ({} more workers)\n", workers.size() - 8);
  *out += "\n";
}

void PsLoad(const Capture& c, const AnalysisResult& r, const Style& st, std::string* out) {
  VariableHosts(r, st, out);
  if (r.stats.num_ps == 0) {
    Edges(c, st, out);
    return;
  }
  TextTable t({"PS", ">busy", ">busy%", ">share", ">variables", ">served", ">tensors", ">bytes out",
               ">received", "top variables (op time share)"});
  for (const TaskStats& s : r.stats.tasks) {
    if (s.kind != JobKind::kPs) continue;
    std::string vars;
    // No "0%" rows: variables under 0.1% of the PS's op time are counted, not listed.
    size_t tiny = 0;
    for (size_t i = 0; i < s.variables.size(); ++i) {
      const double pct = 100 * s.variables[i].share;
      if (pct < 0.1) {
        ++tiny;
      } else if (i < 3) {
        vars += fmt::format("{}{} {}%", vars.empty() ? "" : ", ", s.variables[i].name,
                            pct < 1 ? fmt::format("{:.1f}", pct) : fmt::format("{:.0f}", pct));
      }
    }
    if (tiny > 0) vars += fmt::format("{}{} more under 0.1%", vars.empty() ? "" : ", ", tiny);
    t.AddRow({s.label, FormatDuration(double(s.busy_ns)), Pct(s.busy_pct), Pct(100 * s.ps_share),
              std::to_string(s.variables.size()), std::to_string(s.edges_out),
              std::to_string(s.tensors_out),
              s.bytes_out >= 0 ? FormatBytes(double(s.bytes_out)) : "-", std::to_string(s.edges_in),
              vars});
  }
  *out += st.Bold("PS load") +
          st.Dim(
              "  (share of all PS busy time; served/received = cross-task "
              "transfers)") +
          "\n";
  *out += t.Render() + "\n";
  Edges(c, st, out);
}

void Edges(const Capture& c, const Style& st, std::string* out) {
  if (c.edges.empty()) return;
  // Tensors each task serves, over all receivers, most transfers first.
  struct Served {
    std::set<uint32_t> to;
    int64_t count = 0, bytes = 0;
    bool sized = true;
  };
  std::map<std::pair<uint32_t, StrId>, Served> served;
  for (const EdgeRow& row : c.edges) {
    Served& s = served[{row.src_task, row.tensor}];
    s.to.insert(row.dst_task);
    s.count += row.count;
    if (row.bytes < 0)
      s.sized = false;
    else
      s.bytes += row.bytes;
  }
  std::vector<std::pair<std::pair<uint32_t, StrId>, Served>> rows(served.begin(), served.end());
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto& a, const auto& b) { return a.second.count > b.second.count; });
  constexpr size_t kMax = kMaxRows;
  TextTable e({"from", "tensor", ">to tasks", ">transfers", ">bytes"});
  for (size_t i = 0; i < rows.size() && i < kMax; ++i) {
    const auto& [key, s] = rows[i];
    e.AddRow({std::string(c.TaskLabelOf(key.first)), std::string(c.Str(key.second)),
              std::to_string(s.to.size()), std::to_string(s.count),
              s.sized ? FormatBytes(double(s.bytes)) : "-"});
  }
  *out += st.Bold("Cross-task tensors") +
          st.Dim(fmt::format("  ({} tensors over {} task pairs{})", rows.size(), c.edges.size(),
                             rows.size() > kMax ? ", most transferred first" : "")) +
          "\n";
  *out += e.Render();
  if (rows.size() > kMax) *out += MoreRows(kMax, rows.size());
  *out += "\n";
}

void Processes(const Capture& c, const AnalysisResult& r, const Style& st, std::string* out) {
  if (r.processes.empty()) return;
  auto opt = [](double v, const char* f) {
    return v < 0 ? std::string("-") : fmt::format(fmt::runtime(f), v);
  };
  // A node column when the processes name their nodes (cluster bundles; issue 39); a bundle of
  // one host names it in the heading.
  bool nodes = false;
  for (const ProcessStats& p : r.processes)
    nodes = nodes || !c.Str(c.processes[p.process].node).empty();
  // Headers with their units (issue 39: "runnable 0.7", "invol/s 747" read as bare numbers).
  std::vector<std::string> head({"task", ">pid", "pod", "QoS", ">CPU limit (CPUs)", "cpuset",
                                 ">threads", ">runnable threads", ">CPU used (CPUs)",
                                 ">invol. ctx switches/s", ">throttled periods"});
  if (nodes) head.insert(head.begin() + 3, "node");
  TextTable t(head);
  for (const ProcessStats& p : r.processes) {
    const ProcessRow& row = c.processes[p.process];
    // Figures a capture built without /proc (analyze --prometheus) lacks read "-", not 0.
    std::vector<std::string> cells(
        {p.task + (row.exited ? " (exited)" : ""), row.pid > 0 ? std::to_string(row.pid) : "-",
         Printable(c.Str(row.pod)), std::string(c.Str(row.qos)),
         row.cpu_limit > 0 ? fmt::format("{:.2g}", row.cpu_limit) : "none",
         row.cpuset_cpus > 0 ? fmt::format("{} of {}", row.cpuset_cpus,
                                           row.host_cpus > 0 ? std::to_string(row.host_cpus) : "?")
                             : "-",
         fmt::format("{:.0f}", p.threads_mean), opt(p.runnable_mean, "{:.1f}"),
         fmt::format("{:.2f}", p.cpu_cores), opt(p.involuntary_per_s, "{:.0f}"),
         opt(p.throttled_pct, "{:.0f}%")});
    if (nodes) {
      cells.insert(cells.begin() + 3, c.Str(row.node).empty() ? "-" : Printable(c.Str(row.node)));
    }
    t.AddRow(std::move(cells));
  }
  *out += st.Bold("Processes") +
          st.Dim(fmt::format("  (live, {} samples every {} ms on {}, kernel {})",
                             c.process_samples.size(), c.meta.interval_ms, Printable(c.meta.host),
                             Printable(c.meta.kernel))) +
          "\n";
  *out += t.Render() + "\n";
}

// The Import section; nothing at all when no file was read (analyze --prometheus: no empty
// header, issue 48).
void Import(const Capture& c, const AnalysisResult& r, const Style& st, std::string* report) {
  std::string section;
  std::string* out = &section;
  TextTable t({"file", "format", ">size", ">events", ">ops", ">skipped"});
  for (const FileStats& f : c.stats.files) {
    t.AddRow({f.path, f.format + (f.gzip ? "+gzip" : ""), FormatBytes(double(f.bytes)),
              std::to_string(f.events), std::to_string(f.ops), std::to_string(f.skipped)});
  }
  if (!t.empty()) *out += t.Render();
  if (r.k8s != nullptr && !r.k8s->summaries.empty()) {  // manifests and pod lists
    TextTable m({"manifest / pod list", "format", ">documents", ">objects", ">TF replica types",
                 ">pods (TF)"});
    for (const K8sFileSummary& f : r.k8s->summaries) {
      m.AddRow({f.file, f.format, std::to_string(f.documents), std::to_string(f.objects),
                std::to_string(f.replica_types), fmt::format("{} ({})", f.pods, f.tf_pods)});
    }
    *out += m.Render();
    for (const K8sFileSummary& f : r.k8s->summaries) {
      if (f.pods > 0 && f.tf_pods == 0 && f.replica_types == 0) {
        *out += fmt::format("  {}: no PS/worker/chief pod among its {} pod{}\n", Printable(f.file),
                            f.pods, f.pods == 1 ? "" : "s");
      }
    }
  }
  for (const auto& [reason, n] : c.stats.skipped) {
    *out += fmt::format("  skipped {} malformed event(s): {}\n", n, reason);
  }
  if (c.stats.unresolved_inputs > 0) {
    *out += fmt::format("  {} _S<N> input(s) whose producer is not in the consumer's step\n",
                        c.stats.unresolved_inputs);
  }
  if (c.stats.ambiguous_inputs > 0) {
    *out += fmt::format(
        "  {} _S<N> input(s) ambiguous: several tasks produce them in the step and no arrow "
        "says which sent them (not in the edges table)\n",
        c.stats.ambiguous_inputs);
  }
  // Each note wrapped under itself on a terminal (the per-capture lines ran past 400 columns).
  const std::string notes = ImportNotesText(c);
  for (size_t pos = 0, nl; pos < notes.size(); pos = nl + 1) {
    nl = notes.find('\n', pos);
    if (nl == std::string::npos) nl = notes.size();
    const std::string line = notes.substr(pos, nl - pos);
    const size_t lead = std::min(line.find_first_not_of(' '), line.size());
    *out += WrapText(std::string_view(line).substr(lead), st.width, line.substr(0, lead),
                     std::string(lead + 2, ' '));
  }
  if (section.empty()) return;
  *report += st.Bold("Import") + "\n" + section + "\n";
}

}  // namespace

std::string RenderText(const Capture& c, const AnalysisResult& r, const TextReportOptions& o) {
  using text::Findings;
  using text::FixFirst;
  Style st{o.color, o.width};
  if (o.brief) return text::Brief(r, st);
  std::string out = FixFirst(r);
  out += text::OutlookText(r, st);
  Cluster(c, r, st, &out);
  if (!c.ops.empty()) {
    Tasks(r, o, st, &out);
    Breakdowns(c, r, &out);
    PsLoad(c, r, st, &out);
    CriticalPaths(c, r, st, &out);
  }
  Processes(c, r, st, &out);
  out += SchedText(c, r.sched, st.on);
  Import(c, r, st, &out);
  if (!r.notes.empty()) {
    out += st.Bold("Inputs disagree") + "\n";
    for (const std::string& n : r.notes) {
      out += WrapText("warning: " + Printable(n), st.width, "  ", "    ");
    }
    out += "\n";
  }
  out += HorovodText(c, st.on);
  Findings(r, st, &out);
  return out;
}

}  // namespace tfdiag
