// tfdiag fix MANIFEST: the manifest with the deployment advice applied (actions/k8s_fix.h),
// on stdout, as JSON merge patches (--patch), or written back atomically (--in-place). Only what
// the manifest rules raise on MANIFEST is changed: the rules run first, as `analyze` would.

#include "actions/k8s_fix.h"
#include "analyzers/analysis.h"
#include "analyzers/grouping.h"
#include "cli/commands.h"
#include "collectors/k8s/k8s_reader.h"
#include "core/atomic_file.h"
#include "core/capture_builder.h"
#include "core/escape.h"

namespace tfdiag {

namespace {

struct FixCmdOptions {
  std::string manifest;
  bool patch = false;
  bool in_place = false;
  bool quiet = false;
  FixOptions fix;
  RuleOptions rules;
};

// "<rule id> <subject>" of every finding the rules raise on the manifest; *skipped: the objects
// the reader skipped ("1 object skipped (not a TF job or pod): TFjob (did you mean TFJob?)").
StatusOr<std::set<std::string>> Raised(const std::string& text, const FixCmdOptions& o,
                                       std::string* skipped) {
  K8sDeployment k8s;
  TFDIAG_RETURN_IF_ERROR(ParseK8sText(text, o.manifest, &k8s));
  for (const K8sFileSummary& f : k8s.summaries) {
    if (!f.skipped.empty()) *skipped += (skipped->empty() ? "" : "; ") + f.skipped;
  }
  StatusOr<RuleSet> rules = LoadRules(o.rules);
  if (!rules.ok()) return rules.status();
  StatusOr<Capture> empty = CaptureBuilder().Finish();
  if (!empty.ok()) return empty.status();
  AnalysisResult result = Analyze(*empty, *rules, &k8s, 1);
  std::set<std::string> raised;
  // Judged object by object: a grouped finding raises each object it covers.
  for (const Finding& f : UngroupFindings(result.findings))
    raised.insert(f.rule_id + " " + f.subject);
  return raised;
}

Status Run(const FixCmdOptions& given, int* exit_code) {
  FixCmdOptions o = given;
  if (o.patch && o.in_place) return UsageError("--patch and --in-place exclude each other");
  if (!o.fix.default_memory.empty()) {
    std::string error;
    if (ParseMemoryBytes(o.fix.default_memory, &error) < 0)
      return UsageError("--memory: {}", error);
  }
  StatusOr<std::string> read = ReadK8sText(o.manifest, o.manifest);  // bounded, NUL refused
  if (!read.ok()) return read.status();
  const std::string& text = *read;
  std::string skipped;
  StatusOr<std::set<std::string>> raised = Raised(text, o, &skipped);
  if (!raised.ok()) return raised.status();
  o.fix.raised = &*raised;
  StatusOr<FixResult> r = FixManifest(text, o.manifest, o.fix);
  if (!r.ok()) return r.status();
  if (!o.quiet) {
    for (const std::string& c : r->changes)
      std::fprintf(stderr, "change: %s\n", Printable(c).c_str());
    for (const std::string& n : GroupNotes(r->notes)) {
      std::fprintf(stderr, "note: %s\n", Printable(n).c_str());
    }
    for (const std::string& w : r->warnings) PrintNote("warning: ", w);
    // Findings left open because their fix needs a number only the user can choose.
    std::string open;
    for (const auto& [flag, rules] : r->needs) {
      std::string list;
      for (const auto& [rule, n] : rules)
        list += fmt::format("{}{} ({} container{})", list.empty() ? "" : ", ", rule, n,
                            n == 1 ? "" : "s");
      open += fmt::format("{}{} needs {}", open.empty() ? "" : "; ", list, flag);
    }
    if (!r->changed) {
      // No TF job: say what the file held instead (a misspelt kind names the one meant).
      const std::string no_job =
          "no TF job (no PS/worker/chief replica) in it" + (skipped.empty() ? "" : ": " + skipped);
      PrintNote("", open.empty()
                        ? fmt::format("nothing to fix in {}: {}", o.manifest,
                                      r->tf_replicas == 0 ? no_job : "no finding a fix can address")
                        : fmt::format("nothing changed in {}: findings stand that need "
                                      "a choice: {}",
                                      o.manifest, open));
    } else if (!open.empty()) {
      PrintNote("", "still open, needing a choice: " + open);
    }
  }
  if (o.patch) {
    std::string text;
    for (size_t i = 0; i < r->patches.size(); ++i) {
      text += r->patches[i] + "\n";
      if (!o.quiet) {
        PrintNote("apply: ",
                  fmt::format("kubectl patch {} --type merge -p \"$(sed -n {}p PATCHFILE)\"",
                              r->patch_targets[i], i + 1));
      }
    }
    std::fwrite(text.data(), 1, text.size(), stdout);
  } else if (o.in_place) {
    // Nothing changed: the file is left alone (same bytes, comments, mode, time stamps).
    if (r->changed) TFDIAG_RETURN_IF_ERROR(ReplaceFileContents(o.manifest, r->yaml));
  } else {
    std::fwrite(r->yaml.data(), 1, r->yaml.size(), stdout);
  }
  *exit_code = 0;
  return OkStatus();
}

}  // namespace

Command RegisterFix(CLI::App& root) {
  auto o = std::make_shared<FixCmdOptions>();
  CLI::App* app = root.add_subcommand(
      "fix",
      "Print a Kubernetes manifest (TFJob, Job, Deployment, StatefulSet, Volcano Job, ElasticJob) "
      "with the fixes for what the manifest rules raise: podAntiAffinity on PS "
      "(ps-colocation), requests = limits with whole CPUs (cpu-qos), TF/OpenMP thread env = CPU "
      "limit, inter-op at least 2 (thread-config), no GPU on PS (ps-on-gpu). The changes are "
      "edited "
      "into the text where they are (comments, quoting, indentation and --- kept); findings whose "
      "fix needs --cpus or --memory are named; rising requests are a warning. A file with nothing "
      "to fix is printed (or left) as it is.");
  app->add_option("manifest", o->manifest, "Manifest file (YAML or JSON, several documents)")
      ->required()
      ->check(CLI::ExistingFile);
  app->add_flag("--patch", o->patch,
                "Print one JSON merge patch (RFC 7386) per changed object instead, one per line");
  app->add_flag("--in-place", o->in_place,
                "Write the fixed manifest over MANIFEST (atomically; mode, owner and group kept; "
                "a symlink's target is rewritten when the link's owner owns it too)");
  app->add_option("--cpus", o->fix.default_cpus,
                  "CPU limit for containers without one (at least their request); without it "
                  "tfdiag never adds or lowers a CPU limit")
      ->check(CLI::Range(1, 1024));
  app->add_option("--memory", o->fix.default_memory,
                  "Memory (e.g. 8Gi) for containers that set neither memory request nor limit");
  app->add_flag("-q,--quiet", o->quiet, "No change list on stderr");
  AddRuleOptions(app, &o->rules);
  return {app, [o](int* exit_code) { return Run(*o, exit_code); }};
}

}  // namespace tfdiag
