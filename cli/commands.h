// The tfdiag subcommands. Each cmd_<name>.cc holds an options struct with defaults, a Register
// function that adds the subcommand to CLI11, and a run function returning Status. Only main.cc
// maps a Status to an exit code (kInvalidInput/kUsage/kIo -> 2, others -> 3); a command that
// finishes normally sets *exit_code (e.g. 1 for findings at or above --fail-on).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

#include "core/status.h"
#include "rules/rule_set.h"

namespace tfdiag {

struct Command {
  CLI::App* app = nullptr;
  std::function<Status(int* exit_code)> run;
};

Command RegisterAnalyze(CLI::App& root);
Command RegisterAttach(CLI::App& root);
Command RegisterSimulate(CLI::App& root);
Command RegisterRules(CLI::App& root);
Command RegisterFix(CLI::App& root);
// `tfdiag view FILE...`: execs the tfdiag-view viewer (beside tfdiag, else on PATH) with the
// arguments passed through; errors (kNotFound) with how to build it when it is missing.
Command RegisterView(CLI::App& root);
// `tfdiag scaling RUN RUN [RUN...]`: compares runs at different worker counts (cmd_scaling.cc).
Command RegisterScaling(CLI::App& root);

// Options shared by commands that evaluate rules.
struct RuleOptions {
  std::string rules_file;             // --rules FILE
  std::vector<std::string> disabled;  // --disable RULE (repeatable)
};
void AddRuleOptions(CLI::App* app, RuleOptions* o);
// Makes every option of `app` whose description starts "With --prometheus" need `prometheus`:
// given without it, parsing fails ("--job requires --prometheus", exit 2) instead of the option
// being ignored. Call after the options are added.
void RequirePrometheus(CLI::App* app, CLI::Option* prometheus);
// The default rule set with --rules and --disable applied, validated against the analyzers.
StatusOr<RuleSet> LoadRules(const RuleOptions& o);

// True when `fd` is a terminal.
bool IsTty(int fd);

// Notes about manifest objects, one line per cause: "<file> (doc N): <text>" notes that differ
// only in N become "<file> (docs 1, 3, 5): <text>"; other notes are kept as they are, in order.
std::vector<std::string> GroupNotes(const std::vector<std::string>& notes);

// CLI11 check for input files: an existing path, or "-" for standard input.
CLI::Validator InputPath();

}  // namespace tfdiag
