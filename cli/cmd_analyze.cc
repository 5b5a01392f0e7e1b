// tfdiag analyze FILE...: read timelines, run the rules, print findings with evidence and fixes.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <ctime>

#include "analyzers/analysis.h"
#include "analyzers/grouping.h"
#include "cli/commands.h"
#include "cli/sarif_fixes.h"
#include "collectors/prometheus/job_reader.h"
#include "core/atomic_file.h"
#include "core/bundle.h"
#include "core/escape.h"
#include "core/spooled_inputs.h"
#include "core/stopwatch.h"
#include "pipeline/pipeline.h"
#include "report/report.h"
#include "report/sarif_report.h"
#include "report/wrap.h"

namespace tfdiag {

namespace {

struct AnalyzeOptions {
  std::vector<std::string> inputs;
  std::string format = "text";  // text | json
  std::string output = "-";
  std::string fail_on = "none";
  std::string color = "auto";  // auto | always | never
  int width = -1;  // prose wrap column of the text report; -1: 100 on a terminal, else 0
  bool compact = false;
  bool brief = false;  // --brief: Fix first, one line per finding, Not judged
  bool progress = true;
  int threads = 0;  // 0: one per core
  bool timings = false;
  std::string run;        // profile run of a log directory ("" = latest)
  std::string tf_config;  // --tf-config FILE|JSON: hosts of profile files -> TF tasks
  RuleOptions rules;
  // Cluster mode (issue 16): the job read from Prometheus.
  PromClientOptions prom;
  std::string job, namespace_, start, end, window, save, step;
  std::string agent_scrape_job = "tfdiag-agent";
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
    std::fprintf(stderr, "\r\x1b[Kreading %s: %3.0f%% (%.0f/%.0f MiB, %.0f MiB/s)",
                 Printable(path).c_str(), 100.0 * done / total, done / 1048576.0, total / 1048576.0,
                 mbs);
  }

