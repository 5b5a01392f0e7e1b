// tfdiag rules list | explain ID: what each rule checks, on which evidence, with which
// thresholds, and how to fix what it finds.
#include "cli/commands.h"
#include "report/table.h"

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

Status Explain(const RulesOptions& o) {
  StatusOr<RuleSet> set = LoadRules(o.rules);
  if (!set.ok()) return set.status();
  const Rule* r = set->Find(o.id);
  if (r == nullptr) return NotFound("no rule '{}' (see 'tfdiag rules list')", o.id);
  std::string out =
      fmt::format("{}: {}\n  severity {}, analyzer {}, {}\n\n", r->id, r->title,
                  SeverityName(r->severity), r->analyzer, r->enabled ? "enabled" : "disabled");
  out += "What it checks\n" + Indent(r->checks, "  ") + "\n\n";
  out += "Evidence\n" + Indent(r->evidence, "  ") + "\n\n";
  out += "Thresholds\n";
  TextTable t({"parameter", ">value", "unit", "meaning"});
  for (const RuleParam& p : r->params) {
    t.AddRow({p.name, fmt::format("{:g}", p.value), p.unit, p.doc});
  }
  out += t.Render() + "\n";
  out += "Why it matters\n" + Indent(r->rationale, "  ") + "\n\n";
  out += "Fix\n" + Indent(r->fix, "  ") + "\n\n";
  out += "References\n";
  for (const std::string& ref : r->references) out += "  - " + ref + "\n";
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
