// tfdiag fix MANIFEST: the manifest with the deployment advice applied (collectors/k8s/k8s_fix.h),
// on stdout, as JSON merge patches (--patch), or written back atomically (--in-place).
#include <fstream>
#include <sstream>

#include "cli/commands.h"
#include "collectors/k8s/k8s_fix.h"
#include "core/atomic_file.h"

namespace tfdiag {

namespace {

struct FixCmdOptions {
  std::string manifest;
  bool patch = false;
  bool in_place = false;
  bool quiet = false;
  FixOptions fix;
};

Status Run(const FixCmdOptions& o, int* exit_code) {
  if (o.patch && o.in_place) return UsageError("--patch and --in-place exclude each other");
  std::ifstream in(o.manifest, std::ios::binary);
  if (!in) return IoError("{}: cannot open", o.manifest);
  std::ostringstream ss;
  ss << in.rdbuf();
  StatusOr<FixResult> r = FixManifest(ss.str(), o.manifest, o.fix);
  if (!r.ok()) return r.status();
  if (!o.quiet) {
    for (const std::string& c : r->changes) std::fprintf(stderr, "change: %s\n", c.c_str());
    for (const std::string& n : r->notes) std::fprintf(stderr, "note: %s\n", n.c_str());
  }
  if (o.patch) {
    std::string text;
    for (size_t i = 0; i < r->patches.size(); ++i) {
      text += r->patches[i] + "\n";
      if (!o.quiet) {
        std::fprintf(stderr,
                     "apply: kubectl patch %s --type merge -p \"$(sed -n %zup PATCHFILE)\"\n",
                     r->patch_targets[i].c_str(), i + 1);
      }
    }
    std::fwrite(text.data(), 1, text.size(), stdout);
  } else if (o.in_place) {
    TFDIAG_RETURN_IF_ERROR(WriteFileAtomically(o.manifest, r->yaml));
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
      "with the deployment fixes applied: podAntiAffinity on PS (kubernetes.io/hostname), "
      "requests = limits with whole CPUs, TF/OpenMP thread env = CPU limit. Comments after the "
      "leading block are dropped (yaml-cpp).");
  app->add_option("manifest", o->manifest, "Manifest file (YAML or JSON, several documents)")
      ->required()
      ->check(CLI::ExistingFile);
  app->add_flag("--patch", o->patch,
                "Print one JSON merge patch (RFC 7386) per changed object instead, one per line");
  app->add_flag("--in-place", o->in_place, "Write the fixed manifest over MANIFEST (atomically)");
  app->add_option("--cpus", o->fix.default_cpus,
                  "CPUs for containers that set neither CPU request nor limit")
      ->check(CLI::Range(1, 1024));
  app->add_option("--memory", o->fix.default_memory,
                  "Memory (e.g. 8Gi) for containers that set neither memory request nor limit");
  app->add_flag("-q,--quiet", o->quiet, "No change list on stderr");
  return {app, [o](int* exit_code) { return Run(*o, exit_code); }};
}

}  // namespace tfdiag
