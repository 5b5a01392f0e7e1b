#include "analyzers/grouping.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "core/checked_number.h"
#include "core/duration.h"
#include "core/plural.h"

namespace tfdiag {

namespace {

bool IsDigit(char ch) { return ch >= '0' && ch <= '9'; }

FindingObject ObjectOf(const Finding& f) {
  return FindingObject{f.subject,  f.task, f.pod,         f.node,      f.summary,
                       f.evidence, f.ops,  f.range_start, f.range_end, f.waits};
}

// A figure's value for a summary line (the text report formats evidence itself).
std::string Brief(double v, const std::string& unit) {
  if (unit == "%") return fmt::format("{:.0f}%", v);
  if (unit == "ns") return FormatDuration(v);
  if (unit == "us") return FormatDuration(v * 1e3);
  if (unit == "count") return fmt::format("{:.0f}", v);
  if (unit == "ratio") return fmt::format("{:.2f}", v);  // "12.74", not "12.7 ratio"
  if (unit == "bytes") return fmt::format("{:.3g} MB", v / 1e6);
  return WithUnit(v, "{:.3g}", unit);  // "1 CPU", not "1 CPUs" (issue 39)
}

// "worker:0-3, worker:5, ps:1" from task labels in natural order; other subjects joined, the
// list cut after `max` entries.
std::string CompactSubjects(const std::vector<FindingObject>& objects, size_t max = 6) {
  std::vector<std::string> parts;
  std::string job;
  long lo = -1, hi = -1;
  auto flush = [&] {
    if (lo < 0) return;
    parts.push_back(lo == hi ? fmt::format("{}:{}", job, lo)
                             : fmt::format("{}:{}-{}", job, lo, hi));
    lo = hi = -1;
  };
  for (const FindingObject& o : objects) {
    const size_t colon = o.subject.rfind(':');
    long idx = 0;  // "ps:3": up to 9 digits
    const bool task_like =
        colon != std::string::npos &&
        ParseIntIn(std::string_view(o.subject).substr(colon + 1), 0L, 999'999'999L, &idx);
    if (!task_like) {
      flush();
      parts.push_back(o.subject);
      continue;
    }
    const std::string j = o.subject.substr(0, colon);
    if (lo >= 0 && j == job && idx == hi + 1) {
      hi = idx;
      continue;
    }
    flush();
    job = j;
    lo = hi = idx;
  }
  flush();
  // Long subjects (manifest paths and fields) would make an unreadable list: name the first.
  size_t chars = 0;
  for (const std::string& p : parts) chars += p.size();
  if (parts.size() > 1 && chars > 100) {
    return fmt::format("{} and {} more", parts[0], parts.size() - 1);
  }
  std::string out;
  for (size_t i = 0; i < parts.size() && i < max; ++i) out += (i ? ", " : "") + parts[i];
  if (parts.size() > max) out += fmt::format(", ... ({} more)", parts.size() - max);
  return out;
}

// How many objects of this kind the capture holds, for "N of M": the tasks of the jobs the
// objects belong to; 0 when unknown.
int Population(const std::vector<FindingObject>& objects, const std::string& kind, const Capture& c,
               std::string* noun) {
  if (kind != "task") return 0;
  std::vector<std::string> jobs;
  for (const FindingObject& o : objects) {
    const size_t colon = o.subject.rfind(':');
    if (colon == std::string::npos) return 0;
    jobs.push_back(o.subject.substr(0, colon));
  }
  std::sort(jobs.begin(), jobs.end());
  jobs.erase(std::unique(jobs.begin(), jobs.end()), jobs.end());
  int n = 0;
  for (const TaskRow& t : c.tasks) {
    if (std::binary_search(jobs.begin(), jobs.end(), std::string(c.Str(t.job)))) ++n;
  }
  *noun = jobs.size() == 1 ? jobs[0] + " tasks" : "tasks";
  return n;
}

// "24 Deployments in tf-cluster.yaml", "3 TFJob replica types in mnist.yaml", "5 objects in 2
// files": the distinct manifest objects of a group; "" when the findings name none.
std::string ManifestObjects(const std::vector<Finding>& members) {
  std::vector<std::string> names, kinds, files;
  for (const Finding& m : members) {
    if (m.object_name.empty()) return "";
    names.push_back(m.object_name);
    kinds.push_back(m.object_kind);
    files.push_back(m.object_file);
  }
  for (auto* v : {&names, &kinds, &files}) {
    std::sort(v->begin(), v->end());
    v->erase(std::unique(v->begin(), v->end()), v->end());
  }
  const size_t n = names.size();
  const std::string kind = kinds.size() == 1 ? kinds[0] : "object";
  std::string s = fmt::format("{} {}{}", n, kind, n == 1 ? "" : "s");
  if (files.size() == 1) return s + " in " + files[0];
  return s + fmt::format(" in {} files", files.size());
}

Finding MergeGroup(std::vector<Finding> members, const Rule* rule, const Capture& c) {
  std::stable_sort(members.begin(), members.end(), [](const Finding& a, const Finding& b) {
    return NaturalLess(a.subject, b.subject);
  });
  Finding g = members[0];
  g.objects.clear();
  for (const Finding& m : members) g.objects.push_back(ObjectOf(m));
  const size_t n = members.size();
  // "8 manifests" read as 8 files for 8 objects of one file (issue 39).
  std::string noun = g.subject_kind == "task"       ? "tasks"
                     : g.subject_kind == "manifest" ? "manifest objects"
                                                    : g.subject_kind + "s";
  const int population = Population(g.objects, g.subject_kind, c, &noun);
  g.subject = CompactSubjects(g.objects);
  g.task.clear();
  // A pod or node the whole group shares stays on the group; otherwise each object names its own.
  for (const Finding& m : members) {
    if (m.pod != g.pod) g.pod.clear();
    if (m.node != g.node) g.node.clear();
  }
  // Figures every object has at the same position with the same unit: lowest and highest.
  g.evidence = {{"objects", double(n), "count"}};
  std::string range_text;
  const size_t figures = std::min<size_t>(3, members[0].evidence.size());
  for (size_t i = 0; i < figures; ++i) {
    const Figure& first = members[0].evidence[i];
    double lo = first.value, hi = first.value;
    bool shared = true;
    for (const Finding& m : members) {
      if (m.evidence.size() <= i || m.evidence[i].unit != first.unit) {
        shared = false;
        break;
      }
      lo = std::min(lo, m.evidence[i].value);
      hi = std::max(hi, m.evidence[i].value);
    }
    if (!shared) break;
    // Labels may name the object ("busy time of ps:0"): name none in the group's label.
    std::string label = first.label;
    const size_t at = label.find(members[0].subject);
    if (at != std::string::npos) label.replace(at, members[0].subject.size(), "each");
    g.evidence.push_back({label + " (lowest)", lo, first.unit});
    g.evidence.push_back({label + " (highest)", hi, first.unit});
    if (i == 0) {
      const std::string a = Brief(lo, first.unit), b = Brief(hi, first.unit);
      range_text = fmt::format(": {} {}", label, a == b ? a : a + " to " + b);
    }
  }
  const std::string what = rule != nullptr && !rule->title.empty() ? rule->title : g.rule_id;
  const std::string objects = ManifestObjects(members);
  if (!objects.empty()) {
    // Manifest objects: the header names them and the cause, not a range of the first figure
    // (replicas or a CPU request say nothing about why the rule holds).
    g.summary = fmt::format("{} on {}{}{} ({})", g.rule_id, objects, g.cause.empty() ? "" : ": ",
                            g.cause, what);
  } else {
    g.summary = population > 0
                    ? fmt::format("{} on {} of {} {}{}", g.rule_id, n, population, noun, range_text)
                    : fmt::format("{} on {} {}{}", g.rule_id, n, noun, range_text);
    g.summary += fmt::format(" ({})", what);
    if (!g.cause.empty()) g.summary += "; " + g.cause;
  }
  // Ops behind the group: each object's first, up to 8.
  g.ops.clear();
  for (const Finding& m : members) {
    if (m.ops.empty() || m.ops[0].empty() || g.ops.size() >= 8) continue;
    if (std::find(g.ops.begin(), g.ops.end(), m.ops[0]) == g.ops.end()) g.ops.push_back(m.ops[0]);
  }
  for (const Finding& m : members) {
    if (m.range_start == 0 && m.range_end == 0) continue;
    if (g.range_start == 0 && g.range_end == 0) {
      g.range_start = m.range_start, g.range_end = m.range_end;
    } else {
      g.range_start = std::min(g.range_start, m.range_start);
      g.range_end = std::max(g.range_end, m.range_end);
    }
  }
  // The rule's fix, without the per-object "For this job: ..." lines of each member, unless every
  // member has the same fix (the same numbers for all).
  bool same_fix = true;
  for (const Finding& m : members) same_fix = same_fix && m.fix == members[0].fix;
  if (rule != nullptr && !same_fix) g.fix = rule->fix;
  return g;
}

}  // namespace

std::vector<Finding> UngroupFindings(const std::vector<Finding>& findings) {
  std::vector<Finding> out;
  for (const Finding& f : findings) {
    if (f.objects.size() <= 1) {
      out.push_back(f);
      continue;
    }
    // Copy the group's own fields once per object, never its list of objects (that would be
    // quadratic in the objects of a large group).
    Finding shell = f;
    shell.objects.clear();
    for (const FindingObject& o : f.objects) {
      Finding x = shell;
      x.subject = o.subject;
      x.task = o.task;
      x.pod = o.pod;
      x.node = o.node;
      x.summary = o.summary;
      x.evidence = o.evidence;
      x.ops = o.ops;
      x.range_start = o.range_start;
      x.range_end = o.range_end;
      x.waits = o.waits;
      x.objects = {o};
      out.push_back(std::move(x));
    }
  }
  return out;
}

bool NaturalLess(std::string_view a, std::string_view b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (IsDigit(a[i]) && IsDigit(b[j])) {
      size_t ie = i, je = j;
      while (ie < a.size() && IsDigit(a[ie])) ++ie;
      while (je < b.size() && IsDigit(b[je])) ++je;
      // Compare numerically: strip leading zeros, then by length, then digit by digit.
      size_t is = i, js = j;
      while (is + 1 < ie && a[is] == '0') ++is;
      while (js + 1 < je && b[js] == '0') ++js;
      if (ie - is != je - js) return ie - is < je - js;
      const int cmp = a.substr(is, ie - is).compare(b.substr(js, je - js));
      if (cmp != 0) return cmp < 0;
      i = ie, j = je;
      continue;
    }
    if (a[i] != b[j]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]);
    ++i, ++j;
  }
  return a.size() - i < b.size() - j;
}