 private:
  static constexpr int64_t kMinBytes = 50ll << 20;
  bool enabled_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};

Status RunSpooled(const AnalyzeOptions& o, const SpooledInputs& spooled, int* exit_code,
                  StatusOr<PromJob>* cluster = nullptr, const PromClient* client = nullptr);

// --prometheus: read the job from Prometheus, save it (--save), analyse it with any manifests
// given beside it. The JSON report gains a "prometheus" section (window, step, queries).
Status RunCluster(AnalyzeOptions o, int* exit_code) {
  if (o.job.empty()) return UsageError("--prometheus needs --job NAME");
  if (!o.window.empty() && (!o.start.empty() || !o.end.empty()))
    return UsageError("--window and --start/--end exclude each other");
  if (o.start.empty() != o.end.empty()) return UsageError("--start and --end go together");
  PromJobOptions jo;
  jo.job = o.job;
  jo.namespace_ = o.namespace_;
  if (o.agent_scrape_job.empty()) return UsageError("--agent-scrape-job: expected a job name");
  jo.agent_scrape_job = o.agent_scrape_job;
  if (!o.start.empty()) {
    StatusOr<double> a = ParsePromTime(o.start), b = ParsePromTime(o.end);
    if (!a.ok()) return a.status().WithPrefix("--start");
    if (!b.ok()) return b.status().WithPrefix("--end");
    if (!(*b > *a)) return UsageError("--end must be after --start");
    jo.start_s = *a;
    jo.end_s = *b;
  } else {
    StatusOr<double> w = ParsePromDuration(o.window.empty() ? "30m" : o.window);
    if (!w.ok()) return w.status().WithPrefix("--window");
    jo.end_s = static_cast<double>(std::time(nullptr));
    jo.start_s = jo.end_s - *w;
  }
  if (!o.step.empty()) {
    StatusOr<double> st = ParsePromDuration(o.step);
    if (!st.ok()) return st.status().WithPrefix("--step");
    jo.step_s = *st;
    TFDIAG_RETURN_IF_ERROR(CheckPromStep(jo.start_s, jo.end_s, jo.step_s, o.step));
  }
  StatusOr<std::unique_ptr<PromClient>> client = PromClient::Create(o.prom);
  if (!client.ok()) return client.status();
  StatusOr<PromJob> job = ReadJobFromPrometheus(client->get(), jo);
  if (!job.ok()) return job.status();
  for (const std::string& n : job->notes) PrintNote("note: ", n);
  if (!o.save.empty()) TFDIAG_RETURN_IF_ERROR(WriteBundle(job->capture, o.save));
  SpooledInputs spooled;
  TFDIAG_RETURN_IF_ERROR(spooled.Spool(&o.inputs));
  return RunSpooled(o, spooled, exit_code, &job, client->get());
}

// Pipes and standard input are copied to temporary files first (core/spooled_inputs.h); the
// readers name the inputs as given (LoadOptions::names, ReadK8sFile's name).
Status Run(const AnalyzeOptions& given, int* exit_code) {
  if (!given.prom.url.empty()) return RunCluster(given, exit_code);
  if (given.inputs.empty())
    return UsageError("files: expected at least one file (or --prometheus)");
  AnalyzeOptions o = given;
  SpooledInputs spooled;
  TFDIAG_RETURN_IF_ERROR(spooled.Spool(&o.inputs));
  return RunSpooled(o, spooled, exit_code);
}

Status RunSpooled(const AnalyzeOptions& o, const SpooledInputs& spooled, int* exit_code,
                  StatusOr<PromJob>* cluster, const PromClient* client) {
  StatusOr<RuleSet> rules = LoadRules(o.rules);
  if (!rules.ok()) return rules.status();
  std::optional<Severity> fail_on;
  // Severities as printed ([HIGH]) or as in the rules file (high): case does not matter.
  std::string fail_on_name = o.fail_on;
  for (char& ch : fail_on_name)
    ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (fail_on_name != "none") {
    StatusOr<Severity> s = ParseSeverity(fail_on_name);
    if (!s.ok()) return s.status().WithPrefix("--fail-on");
    fail_on = *s;
  }
  // One pipeline with the viewer (pipeline/pipeline.h): manifests apart from traces,
  // --tf-config, load, analyze.
  PipelineOptions po;
  for (const std::string& path : o.inputs) po.names.push_back(spooled.NameOf(path));
  const std::vector<std::string> names = po.names;
  po.threads = o.threads;
  po.run = o.run;
  po.tf_config = o.tf_config;
  if (cluster != nullptr) {
    po.capture = std::move((*cluster)->capture);
    po.pods = std::move((*cluster)->k8s.pods);  // as kube-state-metrics saw them
  }
  std::vector<std::string> notes;
  po.notes = &notes;
  StatusOr<PipelineResult> run = [&] {
    Progress progress(o.progress);
    po.progress = [&](size_t, size_t, const std::string& path, int64_t done, int64_t total) {
      progress.Update(spooled.NameOf(path), done, total);
    };
    return AnalyzeInputs(o.inputs, *rules, std::move(po));
  }();
  // No input gave the rules anything (a misspelt kind, a pod list without TF pods, a trace
  // without TF ops): bad input, not "No rule fired" and exit 0 (issue 39), in one line that
  // says what each input held: the notes, which repeat it in other words, are not printed.
  const std::string nothing = run.ok() && cluster == nullptr ? NothingToJudge(*run) : "";
  // Also when loading failed: the notes say what was tried.
  if (nothing.empty()) {
    for (const std::string& n : GroupNotes(notes)) PrintNote("note: ", n);
  }
  if (!run.ok()) return run.status();
  if (!nothing.empty()) return InvalidInput("{}", nothing);
  // The notes printed on stderr (run selection, inputs skipped, manifests) belong to the JSON
  // document too (issue 45): its "notes" keep every one, each once.
  if (o.format == "json" && nothing.empty()) {
    std::vector<std::string>& kept = run->analysis.notes;
    const std::vector<std::string>* k8s =
        run->analysis.k8s != nullptr ? &run->analysis.k8s->notes : nullptr;
    for (const std::string& n : GroupNotes(notes)) {
      const bool known = std::find(kept.begin(), kept.end(), n) != kept.end() ||
                         (k8s != nullptr && std::find(k8s->begin(), k8s->end(), n) != k8s->end());
      if (!known) kept.push_back(n);
    }
  }
  const Capture* capture = &run->capture;
  const AnalysisResult& result = run->analysis;
  Stopwatch watch;

  std::string text;
  if (o.format == "sarif") {
    // Each manifest finding's own edit, from the files as read (name as given -> path).
    std::map<std::string, std::string> files;
    for (size_t i = 0; i < o.inputs.size(); ++i) files.emplace(names[i], o.inputs[i]);
    const SarifFixes fixes = ManifestSarifFixes(UngroupFindings(result.findings), files);
    // Findings not on a manifest line point at the first trace or bundle (else the first input);
    // a Prometheus job's at a placeholder path named by the job (docs/manifests.md).
    SarifInputs where;
    for (const FileStats& f : capture->stats.files) where.traces.push_back(f.path);
    if (where.traces.empty() && cluster == nullptr) where.traces = names;  // manifests only
    if (cluster != nullptr) {
      where.placeholder = "prometheus/" + o.job;
      where.prometheus_url = o.prom.url;
      if (cluster->ok()) where.prometheus_query = (*cluster)->discovery_promql;
    }
    StatusOr<std::string> sarif = RenderSarif(result, *rules, !o.compact, &fixes, &where);
    if (!sarif.ok()) return sarif.status();
    text = std::move(*sarif);
  } else if (o.format == "json") {
    // The cluster section (window, step, queries, pods) is the document's "prometheus" key.
    const std::string prometheus =
        cluster != nullptr && client != nullptr ? PromJobJson(**cluster, *client) : "";
    StatusOr<std::string> json = RenderJson(*capture, result, !o.compact, prometheus);
    if (!json.ok()) return json.status();
    text = std::move(*json);
  } else {
    TextReportOptions to;
    bool to_tty = (o.output == "-" || o.output == "/dev/stdout") && IsTty(1);
    to.color =
        o.color == "always" || (o.color == "auto" && to_tty && std::getenv("NO_COLOR") == nullptr);
    to.width = o.width >= 0 ? static_cast<size_t>(o.width) : to_tty ? kProseColumns : 0;
    to.brief = o.brief;
    text = RenderText(*capture, result, to);
  }
  const double render_s = watch.Lap();
  TFDIAG_RETURN_IF_ERROR(WriteFileAtomically(o.output, text));
  if (o.timings) {
    std::fprintf(stderr,
                 "timings (s, wall, %d threads): read %.3f, finish %.3f, analyze %.3f, render "
                 "%.3f, write %.3f\n",
                 run->threads, run->read_s, run->finish_s, run->analyze_s, render_s, watch.Lap());
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
      "Analyze what you have, alone or together: TF timelines (TF1 Timeline JSON, TF2 trace "
      "JSON, gzip), TF2 profiles (*.xplane.pb, TF 2.0 *.trace, TensorBoard log directories), TF1 "
      "RunMetadata (binary or text), bundles from `tfdiag attach`, Kubernetes manifests (TFJob, "
      "Volcano Job, ElasticJob, Deployment, StatefulSet) and pod lists (kubectl get pods -o json); "
      "or a job read from a cluster's Prometheus (--prometheus URL --job NAME): per-task and PS "
      "load tables, then findings with evidence and fixes (`tfdiag fix` applies a manifest's)");
  CLI::Option* prom = app->add_option(
      "--prometheus", o->prom.url,
      "Read the job from this Prometheus server (http(s)://host:port): its pods from "
      "kube-state-metrics, their CPU, throttling, threads and network from the "
      "kubelet's cAdvisor");
  app->add_option("--job", o->job, "With --prometheus: the TF job's name (TFJob, Volcano Job)");
  app->add_option("--namespace", o->namespace_, "With --prometheus: the job's namespace");
  app->add_option("--start", o->start, "With --prometheus: window start (RFC 3339 or Unix s)");
  app->add_option("--end", o->end, "With --prometheus: window end (RFC 3339 or Unix s)");
  app->add_option("--window", o->window,
                  "With --prometheus: the window ending now (30m, 1h; default 30m)");
  app->add_option("--step", o->step,
                  "With --prometheus: the resolution (15s, 1s; default max(15s, window/240)); "
                  "rates are taken over 4 steps, so give at least the scrape interval");
  app->add_option("--agent-scrape-job", o->agent_scrape_job,
                  "With --prometheus: the scrape job of the tfdiag agents, whose `up` names nodes "
                  "whose agent was down (deploy/prometheus.yml's)")
      ->capture_default_str();
  app->add_option("--save", o->save,
                  "With --prometheus: write what was read as a bundle (for analyze and view)");
  app->add_option("--bearer-token-file", o->prom.bearer_token_file,
                  "With --prometheus: send the file's token as Authorization: Bearer");
  app->add_option("--basic-auth", o->prom.basic_auth,
                  "With --prometheus: USER:PASSFILE for HTTP basic auth");
  app->add_option("--ca-file", o->prom.ca_file, "With --prometheus: CA bundle (PEM) for https");
  app->add_flag("--insecure-skip-verify", o->prom.insecure_skip_verify,
                "With --prometheus: do not verify the server's TLS certificate");
  app->add_option("--prometheus-timeout", o->prom.timeout_s,
                  "With --prometheus: seconds per request; the whole run gets 4 times this")
      ->capture_default_str();
  app->add_option("--prometheus-max-bytes", o->prom.max_bytes,
                  "With --prometheus: the largest reply read, in bytes")
      ->capture_default_str();
  app->add_option("files", o->inputs,
                  "Timeline files (one per worker or step; merged), TF2 profiles (*.xplane.pb, "
                  "*.trace, log directories), RunMetadata, bundles, Kubernetes manifests "
                  "and pod lists (YAML/JSON); - or a pipe (<(zcat x.gz)) is read once into a "
                  "temporary file (required without --prometheus)")
      ->check(InputPath());
  app->add_option("-f,--format", o->format,
                  "Output format (sarif: SARIF 2.1.0 for code review, findings on manifests "
                  "with file and line)")
      ->check(CLI::IsMember({"text", "json", "sarif"}))
      ->capture_default_str();
  app->add_option("-o,--output", o->output, "Write here (atomically) instead of stdout");
  app->add_option("--fail-on", o->fail_on,
                  "Exit 1 if a finding has this severity or higher "
                  "(none, info, low, medium, high, critical)")
      ->capture_default_str();
  app->add_option("--color", o->color, "Colour the text report")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
  app->add_option("--width", o->width,
                  "Wrap the text report's prose (summaries, impact, fix, notes) at this column; 0 "
                  "never. Default: 100 on a terminal, else not wrapped")
      ->check(CLI::Range(0, 10000));
  app->add_flag("--compact", o->compact, "Compact JSON (no indentation)");
  app->add_flag("--brief", o->brief,
                "Text report on one screen: Fix first (with its range), one line per finding, "
                "Not judged");
  // A plain flag: "!--no-progress" showed as "--no-progress{false}" in --help.
  app->add_flag_callback(
      "--no-progress", [o] { o->progress = false; }, "No progress line on stderr");
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
  RequirePrometheus(app, prom);
  return {app, [o](int* exit_code) { return Run(*o, exit_code); }};
}

}  // namespace tfdiag
