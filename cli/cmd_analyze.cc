// tfdiag analyze FILE...: read timelines, run the rules, print findings with evidence and fixes.
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "analyzers/analysis.h"
#include "cli/commands.h"
#include "collectors/k8s/k8s_reader.h"
#include "collectors/load_inputs.h"
#include "collectors/xplane/host_tasks.h"
#include "collectors/xplane/log_dir.h"
#include "core/atomic_file.h"
#include "core/bundle.h"
#include "core/capture_builder.h"
#include "core/spooled_inputs.h"
#include "core/stopwatch.h"
#include "report/report.h"

namespace tfdiag {

namespace {

struct AnalyzeOptions {
  std::vector<std::string> inputs;
  std::string format = "text";  // text | json
  std::string output = "-";
  std::string fail_on = "none";
  std::string color = "auto";  // auto | always | never
  bool compact = false;
  bool progress = true;
  int threads = 0;  // 0: one per core
  bool timings = false;
  std::string run;        // profile run of a log directory ("" = latest)
  std::string tf_config;  // --tf-config FILE|JSON: hosts of profile files -> TF tasks
  RuleOptions rules;
};

// Progress on stderr for large inputs on a terminal: one line, rewritten in place.
class Progress {
 public:
  explicit Progress(bool enabled) : enabled_(enabled && IsTty(2)) {}
  ~Progress() {
    if (shown_) std::fprintf(stderr, "\r\x1b[K");
  }
  void Update(const std::string& path, int64_t done, int64_t total) {
    if (!enabled_ || total < kMinBytes) return;
    auto now = std::chrono::steady_clock::now();
    if (shown_ && now - last_ < std::chrono::milliseconds(200) && done < total) return;
    if (!shown_) start_ = now;
    last_ = now;
    shown_ = true;
    double secs = std::chrono::duration<double>(now - start_).count();
    double mbs = secs > 0 ? done / 1048576.0 / secs : 0;
    std::fprintf(stderr, "\r\x1b[Kreading %s: %3.0f%% (%.0f/%.0f MiB, %.0f MiB/s)", path.c_str(),
                 100.0 * done / total, done / 1048576.0, total / 1048576.0, mbs);
  }

