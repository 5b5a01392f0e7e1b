#include <algorithm>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "analyzers/grouping.h"
#include "analyzers/worker_wait.h"
#include "core/duration.h"
#include "core/plural.h"
#include "core/saturating.h"
#include "report/escape.h"
#include "report/import_sections.h"
#include "report/report.h"
#include "report/table.h"
#include "report/wrap.h"

namespace tfdiag {

namespace {

struct Style {
  bool on;
  size_t width = 0;  // TextReportOptions::width
  std::string Bold(std::string_view s) const { return Wrap("1", s); }
  std::string Dim(std::string_view s) const { return Wrap("2", s); }
  std::string Sev(Severity sev, std::string_view s) const {
    switch (sev) {
      case Severity::kCritical:
      case Severity::kHigh:
        return Wrap("1;31", s);
      case Severity::kMedium:
        return Wrap("1;33", s);
      case Severity::kLow:
        return Wrap("1;36", s);
      default:
        return Wrap("1", s);
    }
  }
  std::string Wrap(std::string_view code, std::string_view s) const {
    return on ? fmt::format("\x1b[{}m{}\x1b[0m", code, s) : std::string(s);
  }
};

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

// Rows a text table shows before it says how many more there are.
constexpr size_t kMaxRows = 12;

std::string MoreRows(size_t shown, size_t total) {
  return fmt::format("  {} of {} shown; -f json for all\n", shown, total);
}

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
    *out += fmt::format("  devices  {}\n", c.devices.size());
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
    *out += fmt::format(
        "  steps    {} ({})\n", steps,
        from_source && marked ? "per worker, from _SOURCE ops and the profile's group_id step stats"
        : from_source         ? "per worker, from _SOURCE ops"
        : marked              ? "per worker, from the profile's group_id step stats"
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

void Import(const Capture& c, const AnalysisResult& r, const Style& st, std::string* out) {
  TextTable t({"file", "format", ">size", ">events", ">ops", ">skipped"});
  for (const FileStats& f : c.stats.files) {
    t.AddRow({f.path, f.format + (f.gzip ? "+gzip" : ""), FormatBytes(double(f.bytes)),
              std::to_string(f.events), std::to_string(f.ops), std::to_string(f.skipped)});
  }
  *out += st.Bold("Import") + "\n";
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
  *out += "\n";
}

// The objects of a grouped finding: subject and the first figures of each, as a table.
void Objects(const Finding& f, size_t width, std::string* out) {
  const FindingObject& first = f.objects[0];
  if (f.subject_kind != "task" || first.evidence.empty()) {
    // Manifest objects, variables: each with its own one-line summary. Objects of one file
    // name it once, not on every row (issue 39).
    std::string file;
    const std::vector<std::string> subjects = ObjectSubjects(f, &file);
    if (!file.empty()) *out += fmt::format("      in {}:\n", Printable(file));
    for (size_t k = 0; k < f.objects.size() && k < kMaxRows; ++k) {
      *out +=
          WrapText(fmt::format("{}: {}", Printable(subjects[k]), Printable(f.objects[k].summary)),
                   width, "      - ", "        ");
    }
    if (f.objects.size() > kMaxRows) *out += "  " + MoreRows(kMaxRows, f.objects.size());
    return;
  }
  // The first 3 figures, then the throttled share wherever it is (what a CFS quota costs: the
  // thread-oversubscription table lacked it, issue 39); a node column when objects name nodes.
  std::vector<size_t> figures;
  for (size_t i = 0; i < first.evidence.size(); ++i) {
    if (i < 3 || first.evidence[i].label == "throttled CFS periods") figures.push_back(i);
  }
  bool nodes = false;
  for (const FindingObject& o : f.objects) nodes = nodes || !o.node.empty();
  std::vector<std::string> headers = {f.subject_kind};
  if (nodes) headers.push_back("node");
  for (size_t i : figures) {
    std::string label = first.evidence[i].label;
    const size_t at = label.find(first.subject);
    if (at != std::string::npos) label.replace(at, first.subject.size(), "each");
    headers.push_back(">" + label);
  }
  TextTable t(headers);
  for (size_t k = 0; k < f.objects.size() && k < kMaxRows; ++k) {
    const FindingObject& o = f.objects[k];
    std::vector<std::string> row = {Printable(o.subject)};
    if (nodes) row.push_back(o.node.empty() ? "-" : Printable(o.node));
    for (size_t i : figures) {
      // By label: an object may lack a figure its first sibling has.
      auto it = std::find_if(o.evidence.begin(), o.evidence.end(),
                             [&](const Figure& e) { return e.label == first.evidence[i].label; });
      row.push_back(it != o.evidence.end() ? FormatFigure(*it) : "-");
    }
    t.AddRow(std::move(row));
  }
  *out += t.Render(4);
  if (f.objects.size() > kMaxRows) *out += "  " + MoreRows(kMaxRows, f.objects.size());
}

// The report's opening line: the finding whose fix a trusted prediction says buys the most
// (Impact::trusted), or "" when no trusted prediction saves anything.
std::string FixFirst(const AnalysisResult& r) {
  const Finding* best = nullptr;
  for (const Finding& f : r.findings) {
    if (!f.impact.trusted() || f.impact.saving_pct <= 0) continue;
    if (best == nullptr || f.impact.saving_pct > best->impact.saving_pct) best = &f;
  }
  if (best == nullptr) return "";
  return fmt::format("Fix first: {} on {}: step {} -> {} (-{:.0f}%)\n\n", best->rule_id,
                     Printable(best->subject), FormatDurationShort(best->impact.step_ns),
                     FormatDurationShort(best->impact.step_ns_after_fix), best->impact.saving_pct);
}

void Findings(const AnalysisResult& r, const Style& st, std::string* out) {
  // "19 rules run" above 15 that could not judge these inputs read as 19 verdicts.
  const size_t judged =
      r.rules_run.size() - std::min(r.rules_run.size(), r.rules_not_applicable.size());
  // "20 analyze rules" beside `rules list`'s 21: the rest run in tfdiag scaling (issue 39).
  std::string scaling;
  for (const std::string& id : r.rules_scaling) scaling += (scaling.empty() ? "" : ", ") + id;
  if (!scaling.empty()) scaling = "; " + scaling + " runs in tfdiag scaling";
  *out +=
      st.Bold(fmt::format("Findings ({})", r.findings.size())) +
      st.Dim(r.rules_not_applicable.empty()
                 ? fmt::format("  ({} run{})", Count(r.rules_run.size(), "analyze rule"), scaling)
                 : fmt::format("  ({} of {} analyze rules could judge these inputs; Not "
                               "judged below)",
                               judged, r.rules_run.size())) +
      "\n";
  if (r.findings.empty()) *out += "  No rule fired.\n";
  for (const Finding& f : r.findings) {
    std::string sev(SeverityName(f.severity));
    std::transform(sev.begin(), sev.end(), sev.begin(), ::toupper);
    *out += fmt::format("\n  {} {} {}\n", st.Sev(f.severity, "[" + sev + "]"), st.Bold(f.rule_id),
                        Printable(f.subject));
    // Prose wrapped at st.width (on a terminal) with a hanging indent (issue 39: lines ran to 493
    // columns); tables stay as wide as their cells.
    *out += WrapText(Printable(f.summary), st.width, "    ", "      ");
    if (f.objects.size() > 1) {
      // Manifest findings are per container: count them as such, not as "manifests".
      *out += fmt::format("    {}:\n", ObjectsHeading(f));
      Objects(f, st.width, out);
    } else {
      *out += "    evidence:\n";
      for (const Figure& fig : f.evidence) {
        *out += fmt::format("      - {}: {}\n", fig.label, FormatFigure(fig));
      }
    }
    if (f.impact.trusted()) {
      // The range (issue 35), both ends in the unit of the larger: "142-151 ms".
      const double lo = f.impact.low_ns, hi = f.impact.high_ns;
      const std::string range = hi >= 1e9   ? fmt::format("; {:.2f}-{:.2f} s", lo / 1e9, hi / 1e9)
                                : hi >= 1e6 ? fmt::format("; {:.1f}-{:.1f} ms", lo / 1e6, hi / 1e6)
                                : hi > 0    ? fmt::format("; {:.0f}-{:.0f} us", lo / 1e3, hi / 1e3)
                                            : "";
      *out +=
          WrapText(fmt::format("impact: step {} -> {} ({:+.0f}%{}), {}, confidence {}",
                               FormatDurationShort(f.impact.step_ns),
                               FormatDurationShort(f.impact.step_ns_after_fix),
                               -f.impact.saving_pct, range, f.impact.method, f.impact.confidence),
                   st.width, "    ", "      ");
      *out += WrapText(Printable(f.impact.why), st.width, "      ", "      ");
    } else if (f.impact.set && f.impact.method != "none") {
      // A replay with low confidence: its figure would mislead, so only why (issue 35).
      *out += WrapText(fmt::format("impact: not predicted (confidence {}): {}", f.impact.confidence,
                                   Printable(f.impact.why)),
                       st.width, "    ", "      ");
    } else if (f.impact.set) {
      *out +=
          WrapText("impact: not predicted: " + Printable(f.impact.why), st.width, "    ", "      ");
    }
    // What each task waits for (the step graph): a grouped finding's objects' (the first cause
    // of each task, biggest first), else the finding's own list (hot-ps: per worker).
    std::vector<const WaitFor*> waits;
    if (f.objects.size() <= 1) {
      for (const WaitFor& w : f.waits) waits.push_back(&w);
    } else {
      for (const FindingObject& o : f.objects) {
        if (!o.waits.empty()) waits.push_back(&o.waits[0]);
      }
      std::stable_sort(waits.begin(), waits.end(),
                       [](const WaitFor* a, const WaitFor* b) { return a->wait_ns > b->wait_ns; });
    }
    if (waits.empty()) {
      for (const WaitFor& w : f.waits) waits.push_back(&w);
    }
    if (!waits.empty()) {
      *out += "    waits:\n";
      for (size_t k = 0; k < waits.size() && k < 8; ++k) {
        *out += WrapText(Printable(waits[k]->text), st.width, "      - ", "        ");
      }
      if (waits.size() > 8) *out += fmt::format("      ({} more)\n", waits.size() - 8);
    }
    if (!f.ops.empty()) {
      std::string ops;
      for (const std::string& o : f.ops) ops += (ops.empty() ? "" : ", ") + Printable(o);
      *out += WrapText("behind it: " + ops, st.width, "    ", "      ");
    }
    *out += "    fix:\n";
    size_t pos = 0;
    while (pos <= f.fix.size()) {
      size_t nl = f.fix.find('\n', pos);
      if (nl == std::string::npos) nl = f.fix.size();
      // A long line of the fix wraps under itself (snippet lines keep their indent).
      const std::string line = f.fix.substr(pos, nl - pos);
      const size_t lead = std::min(line.find_first_not_of(' '), line.size());
      *out += WrapText(line, st.width, "      ", std::string(8 + lead, ' '));
      pos = nl + 1;
    }
    for (size_t i = 0; i < f.references.size(); ++i) {
      std::string ref =
          WrapText(f.references[i], st.width, i == 0 ? "    see: " : "         ", "           ");
      ref.pop_back();  // the '\n', outside the dim span
      *out += st.Dim(ref) + "\n";
    }
  }
  if (r.rules_not_applicable.empty() && r.rules_disabled.empty() && r.rules_ignored.empty()) return;
  // Rules that could not judge this input, one line per reason.
  std::vector<std::pair<std::string, std::string>> by_reason;
  for (const auto& rule : r.rules_not_applicable) {  // (id, why); clang 14 cannot capture a
    const std::string& why = rule.second;            // structured binding in the lambda
    auto it = std::find_if(by_reason.begin(), by_reason.end(),
                           [&](const auto& p) { return p.first == why; });
    if (it == by_reason.end()) {
      by_reason.emplace_back(why, rule.first);
    } else {
      it->second += ", " + rule.first;
    }
  }
  *out +=
      "\n" + st.Bold("Not judged") + st.Dim("  (rules that could not run on this input)") + "\n";
  for (const auto& [why, ids] : by_reason)
    *out += WrapText(ids + ": " + why, st.width, "  ", "    ");
  for (const std::string& id : r.rules_scaling) {
    *out += fmt::format("  {}: runs in tfdiag scaling (compares runs), not in analyze\n", id);
  }
  std::string disabled;
  for (const std::string& id : r.rules_disabled) disabled += (disabled.empty() ? "" : ", ") + id;
  // Opt-outs by annotation, one line per rule: "cpu-qos: ignored on 2 objects (...): a, b".
  std::vector<std::pair<std::string, std::vector<std::string>>> ignored;
  for (const auto& rule_subject : r.rules_ignored) {
    const std::string& id = rule_subject.first;  // not a binding: lambdas capture it (C++17)
    auto it =
        std::find_if(ignored.begin(), ignored.end(), [&](const auto& p) { return p.first == id; });
    if (it == ignored.end()) it = ignored.insert(ignored.end(), {id, {}});
    it->second.push_back(rule_subject.second);
  }
  for (const auto& [id, subjects] : ignored) {
    *out +=
        fmt::format("  {}: ignored on {} object{} (tfdiag.io/ignore annotation): {}{}\n", id,
                    subjects.size(), subjects.size() == 1 ? "" : "s", Printable(subjects[0]),
                    subjects.size() > 1 ? fmt::format(" and {} more", subjects.size() - 1) : "");
  }
  if (!disabled.empty())
    *out += fmt::format("  {}: disabled (--disable or a rules file)\n", disabled);
}

}  // namespace

std::string RenderText(const Capture& c, const AnalysisResult& r, const TextReportOptions& o) {
  Style st{o.color, o.width};
  std::string out = FixFirst(r);
  Cluster(c, r, st, &out);
  if (!c.ops.empty()) {
    Tasks(r, o, st, &out);
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
