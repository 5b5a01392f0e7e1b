// tfdiag fix MANIFEST: the manifest with the deployment advice applied (actions/k8s_fix.h),
// on stdout, as JSON merge patches (--patch), or written back atomically (--in-place). Only what
// the manifest rules raise on MANIFEST is changed: the rules run first, as `analyze` would.

#include "actions/k8s_fix.h"
#include "analyzers/analysis.h"
#include "analyzers/grouping.h"
#include "cli/commands.h"
#include "collectors/k8s/k8s_reader.h"
#include "collectors/k8s/yaml_tree.h"
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
  std::string cpus;  // --cpus: "4" or "ps=1,worker=4" (ParseCpusFlag)
  FixOptions fix;
  RuleOptions rules;
};

// The rules whose findings `fix` edits into a manifest (actions/k8s_fix.h).
bool FixedInManifest(const std::string& rule) {
  return rule == "cpu-qos" || rule == "thread-config" || rule == "ps-on-gpu" ||
         rule == "ps-colocation";
}

// What the rules make of the manifest, as `analyze` would.
struct Judged {
  std::set<std::string> raised;  // "<rule id> <subject>" of every finding, object by object
  // "nothing to judge: FILE: WHY" when the file holds no TF job or TF pod (analyze's exit 2).
  std::string nothing;
  int replica_types = 0, tf_pods = 0;
  // Pods with a TF role: the objects that create them ("TFJob 'mnist'", one per owner).
  std::set<std::string> owners;
  // Findings fix cannot make in a manifest: "<rule> on <subject>: <where it is fixed>".
  std::vector<std::string> elsewhere;
};

