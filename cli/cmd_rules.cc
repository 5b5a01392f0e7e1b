// tfdiag rules list | explain ID: what each rule checks, on which evidence, with which
// thresholds, and how to fix what it finds.
#include "cli/commands.h"
#include "core/nearest_name.h"
#include "report/table.h"
#include "rules/rule_docs.h"

namespace tfdiag {

namespace {

struct RulesOptions {
  std::string id;
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
  TextTable t({"id", "severity", "enabled", "title"});
  for (const Rule& r : set->rules) {
    t.AddRow({r.id, std::string(SeverityName(r.severity)), r.enabled ? "yes" : "no", r.title});
  }
  std::string out = fmt::format("Rule set {} ({} rules)\n", set->version, set->rules.size()) +
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

// Prints the rule's page (docs/rules/<id>.md, built in), then what --rules/--disable changed.
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
  std::string out = doc.empty() ? FromFields(*r) : std::string(doc);
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
  AddRuleOptions(explain, &o->rules);
  return {app, [o, list](int* exit_code) {
            *exit_code = 0;
            return list->parsed() ? List(*o) : Explain(*o);
          }};
}

}  // namespace tfdiag
