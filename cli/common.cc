#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "analyzers/analysis.h"
#include "cli/commands.h"
#include "collectors/procfs/proc_reader.h"

namespace tfdiag {

void AddRuleOptions(CLI::App* app, RuleOptions* o) {
  app->add_option("--rules", o->rules_file,
                  "A rules file (schema tfdiag.rules/1) that overrides rules by id, adds rules, "
                  "or with \"replace\": true replaces the built-in set");
  app->add_option("--disable", o->disabled, "Disable a rule by id (repeatable)");
}

StatusOr<RuleSet> LoadRules(const RuleOptions& o) {
  StatusOr<RuleSet> set = DefaultRuleSet();
  if (!set.ok()) return Status(StatusCode::kInternal, set.status().message());
  if (!o.rules_file.empty()) {
    StatusOr<std::string> text = ReadSmallFile(o.rules_file);
    if (!text.ok()) return text.status();
    TFDIAG_RETURN_IF_ERROR(ApplyRulesFile(&*set, *text, o.rules_file));
  }
  for (const std::string& id : o.disabled) TFDIAG_RETURN_IF_ERROR(DisableRule(&*set, id));
  Status valid = ValidateRuleSet(*set);
  if (!valid.ok()) {
    return valid.WithPrefix(o.rules_file.empty() ? "built-in rules" : o.rules_file);
  }
  return set;
}

bool IsTty(int fd) { return ::isatty(fd) == 1; }

CLI::Validator InputPath() {
  return CLI::Validator(
      [](std::string& path) { return path == "-" ? std::string() : CLI::ExistingPath(path); },
      "PATH|-", "InputPath");
}

}  // namespace tfdiag