StatusOr<Judged> Judge(const K8sDeployment& k8s, const FixCmdOptions& o) {
  Judged j;
  for (const K8sFileSummary& f : k8s.summaries) {
    j.replica_types += f.replica_types;
    j.tf_pods += f.tf_pods;
    if (!f.HasTfObjects())
      j.nothing += (j.nothing.empty() ? "" : "; ") + f.file + ": " + f.WhyNothingToJudge();
  }
  if (j.replica_types + j.tf_pods > 0) j.nothing.clear();
  if (!j.nothing.empty()) j.nothing = "nothing to judge: " + j.nothing;
  for (const K8sPod& p : k8s.pods) {
    if (p.role.empty()) continue;
    if (!p.owner_kind.empty()) {  // metadata.ownerReferences
      j.owners.insert(fmt::format("{} '{}'", p.owner_kind, Printable(p.owner_name)));
      continue;
    }
    // The job-name labels the operators put on their pods (Kubeflow training-operator, its older
    // tf-operator, Volcano).
    static constexpr std::pair<const char*, const char*> kJobLabels[] = {
        {"training.kubeflow.org/job-name", "TFJob"},
        {"tf-job-name", "TFJob"},
        {"volcano.sh/job-name", "Volcano Job"}};
    for (const auto& [label, kind] : kJobLabels) {
      auto it = p.labels.find(label);
      if (it == p.labels.end()) continue;
      j.owners.insert(fmt::format("{} '{}'", kind, Printable(it->second)));
      break;
    }
  }
  StatusOr<RuleSet> rules = LoadRules(o.rules);
  if (!rules.ok()) return rules.status();
  StatusOr<Capture> empty = CaptureBuilder().Finish();
  if (!empty.ok()) return empty.status();
  AnalysisResult result = Analyze(*empty, *rules, &k8s, 1);
  // Judged object by object: a grouped finding raises each object it covers.
  for (const Finding& f : UngroupFindings(result.findings))
    j.raised.insert(f.rule_id + " " + f.subject);
  for (const Finding& f : result.findings) {
    if (FixedInManifest(f.rule_id)) continue;
    const Rule* rule = rules->Find(f.rule_id);
    std::string where = rule != nullptr ? rule->fix.substr(0, rule->fix.find('\n')) : "";
    if (where.empty()) where = "tfdiag rules explain " + f.rule_id;
    j.elsewhere.push_back(fmt::format("{} on {}: {}", f.rule_id, f.subject, where));
  }
  return j;
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
  if (!o.cpus.empty()) TFDIAG_RETURN_IF_ERROR(ParseCpusFlag(o.cpus, &o.fix));
  // One parse for judging and fixing: the model's trees are the ones the fixes are made in.
  K8sDeployment k8s;
  std::vector<std::unique_ptr<YamlNode>> docs;
  TFDIAG_RETURN_IF_ERROR(ParseK8sText(text, o.manifest, &k8s, &docs));
  StatusOr<Judged> judged = Judge(k8s, o);
  if (!judged.ok()) return judged.status();
  // What analyze refuses, fix refuses the same way (exit 2, the same line: issue 48).
  if (!judged->nothing.empty()) return InvalidInput("{}", judged->nothing);
  o.fix.raised = &judged->raised;
  StatusOr<FixResult> r = FixParsedManifest(text, o.manifest, k8s, std::move(docs), o.fix);
  if (!r.ok()) return r.status();
  if (!o.quiet) {
    for (const std::string& c : r->changes)
      std::fprintf(stderr, "change: %s\n", Printable(c).c_str());
    for (const std::string& n : GroupNotes(r->notes)) {
      std::fprintf(stderr, "note: %s\n", Printable(n).c_str());
    }
    for (const std::string& w : r->warnings) PrintNote("warning: ", w);
    if (r->changed && o.fix.default_cpus > 0 && o.fix.role_cpus.empty()) {
      PrintNote("note: ", fmt::format("--cpus {} is the CPU limit of every role's containers that "
                                      "had none (PS and workers alike); per role: --cpus "
                                      "ps=1,worker={}",
                                      o.fix.default_cpus, o.fix.default_cpus));
    }
    // Findings left open because their fix needs a number only the user can choose.
    std::string open;
    for (const auto& [flag, rules] : r->needs) {
      std::string list;
      for (const auto& [rule, n] : rules)
        list += fmt::format("{}{} ({} container{})", list.empty() ? "" : ", ", rule, n,
                            n == 1 ? "" : "s");
      open += fmt::format("{}{} needs {}", open.empty() ? "" : "; ", list, flag);
    }
    if (judged->replica_types == 0 && judged->tf_pods > 0) {
      // A pod list: what runs, made by a controller from its object; that object is what to fix.
      std::string owners;
      for (const std::string& w : judged->owners) owners += (owners.empty() ? "" : ", ") + w;
      PrintNote("", fmt::format("nothing to fix in {}: it lists {} TF pod{} as they run; pods are "
                                "made from their job's object, so fix that object's manifest "
                                "({}) with tfdiag fix; analyze judges the pods as they are",
                                o.manifest, judged->tf_pods, judged->tf_pods == 1 ? "" : "s",
                                owners.empty() ? "its TFJob, Deployment or StatefulSet" : owners));
    } else if (!r->changed) {
      PrintNote("", open.empty() ? fmt::format("nothing to fix in {}: no finding a fix can address",
                                               o.manifest)
                                 : fmt::format("nothing changed in {}: findings stand that need "
                                               "a choice: {}",
                                               o.manifest, open));
    } else if (!open.empty()) {
      PrintNote("", "still open, needing a choice: " + open);
    }
    for (const std::string& e : judged->elsewhere)
      PrintNote("not fixed here (not a manifest change): ", Printable(e));
    PrintNote("",
              "findings of a profile (hot-ps, straggler-worker, input-bound, ...) are changes "
              "to the model code or its input pipeline, not to the manifest: tfdiag analyze "
              "gives each one's fix");
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
  app->add_option("--cpus", o->cpus,
                  "CPU limit in cores for containers without one (at least their request): a "
                  "number for every role (--cpus 4), or per TF role (--cpus ps=1,worker=4; "
                  "ps=1,4: PS 1, the other roles 4); without it tfdiag never adds or lowers a "
                  "CPU limit");
  app->add_option("--memory", o->fix.default_memory,
                  "Memory (e.g. 8Gi) for containers that set neither memory request nor limit");
  app->add_flag("-q,--quiet", o->quiet, "No change list on stderr");
  AddRuleOptions(app, &o->rules);
  return {app, [o](int* exit_code) { return Run(*o, exit_code); }};
}

}  // namespace tfdiag
