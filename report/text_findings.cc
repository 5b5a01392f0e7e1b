// The text report's Findings and Not judged sections and its "Fix first" line (split out of
// report/text_report.cc).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "analyzers/grouping.h"
#include "analyzers/worker_wait.h"
#include "core/duration.h"
#include "core/escape.h"
#include "core/plural.h"
#include "core/saturating.h"
#include "report/report.h"
#include "report/table.h"
#include "report/text_style.h"
#include "report/wrap.h"

namespace tfdiag::text {

namespace {

// `label` with `subject` in it replaced by "each" ("median step of worker:3" -> "median step of
// each"), as the table's header names an object's own figure.
std::string SubjectAsEach(std::string label, const std::string& subject) {
  for (size_t at = subject.empty() ? std::string::npos : label.find(subject);
       at != std::string::npos; at = label.find(subject, at + 1)) {
    const size_t end = at + subject.size();  // whole: worker:1 is not in "worker:10"
    if (end < label.size() && std::isalnum(static_cast<unsigned char>(label[end]))) continue;
    label.replace(at, subject.size(), "each");
    break;
  }
  return label;
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
    headers.push_back(">" + SubjectAsEach(first.evidence[i].label, first.subject));
  }
  TextTable t(headers);
  for (size_t k = 0; k < f.objects.size() && k < kMaxRows; ++k) {
    const FindingObject& o = f.objects[k];
    std::vector<std::string> row = {Printable(o.subject)};
    if (nodes) row.push_back(o.node.empty() ? "-" : Printable(o.node));
    for (size_t i : figures) {
      // By label, each object's own subject read as the first's ("median step of worker:3" is
      // the column "median step of each": issue 48); an object may lack a figure its first
      // sibling has.
      auto it = std::find_if(o.evidence.begin(), o.evidence.end(), [&](const Figure& e) {
        return SubjectAsEach(e.label, o.subject) ==
               SubjectAsEach(first.evidence[i].label, first.subject);
      });
      row.push_back(it != o.evidence.end() ? FormatFigure(*it) : "-");
    }
    t.AddRow(std::move(row));
  }
  *out += t.Render(4);
  if (f.objects.size() > kMaxRows) *out += "  " + MoreRows(kMaxRows, f.objects.size());
}

}  // namespace

namespace {

// A predicted step's range, both ends in the unit of the larger: "142.0-151.0 ms"; "" without
// one.
std::string RangeText(double lo, double hi) {
  return hi >= 1e9   ? fmt::format("{:.2f}-{:.2f} s", lo / 1e9, hi / 1e9)
         : hi >= 1e6 ? fmt::format("{:.1f}-{:.1f} ms", lo / 1e6, hi / 1e6)
         : hi > 0    ? fmt::format("{:.0f}-{:.0f} us", lo / 1e3, hi / 1e3)
                     : "";
}

// The rules that could not judge these inputs, one (ids, why) per reason.
std::vector<std::pair<std::string, std::string>> NotJudgedByReason(const AnalysisResult& r) {
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
  return by_reason;
}

// `s` cut to `width` columns (bytes of printable text) with "...", at a space when one is near.
std::string Cut(const std::string& s, size_t width) {
  if (width == 0 || s.size() <= width) return s;
  size_t at = width - 3;
  const size_t space = s.rfind(' ', at);
  if (space != std::string::npos && space + 20 > at) at = space;
  while (at > 0 && (static_cast<unsigned char>(s[at]) & 0xC0) == 0x80) --at;  // UTF-8 lead
  return s.substr(0, at) + "...";
}

}  // namespace

std::vector<std::string> ImpactLines(const Finding& f) {
  if (f.impact.trusted()) {
    // The range (issue 35), both ends in the unit of the larger: "142-151 ms".
    std::string range = RangeText(f.impact.low_ns, f.impact.high_ns);
    if (!range.empty()) range = "; " + range;
    std::string line = fmt::format(
        "impact: step {} -> {} ({:+.0f}%{}), {}, confidence {}",
        FormatDurationShort(f.impact.step_ns), FormatDurationShort(f.impact.step_ns_after_fix),
        -f.impact.saving_pct, range, f.impact.method, f.impact.confidence);
    // A fix predicted to lengthen the step (idle-ps dropping PS whose work then queues on the
    // rest) is said so in words: a "+" beside the finding's fix text reads too easily as a gain.
    // Judged on the whole percent the line prints.
    const double slower = std::round(-f.impact.saving_pct);
    if (slower >= kSlowerFixPct) {
      line += fmt::format("; predicted {:.0f}% slower", slower);
      if (f.impact.low_ns > f.impact.step_ns && f.impact.high_ns > 0) {
        line += ", its whole range too: do not apply this fix as written";
      }
    }
    return {line, f.impact.why};
  }
  if (f.impact.set && f.impact.method != "none") {
    // A replay with low confidence: its figure would mislead, so only why (issue 35).
    return {fmt::format("impact: not predicted (confidence {}): {}", f.impact.confidence,
                        f.impact.why)};
  }
  if (f.impact.set) return {"impact: not predicted: " + f.impact.why};
  return {};
}