 private:
  static constexpr int64_t kMinBytes = 50ll << 20;
  bool enabled_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};

Status RunSpooled(const AnalyzeOptions& o, const SpooledInputs& spooled, int* exit_code);

// Pipes and standard input are copied to temporary files first (core/spooled_inputs.h); the
// readers name the inputs as given (LoadOptions::names, ReadK8sFile's name).
Status Run(const AnalyzeOptions& given, int* exit_code) {
  AnalyzeOptions o = given;
  SpooledInputs spooled;
  TFDIAG_RETURN_IF_ERROR(spooled.Spool(&o.inputs));
  return RunSpooled(o, spooled, exit_code);
}

Status RunSpooled(const AnalyzeOptions& o, const SpooledInputs& spooled, int* exit_code) {
  StatusOr<RuleSet> rules = LoadRules(o.rules);
  if (!rules.ok()) return rules.status();
  std::optional<Severity> fail_on;
  if (o.fail_on != "none") {
    StatusOr<Severity> s = ParseSeverity(o.fail_on);
    if (!s.ok()) return s.status().WithPrefix("--fail-on");
    fail_on = *s;
  }
  // Kubernetes manifests and pod lists (by content, or a .yaml/.yml name) go to the k8s reader;
  // everything else is a timeline or a bundle.
  std::vector<std::string> traces;
  K8sDeployment k8s;
  bool have_k8s = false;
  for (const std::string& path : o.inputs) {
    char head[256] = {0};
    std::ifstream probe(path, std::ios::binary);
    probe.read(head, sizeof head);
    if (!IsDirectory(path) &&
        !LooksLikeBundle(std::string_view(head, static_cast<size_t>(probe.gcount()))) &&
        IsK8sFile(path)) {
      TFDIAG_RETURN_IF_ERROR(ReadK8sFile(path, &k8s, spooled.NameOf(path)));
      have_k8s = true;
    } else {
      traces.push_back(path);
    }
  }
  for (const std::string& n : k8s.notes) std::fprintf(stderr, "note: %s\n", n.c_str());
  double read_s = 0, finish_s = 0;
  const int threads = o.threads > 0
                          ? o.threads
                          : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  StatusOr<Capture> capture = [&]() -> StatusOr<Capture> {
    if (traces.empty()) return CaptureBuilder().Finish();
    Progress progress(o.progress);
    LoadOptions lo;
    lo.threads = threads;
    lo.run = o.run;
    std::vector<std::string> notes;
    lo.notes = &notes;
    if (!o.tf_config.empty()) {
      StatusOr<ClusterSpec> cluster = ClusterFromTfConfigArg(o.tf_config);
      if (!cluster.ok()) return cluster.status();
      lo.cluster = *cluster;
    }
    struct PrintNotes {  // also when loading fails: the notes say what was tried
      std::vector<std::string>& n;
      ~PrintNotes() {
        for (const std::string& s : n) std::fprintf(stderr, "note: %s\n", s.c_str());
      }
    } print_notes{notes};
    lo.read_s = &read_s;
    lo.finish_s = &finish_s;
    for (const std::string& path : traces) lo.names.push_back(spooled.NameOf(path));
    lo.progress = [&](size_t, const std::string& path, int64_t done, int64_t total) {
      progress.Update(spooled.NameOf(path), done, total);
    };
    return LoadInputs(traces, lo);
  }();
  if (!capture.ok()) return capture.status();
  Stopwatch watch;
  AnalysisResult result = Analyze(*capture, *rules, have_k8s ? &k8s : nullptr, threads);
  const double analyze_s = watch.Lap();

  std::string text;
  if (o.format == "json") {
    text = RenderJson(*capture, result, !o.compact);
  } else {
    TextReportOptions to;
    bool to_tty = (o.output == "-" || o.output == "/dev/stdout") && IsTty(1);
    to.color =
        o.color == "always" || (o.color == "auto" && to_tty && std::getenv("NO_COLOR") == nullptr);
    text = RenderText(*capture, result, to);
  }
  const double render_s = watch.Lap();
  TFDIAG_RETURN_IF_ERROR(WriteFileAtomically(o.output, text));
  if (o.timings) {
    std::fprintf(stderr,
                 "timings (s, wall, %d threads): read %.3f, finish %.3f, analyze %.3f, render "
                 "%.3f, write %.3f\n",
                 threads, read_s, finish_s, analyze_s, render_s, watch.Lap());
  }
  *exit_code = 0;
  if (fail_on) {
    for (const Finding& f : result.findings) {
      if (f.severity >= *fail_on) *exit_code = 1;
    }
  }
  return OkStatus();
}

}  // namespace

Command RegisterAnalyze(CLI::App& root) {
  auto o = std::make_shared<AnalyzeOptions>();
  CLI::App* app = root.add_subcommand(
      "analyze",
      "Analyze TF timelines (TF1 Timeline JSON, TF2 trace JSON, gzip), TF2 profiles (*.xplane.pb, "
      "TensorBoard log directories, TF 2.0 *.trace) and TF1 RunMetadata (binary or text): "
      "per-task and PS load tables, then findings with evidence and fixes");
  app->add_option("files", o->inputs,
                  "Timeline files (one per worker or step; merged), TF2 profiles (*.xplane.pb, "
                  "*.trace, log directories), RunMetadata, bundles, Kubernetes manifests "
                  "and pod lists (YAML/JSON); - or a pipe (<(zcat x.gz)) is read once into a "
                  "temporary file")
      ->required()
      ->check(InputPath());
  app->add_option("-f,--format", o->format, "Output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  app->add_option("-o,--output", o->output, "Write here (atomically) instead of stdout");
  app->add_option("--fail-on", o->fail_on,
                  "Exit 1 if a finding has this severity or higher "
                  "(none, info, low, medium, high, critical)")
      ->capture_default_str();
  app->add_option("--color", o->color, "Colour the text report")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
  app->add_flag("--compact", o->compact, "Compact JSON (no indentation)");
  app->add_flag("!--no-progress", o->progress, "No progress line on stderr");
  app->add_flag("--timings", o->timings,
                "Print the wall time of each phase (read, finish, analyze, render, write) on "
                "stderr");
  app->add_option("-j,--threads", o->threads,
                  "Threads for parsing a large plain timeline (0: one per core; the result does "
                  "not depend on it)")
      ->capture_default_str()
      ->check(CLI::Range(0, 64));
  app->add_option("--run", o->run,
                  "Profile run to read from a TensorBoard log directory (default: the latest)");
  app->add_option("--tf-config", o->tf_config,
                  "TF_CONFIG (a file or the JSON) mapping profiled hosts (host_port in the file "
                  "names) to TF tasks");
  AddRuleOptions(app, &o->rules);
  return {app, [o](int* exit_code) { return Run(*o, exit_code); }};
}

}  // namespace tfdiag
