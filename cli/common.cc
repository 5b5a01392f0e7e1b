#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <utility>

#include "analyzers/analysis.h"
#include "cli/commands.h"
#include "collectors/procfs/proc_reader.h"
#include "core/nearest_name.h"

namespace tfdiag {

void RequirePrometheus(CLI::App* app, CLI::Option* prometheus) {
  for (CLI::Option* opt : app->get_options()) {
    if (opt != prometheus && opt->get_description().rfind("With --prometheus", 0) == 0) {
      opt->needs(prometheus);
    }
  }
}

void AddRuleOptions(CLI::App* app, RuleOptions* o) {
  app->add_option("--rules", o->rules_file,
                  "A rules file (schema tfdiag.rules/1) that overrides rules by id, adds rules, "
                  "or with \"replace\": true replaces the built-in set");
  // One value per occurrence, or a comma-separated list: `--disable hot-ps FILE` keeps FILE an
  // input (CLI11 vector options take every following argument unless told otherwise).
  app->add_option("--disable", o->disabled,
                  "Disable rules by id: --disable a,b or --disable a --disable b (see 'tfdiag "
                  "rules list')")
      ->delimiter(',')
      ->allow_extra_args(false);
}

StatusOr<RuleSet> LoadRules(const RuleOptions& o) {
  StatusOr<RuleSet> set = DefaultRuleSet();
  if (!set.ok()) return Status(StatusCode::kInternal, set.status().message());
  if (!o.rules_file.empty()) {
    StatusOr<std::string> text = ReadSmallFile(o.rules_file);
    if (!text.ok()) return text.status();
    TFDIAG_RETURN_IF_ERROR(ApplyRulesFile(&*set, *text, o.rules_file));
  }
  for (const std::string& id : o.disabled) {
    if (set->Find(id) == nullptr) {  // the nearest id, as `rules explain` suggests it
      std::vector<std::string> ids;
      for (const Rule& r : set->rules) ids.push_back(r.id);
      return UsageError("--disable {}: no such rule{} (see 'tfdiag rules list')", id,
                        DidYouMean(id, ids));
    }
    TFDIAG_RETURN_IF_ERROR(DisableRule(&*set, id));
  }
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

std::vector<std::string> GroupNotes(const std::vector<std::string>& notes) {
  // key: file + '\0' + text -> position in `out` and the doc numbers seen.
  std::vector<std::string> out;
  std::vector<std::vector<std::string>> docs;
  std::map<std::string, size_t> slot;
  std::vector<std::pair<std::string, std::string>> parts;  // (file, text) per out entry
  for (const std::string& n : notes) {
    const size_t open = n.find(" (doc ");
    const size_t close = open == std::string::npos ? open : n.find("): ", open);
    if (close == std::string::npos) {
      out.push_back(n);
      docs.emplace_back();
      parts.emplace_back();
      continue;
    }
    const std::string file = n.substr(0, open), doc = n.substr(open + 6, close - open - 6);
    const std::string text = n.substr(close + 3);
    auto [it, added] = slot.try_emplace(file + '\0' + text, out.size());
    if (added) {
      out.push_back(n);
      docs.emplace_back();
      parts.emplace_back(file, text);
    }
    docs[it->second].push_back(doc);
  }
  for (size_t i = 0; i < out.size(); ++i) {
    if (docs[i].size() < 2) continue;
    std::string list;
    for (const std::string& d : docs[i]) list += (list.empty() ? "" : ", ") + d;
    out[i] = parts[i].first + " (docs " + list + "): " + parts[i].second;
  }
  return out;
}

}  // namespace tfdiag