std::vector<Finding> GroupFindings(std::vector<Finding> findings, const RuleSet& rules,
                                   const Capture& c) {
  using Key = std::tuple<std::string, Severity, std::string, std::string>;
  std::map<Key, size_t> group_of;
  std::vector<std::vector<Finding>> groups;
  for (Finding& f : findings) {
    Key k{f.rule_id, f.severity, f.subject_kind, f.cause};
    auto [it, added] = group_of.try_emplace(k, groups.size());
    if (added) groups.emplace_back();
    groups[it->second].push_back(std::move(f));
  }
  std::vector<Finding> out;
  out.reserve(groups.size());
  for (std::vector<Finding>& g : groups) {
    if (g.size() == 1) {
      Finding f = std::move(g[0]);
      f.objects = {ObjectOf(f)};
      out.push_back(std::move(f));
    } else {
      const Rule* rule = rules.Find(g[0].rule_id);
      out.push_back(MergeGroup(std::move(g), rule, c));
    }
  }
  return out;
}

std::string ObjectsHeading(const Finding& f) {
  const std::string noun = !f.object_name.empty()         ? "container"
                           : f.subject_kind == "manifest" ? "manifest object"
                                                          : f.subject_kind;
  return Count(static_cast<int64_t>(f.objects.size()), noun);
}

std::vector<std::string> ObjectSubjects(const Finding& f, std::string* file) {
  std::string prefix = f.object_file.empty() ? "" : f.object_file + " (doc ";
  for (const FindingObject& o : f.objects) {
    if (o.subject.compare(0, prefix.size(), prefix) != 0) prefix.clear();
  }
  *file = prefix.empty() ? "" : f.object_file;
  const size_t cut = prefix.empty() ? 0 : prefix.size() - 5;  // keep "(doc N): ..."
  std::vector<std::string> out;
  out.reserve(f.objects.size());
  for (const FindingObject& o : f.objects) out.push_back(o.subject.substr(cut));
  return out;
}

std::string ShortSubject(const Finding& f) {
  const std::string& file = f.object_file;
  const size_t slash = file.find_last_of('/');
  if (file.empty() || slash == std::string::npos || f.subject.compare(0, file.size(), file) != 0) {
    return f.subject;
  }
  return file.substr(slash + 1) + f.subject.substr(file.size());
}

}  // namespace tfdiag
