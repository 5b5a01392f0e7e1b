// tfdiag scaling RUN RUN [RUN...]: compares runs of one job at different worker counts and names
// what stops throughput from following the worker count (analyzers/scaling.h).
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>

#include "analyzers/scaling.h"
#include "cli/commands.h"
#include "collectors/prometheus/job_reader.h"
#include "core/atomic_file.h"
#include "core/escape.h"
#include "pipeline/run_files.h"
#include "pipeline/scaling_periods.h"
#include "report/scaling_report.h"
#include "report/wrap.h"

namespace tfdiag {

namespace {

struct ScalingOptions {
  std::vector<std::string> runs;
  std::string format = "text";  // text | json
  std::string output = "-";
  int64_t batch_size = 0;
  bool compact = false;
  RuleOptions rules;
  // --prometheus: one job whose worker count changed over time.
  PromClientOptions prom;
  std::string job, namespace_, start, end, step, step_metric;
};

// The runs of --prometheus: the periods with a steady number of worker pods.
StatusOr<std::vector<ScalingRun>> PromRuns(const ScalingOptions& o) {
  if (!o.runs.empty()) return UsageError("--prometheus takes no RUN arguments");
  if (o.job.empty()) return UsageError("--prometheus needs --job NAME");
  if (o.start.empty() || o.end.empty()) return UsageError("--prometheus needs --start and --end");
  PromScalingOptions po;
  po.job = o.job;
  po.namespace_ = o.namespace_;
  po.step_metric = o.step_metric;
  StatusOr<double> a = ParsePromTime(o.start), b = ParsePromTime(o.end);
  if (!a.ok()) return a.status().WithPrefix("--start");
  if (!b.ok()) return b.status().WithPrefix("--end");
  if (!(*b > *a)) return UsageError("--end must be after --start");
  po.start_s = *a;
  po.end_s = *b;
  if (!o.step.empty()) {
    StatusOr<double> st = ParsePromDuration(o.step);
    if (!st.ok()) return st.status().WithPrefix("--step");
    po.step_s = *st;
    TFDIAG_RETURN_IF_ERROR(CheckPromStep(po.start_s, po.end_s, po.step_s, o.step));
  }
  StatusOr<std::unique_ptr<PromClient>> client = PromClient::Create(o.prom);
  if (!client.ok()) return client.status();
  StatusOr<PromScalingResult> r = ReadScalingPeriods(client->get(), po);
  if (!r.ok()) return r.status();
  PrintNote("pods from ", fmt::format("{}; {} periods with a steady worker count (grid {:.0f} s)",
                                      r->pods_source, r->periods.size(), r->step_s));
  for (const std::string& n : r->notes) PrintNote("note: ", n);
  if (o.batch_size > 0) {
    for (ScalingRun& run : r->runs) {
      if (!run.throughput_proxy) {
        run.throughput_examples_per_s = run.throughput_steps_per_s * o.batch_size;
      }
    }
  }
  return std::move(r->runs);
}

Status Run(const ScalingOptions& o, int* exit_code) {
  if (o.prom.url.empty() && o.runs.size() < 2) {
    std::error_code ec;
    return UsageError(
        "scaling compares runs of one job: give at least two RUNs (got {}){}", o.runs.size(),
        o.runs.size() == 1 && std::filesystem::is_directory(o.runs[0], ec)
            ? fmt::format(
                  "; {} is read as one run: for one run per file give {}/*.json", o.runs[0],
                  o.runs[0].back() == '/' ? o.runs[0].substr(0, o.runs[0].size() - 1) : o.runs[0])
            : "");
  }
  // The same file twice (by name, or a link to it: device and inode) compares a run with itself.
  for (size_t i = 0; i < o.runs.size(); ++i) {
    struct stat a;
    if (::stat(o.runs[i].c_str(), &a) != 0) continue;
    for (size_t j = 0; j < i; ++j) {
      struct stat b;
      if (::stat(o.runs[j].c_str(), &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
        return UsageError(
            "RUN {} is {}: scaling compares runs at different worker counts; give each run once",
            o.runs[i], o.runs[i] == o.runs[j] ? "given twice" : "the same file as " + o.runs[j]);
      }
    }
  }
  StatusOr<RuleSet> rules = LoadRules(o.rules);
  if (!rules.ok()) return rules.status();
  const Rule* rule = rules->Find("scaling-limit");
  if (rule == nullptr) return InvalidInput("the rule set has no rule 'scaling-limit'");
  std::vector<ScalingRun> runs;
  if (!o.prom.url.empty()) {
    StatusOr<std::vector<ScalingRun>> p = PromRuns(o);
    if (!p.ok()) return p.status();
    runs = std::move(*p);
  }
  for (const std::string& run : o.runs) {
    StatusOr<ScalingRun> m = LoadScalingRun(run, *rules, o.batch_size);
    if (!m.ok()) return m.status();
    runs.push_back(std::move(*m));
  }
  StatusOr<ScalingResult> result = CompareRuns(std::move(runs), *rule);
  if (!result.ok()) return result.status();
  if (!rule->enabled) result->findings.clear();
  for (const std::string& w : result->warnings) PrintNote("warning: ", w);
  StatusOr<std::string> text = o.format == "json"
                                   ? RenderScalingJson(*result, !o.compact)
                                   : StatusOr<std::string>(RenderScalingText(
                                         *result, o.output == "-" && IsTty(1) ? kProseColumns : 0));
  if (!text.ok()) return text.status();
  TFDIAG_RETURN_IF_ERROR(WriteFileAtomically(o.output, *text));
  *exit_code = 0;
  return OkStatus();
}

}  // namespace

Command RegisterScaling(CLI::App& root) {
  auto o = std::make_shared<ScalingOptions>();
  CLI::App* app = root.add_subcommand(
      "scaling",
      "Compare runs of one job at different worker counts (each RUN any input analyze takes, or "
      "a directory of a run's files): throughput, speed-up and efficiency against linear, PS busy "
      "shares, and what stops throughput from following the workers (rule scaling-limit)");
  app->add_option("runs", o->runs, "Runs: a timeline or bundle, or a directory of one run's files")
      ->check(CLI::ExistingPath);
  CLI::Option* prom = app->add_option(
      "--prometheus", o->prom.url,
      "Instead of RUNs: the Prometheus that scrapes the cluster; each period in which "
      "--job ran with a steady number of worker pods is a run");
  app->add_option("--job", o->job, "With --prometheus: the TF job's name (TFJob, Volcano Job)");
  app->add_option("--namespace", o->namespace_, "With --prometheus: the job's namespace");
  app->add_option("--start", o->start, "With --prometheus: window start (RFC 3339 or Unix s)");
  app->add_option("--end", o->end, "With --prometheus: window end (RFC 3339 or Unix s)");
  app->add_option("--step", o->step,
                  "With --prometheus: grid of the worker count (15s, 1m; default max(15 s, "
                  "window / 240))");
  app->add_option("--step-metric", o->step_metric,
                  "With --prometheus: the job's own step counter (a counter with a pod label); "
                  "default: the agents' tfdiag_task_steps_total, else a bytes proxy");
  app->add_option("--bearer-token-file", o->prom.bearer_token_file,
                  "With --prometheus: send the file's token as Authorization: Bearer");
  app->add_option("--basic-auth", o->prom.basic_auth,
                  "With --prometheus: USER:PASSFILE for HTTP basic auth");
  app->add_option("--ca-file", o->prom.ca_file, "With --prometheus: CA bundle (PEM) for https");
  app->add_flag("--insecure-skip-verify", o->prom.insecure_skip_verify,
                "With --prometheus: do not verify the server's TLS certificate");
  app->add_option("--prometheus-timeout", o->prom.timeout_s,
                  "With --prometheus: seconds per request; the whole run gets 4 times this")
      ->check(CLI::Range(0.1, 3600.0));
  app->add_option("--prometheus-max-bytes", o->prom.max_bytes,
                  "With --prometheus: the largest reply read, in bytes")
      ->capture_default_str();
  app->add_option("-f,--format", o->format, "Output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  app->add_option("-o,--output", o->output, "Write here (atomically) instead of stdout");
  app->add_option("--batch-size", o->batch_size, "Examples per worker step: also report examples/s")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  app->add_flag("--compact", o->compact, "Compact JSON (no indentation)");
  AddRuleOptions(app, &o->rules);
  RequirePrometheus(app, prom);
  return {app, [o](int* exit_code) { return Run(*o, exit_code); }};
}

}  // namespace tfdiag