std::vector<const WaitFor*> ShownWaits(const Finding& f) {
  std::vector<const WaitFor*> waits;
  if (f.objects.size() > 1) {
    for (const FindingObject& o : f.objects) {
      if (!o.waits.empty()) waits.push_back(&o.waits[0]);
    }
    std::stable_sort(waits.begin(), waits.end(),
                     [](const WaitFor* a, const WaitFor* b) { return a->wait_ns > b->wait_ns; });
  }
  if (waits.empty()) {
    for (const WaitFor& w : f.waits) waits.push_back(&w);
  }
  return waits;
}

// The report's opening line: the finding whose fix a trusted prediction says buys the most
// (Impact::trusted), or "" when no trusted prediction saves anything. The predicted range
// follows; when it reaches today's step the line says so (the fix may buy nothing: issue 48).
std::string FixFirst(const AnalysisResult& r) {
  const Finding* best = nullptr;
  for (const Finding& f : r.findings) {
    if (!f.impact.trusted() || f.impact.saving_pct <= 0) continue;
    if (best == nullptr || f.impact.saving_pct > best->impact.saving_pct) best = &f;
  }
  if (best == nullptr) return "";
  const Impact& im = best->impact;
  std::string range = RangeText(im.low_ns, im.high_ns);
  if (!range.empty()) {
    range = "; range " + range;
    if (im.high_ns >= im.step_ns) range += ", which includes today's step";
  }
  return fmt::format("Fix first: {} on {}: step {} -> {} (-{:.0f}%{})\n\n", best->rule_id,
                     Printable(best->subject), FormatDurationShort(im.step_ns),
                     FormatDurationShort(im.step_ns_after_fix), im.saving_pct, range);
}

// analyze --brief (issue 48): Fix first, one line per finding (severity, rule, subject, its
// summary cut to the width), and one line per reason a rule could not judge these inputs.
std::string Brief(const AnalysisResult& r, const Style& st) {
  const size_t width = st.width > 0 ? st.width : kProseColumns;
  std::string out = FixFirst(r);
  out += st.Bold(fmt::format("Findings ({})", r.findings.size())) + "\n";
  if (r.findings.empty()) out += "  No rule fired.\n";
  constexpr size_t kMaxFindings = 20;
  for (size_t i = 0; i < r.findings.size() && i < kMaxFindings; ++i) {
    const Finding& f = r.findings[i];
    std::string sev(SeverityName(f.severity));
    std::transform(sev.begin(), sev.end(), sev.begin(), ::toupper);
    const std::string head = fmt::format("  [{}] {} {}", sev, f.rule_id, Printable(f.subject));
    std::string line = Cut(head + ": " + Printable(f.summary), width);
    if (line.compare(0, head.size(), head) == 0)
      line.replace(0, head.size(),
                   fmt::format("  {} {} {}", st.Sev(f.severity, "[" + sev + "]"),
                               st.Bold(f.rule_id), Printable(f.subject)));
    out += line + "\n";
  }
  if (r.findings.size() > kMaxFindings)
    out += fmt::format("  ({} more)\n", r.findings.size() - kMaxFindings);
  const auto by_reason = NotJudgedByReason(r);
  if (!by_reason.empty() || !r.rules_scaling.empty()) {
    out += st.Bold("Not judged") + "\n";
    for (const auto& [why, ids] : by_reason) out += Cut("  " + ids + ": " + why, width) + "\n";
    std::string scaling;
    for (const std::string& id : r.rules_scaling) scaling += (scaling.empty() ? "" : ", ") + id;
    if (!scaling.empty()) out += "  " + scaling + ": runs in tfdiag scaling\n";
  }
  out += st.Dim("(the whole report without --brief; every figure: -f json)") + "\n";
  return out;
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
    const std::vector<std::string> impact = ImpactLines(f);
    for (size_t k = 0; k < impact.size(); ++k) {
      *out += WrapText(Printable(impact[k]), st.width, k == 0 ? "    " : "      ", "      ");
    }
    // What each task waits for (the step graph): a grouped finding's objects' (the first cause
    // of each task, biggest first), else the finding's own list (hot-ps: per worker).
    const std::vector<const WaitFor*> waits = ShownWaits(f);
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
      // A long prose line of the fix wraps under itself; an indented line is a code snippet,
      // never wrapped, so that it can be copied as it is (issue 48).
      const std::string line = f.fix.substr(pos, nl - pos);
      const size_t lead = std::min(line.find_first_not_of(' '), line.size());
      *out += WrapText(line, lead > 0 ? 0 : st.width, "      ", std::string(8 + lead, ' '));
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
  const auto by_reason = NotJudgedByReason(r);
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

}  // namespace tfdiag::text
