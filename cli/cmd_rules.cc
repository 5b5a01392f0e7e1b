// tfdiag rules list | explain ID: what each rule checks, on which evidence, with which
// thresholds, and how to fix what it finds.
#include "analyzers/analysis.h"
#include "cli/commands.h"
#include "core/nearest_name.h"
#include "core/plural.h"
#include "report/table.h"
#include "report/wrap.h"
#include "rules/rule_docs.h"

namespace tfdiag {

namespace {

struct RulesOptions {
  std::string id;
  bool markdown = false;  // rules explain: the page as written (Markdown), not for a terminal
  RuleOptions rules;
};

std::string Indent(const std::string& text, const std::string& pad) {
  std::string out = pad;
  for (char c : text) {
    out += c;
    if (c == '\n') out += pad;
  }
  return out;
}

Status List(const RulesOptions& o) {
  StatusOr<RuleSet> set = LoadRules(o.rules);
  if (!set.ok()) return set.status();
  // Which command runs each rule: analyze's count ("of 20 analyze rules") and this list's must
  // add up (issue 39).
  TextTable t({"id", "severity", "enabled", "run by", "title"});
  std::string scaling;
  size_t analyze = 0;
  for (const Rule& r : set->rules) {
    const AnalyzerInfo* a = FindAnalyzer(r.analyzer);
    const bool runs = a != nullptr && a->runs;
    if (runs) {
      scaling += (scaling.empty() ? "" : ", ") + r.id;
    } else {
      ++analyze;
    }
    t.AddRow({r.id, std::string(SeverityName(r.severity)), r.enabled ? "yes" : "no",
              runs ? "tfdiag scaling" : "tfdiag analyze", r.title});
  }
  std::string out = fmt::format("Rule set {} ({}: {}{})\n", set->version,
                                Count(set->rules.size(), "rule"), Count(analyze, "analyze rule"),
                                scaling.empty() ? "" : "; " + scaling + " runs in tfdiag scaling") +
                    t.Render() + "\nMore: tfdiag rules explain ID\n";
  std::fputs(out.c_str(), stdout);
  return OkStatus();
}

// What differs from the built-in rule (--rules FILE, --disable), as lines; empty when nothing.
std::string Overrides(const Rule& r) {
  StatusOr<RuleSet> defaults = DefaultRuleSet();
  const Rule* d = defaults.ok() ? defaults->Find(r.id) : nullptr;
  if (d == nullptr) return "";
  std::string out;
  if (r.enabled != d->enabled) out += fmt::format("  {}\n", r.enabled ? "enabled" : "disabled");
  if (r.severity != d->severity) {
    out += fmt::format("  severity {} (built in: {})\n", SeverityName(r.severity),
                       SeverityName(d->severity));
  }
  for (const RuleParam& p : r.params) {
    const RuleParam* dp = d->FindParam(p.name);
    if (dp != nullptr && dp->value == p.value) continue;
    out += dp == nullptr ? fmt::format("  {} = {:g} {}\n", p.name, p.value, p.unit)
                         : fmt::format("  {} = {:g} {} (built in: {:g})\n", p.name, p.value, p.unit,
                                       dp->value);
  }
  return out;
}

// A rule without a page (added by a --rules file): its fields from the rule set.
std::string FromFields(const Rule& r) {
  std::string out =
      fmt::format("{}: {}\n  severity {}, analyzer {}, {}\n\n", r.id, r.title,
                  SeverityName(r.severity), r.analyzer, r.enabled ? "enabled" : "disabled");
  out += "What it checks\n" + Indent(r.checks, "  ") + "\n\n";
  out += "Evidence\n" + Indent(r.evidence, "  ") + "\n\n";
  out += "Thresholds\n";
  TextTable t({"parameter", ">value", "unit", "meaning"});
  for (const RuleParam& p : r.params) {
    t.AddRow({p.name, fmt::format("{:g}", p.value), p.unit, p.doc});
  }
  out += t.Render() + "\n";
  out += "Why it matters\n" + Indent(r.rationale, "  ") + "\n\n";
  out += "Fix\n" + Indent(r.fix, "  ") + "\n\n";
  out += "References\n";
  for (const std::string& ref : r.references) out += "  - " + ref + "\n";
  return out;
}

// Cells of a Markdown table row "| a | b |": {"a", "b"}.
std::vector<std::string> Cells(std::string_view row) {
  std::vector<std::string> out;
  row.remove_prefix(1);
  if (!row.empty() && row.back() == '|') row.remove_suffix(1);
  for (size_t pos = 0; pos <= row.size();) {
    size_t bar = row.find('|', pos);
    if (bar == std::string_view::npos) bar = row.size();
    std::string_view c = row.substr(pos, bar - pos);
    while (!c.empty() && c.front() == ' ') c.remove_prefix(1);
    while (!c.empty() && c.back() == ' ') c.remove_suffix(1);
    out.emplace_back(c);
    pos = bar + 1;
  }
  return out;
}

// A Markdown table as aligned columns without pipes; the last column (free text) wrapped at
// kWidth columns under itself.
std::string TerminalTable(const std::vector<std::vector<std::string>>& rows) {
  constexpr size_t kWidth = kProseColumns;
  size_t cols = 0;
  for (const auto& r : rows) cols = std::max(cols, r.size());
  std::vector<size_t> w(cols, 0);
  for (const auto& r : rows) {
    for (size_t i = 0; i + 1 < r.size(); ++i) w[i] = std::max(w[i], TextColumns(r[i]));
  }
  std::string out;
  for (const auto& r : rows) {
    std::string head = "  ";
    for (size_t i = 0; i + 1 < r.size(); ++i) {
      head += r[i] + std::string(w[i] - TextColumns(r[i]) + 2, ' ');
    }
    const std::string pad(TextColumns(head), ' ');
    out +=
        WrapText(r.empty() ? "" : r.back(), std::max<size_t>(kWidth, pad.size() + 30), head, pad);
  }
  return out;
}

// A rule page (Markdown) for a terminal: "## " headings as plain lines, pipe tables as aligned
// columns (issue 39: `rules explain` printed raw pipes); the rest as written.
std::string ForTerminal(std::string_view md) {
  std::string out;
  std::vector<std::vector<std::string>> table;
  size_t pos = 0;
  while (pos < md.size()) {
    size_t nl = md.find('\n', pos);
    if (nl == std::string_view::npos) nl = md.size();
    const std::string_view line = md.substr(pos, nl - pos);
    pos = nl + 1;
    if (!line.empty() && line.front() == '|') {
      if (line.find_first_not_of("|-: ") != std::string_view::npos) table.push_back(Cells(line));
      continue;  // the |---| rule line is dropped
    }
    if (!table.empty()) out += TerminalTable(table), table.clear();
    if (line.rfind("## ", 0) == 0) {
      out += std::string(line.substr(3)) + "\n";
      continue;
    }
    // Prose wrapped at kProseColumns; an indented (snippet) line continues under itself.
    const size_t lead = std::min(line.find_first_not_of(' '), line.size());
    out += WrapText(line, kProseColumns, "", std::string(lead + (lead > 0 ? 2 : 0), ' '));
  }
  if (!table.empty()) out += TerminalTable(table);
  return out;
}

// Prints the rule's page (docs/rules/<id>.md, built in; for a terminal unless --markdown), then
// what --rules/--disable changed.
Status Explain(const RulesOptions& o) {
  StatusOr<RuleSet> set = LoadRules(o.rules);
  if (!set.ok()) return set.status();
  const Rule* r = set->Find(o.id);
  if (r == nullptr) {
    std::vector<std::string> ids;
    for (const Rule& x : set->rules) ids.push_back(x.id);
    return NotFound("no rule '{}'{} (see 'tfdiag rules list')", o.id, DidYouMean(o.id, ids));
  }
  // The page describes the built-in rule; a rules file that rewrites its texts gets them shown.
  StatusOr<RuleSet> defaults = DefaultRuleSet();
  const Rule* d = defaults.ok() ? defaults->Find(r->id) : nullptr;
  bool same_texts = d != nullptr && d->title == r->title && d->checks == r->checks &&
                    d->evidence == r->evidence && d->rationale == r->rationale &&
                    d->fix == r->fix && d->references == r->references;
  std::string_view doc = same_texts ? RuleDoc(r->id) : std::string_view();
  std::string out = doc.empty() ? FromFields(*r) : o.markdown ? std::string(doc) : ForTerminal(doc);
  std::string overrides = Overrides(*r);
  if (!overrides.empty()) out += "\nIn effect here (--rules, --disable):\n" + overrides;
  std::fputs(out.c_str(), stdout);
  return OkStatus();
}

}  // namespace

Command RegisterRules(CLI::App& root) {
  auto o = std::make_shared<RulesOptions>();
  CLI::App* app = root.add_subcommand("rules", "List the rules or explain one");
  app->require_subcommand(1);
  CLI::App* list = app->add_subcommand("list", "List every rule with its severity");
  AddRuleOptions(list, &o->rules);
  CLI::App* explain = app->add_subcommand(
      "explain", "What a rule checks, on which evidence, with which thresholds, and the fix");
  explain->add_option("id", o->id, "Rule id, e.g. hot-ps")->required();
  explain->add_flag("--markdown", o->markdown,
                    "Print the page as written (Markdown, as docs/rules/ID.md), not laid out for "
                    "a terminal");
  AddRuleOptions(explain, &o->rules);
  return {app, [o, list](int* exit_code) {
            *exit_code = 0;
            return list->parsed() ? List(*o) : Explain(*o);
          }};
}

}  // namespace tfdiag
