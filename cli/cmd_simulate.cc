// tfdiag simulate SCENARIO -o FILE: synthetic TF1/TF2 timelines of a PS/worker job.
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "cli/commands.h"
#include "report/table.h"
#include "samples/simulator.h"
#include "samples/twins.h"

namespace tfdiag {

namespace {

struct SimulateOptions {
  sim::ScenarioParams params;
  double device_tail_ms = 0;  // --device-tail, ms (params.device_tail_ns)
  std::string format = "tf1";
  std::string output;
  bool list = false;
  std::string workers;  // "16" or a sweep "2,4,8,16"
  std::string twin;     // --twin FIX: the scenario's fixed twin (samples/twins.h)
  int twin_ps = 0;      // --twin ps-count: the PS count
};

// "2,4,8,16" -> {2, 4, 8, 16}. Errors: kUsage naming the bad element.
StatusOr<std::vector<int>> ParseWorkerList(const std::string& s) {
  std::vector<int> out;
  size_t at = 0;
  while (at <= s.size()) {
    size_t comma = s.find(',', at);
    if (comma == std::string::npos) comma = s.size();
    std::string item = s.substr(at, comma - at);
    char* end = nullptr;
    errno = 0;
    long v = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || errno != 0 || v < 1 || v > 4096) {
      return UsageError("--workers: '{}' is not a worker count in 1..4096 (expected N or N,N,...)",
                        item);
    }
    out.push_back(static_cast<int>(v));
    at = comma + 1;
  }
  return out;
}

// A sweep: one run per worker count, DIR/workers-<N>.json (.json.gz with --gzip; a log directory
// DIR/workers-<N>/ for xplane and trace-json), same seed.
Status RunSweep(SimulateOptions& o, const std::vector<int>& counts) {
  if (o.output == "-") return UsageError("a --workers sweep writes one file per run: -o DIR");
  if (mkdir(o.output.c_str(), 0777) != 0 && errno != EEXIST) {
    return IoError("{}: cannot create directory: {}", o.output, std::strerror(errno));
  }
  for (int n : counts) {
    sim::ScenarioParams p = o.params;
    p.workers = n;
    // A profile (xplane, trace-json) is a TensorBoard log directory per run: DIR/workers-<N>/,
    // each `tfdiag scaling DIR/workers-*` reads as one run.
    const bool log_dir =
        p.format == sim::TraceFormat::kXPlane || p.format == sim::TraceFormat::kTraceJson;
    const std::string path =
        log_dir ? fmt::format("{}/workers-{}", o.output, n)
                : fmt::format("{}/workers-{}.json{}", o.output, n, p.gzip ? ".gz" : "");
    TFDIAG_RETURN_IF_ERROR(sim::WriteScenario(p, path));
  }
  return OkStatus();
}

Status Run(SimulateOptions& o) {
  if (!(o.device_tail_ms >= 0 && o.device_tail_ms <= 1e4)) {
    return UsageError("--device-tail: 0 to 10000 ms, got {}", o.device_tail_ms);
  }
  o.params.device_tail_ns = static_cast<int64_t>(o.device_tail_ms * 1e6);
  if (o.list || o.params.scenario.empty()) {
    TextTable t({"scenario", "what it shows"});
    for (const std::string& name : sim::ScenarioNames()) {
      t.AddRow({name, sim::ScenarioDescription(name)});
    }
    std::fputs(t.Render(0).c_str(), stdout);
    return OkStatus();
  }
  bool known = false;
  for (const std::string& name : sim::ScenarioNames()) known |= name == o.params.scenario;
  if (!known) {
    return UsageError("unknown scenario '{}' (see 'tfdiag simulate --list')", o.params.scenario);
  }
  if (o.output.empty()) return UsageError("-o FILE is required (use - for stdout)");
  o.params.format = o.format == "tf2"           ? sim::TraceFormat::kTf2
                    : o.format == "xplane"      ? sim::TraceFormat::kXPlane
                    : o.format == "runmetadata" ? sim::TraceFormat::kRunMetadata
                    : o.format == "trace-json"  ? sim::TraceFormat::kTraceJson
                                                : sim::TraceFormat::kTf1;
  if (!o.workers.empty()) {
    StatusOr<std::vector<int>> counts = ParseWorkerList(o.workers);
    if (!counts.ok()) return counts.status();
    if (counts->size() > 1) {
      if (!o.twin.empty()) return UsageError("--twin writes one run, not a --workers sweep");
      return RunSweep(o, *counts);
    }
    o.params.workers = counts->front();
  }
  if (!o.twin.empty()) return sim::WriteVariant(o.params, {o.twin, -1, o.twin_ps}, o.output);
  return sim::WriteScenario(o.params, o.output);
}

}  // namespace

Command RegisterSimulate(CLI::App& root) {
  auto o = std::make_shared<SimulateOptions>();
  CLI::App* app = root.add_subcommand(
      "simulate",
      "Write a synthetic TF1/TF2 timeline of a PS/worker job for a scenario, with its "
      "ground truth in the top-level key tfdiagGroundTruth");
  app->add_option("scenario", o->params.scenario, "Scenario name (see --list)");
  app->add_flag("--list", o->list, "List the scenarios");
  app->add_option("-o,--output", o->output, "Output file (written atomically; - for stdout)");
  app->add_option("--format", o->format,
                  "Output format: tf1, tf2 (timeline JSON), xplane (-o X.xplane.pb: one XSpace; "
                  "-o DIR: a TensorBoard log directory, one file per task), trace-json (-o DIR: "
                  "the TF 2.2+ trace-viewer JSON of the same XSpaces, <task>.trace.json.gz), "
                  "runmetadata (binary RunMetadata)")
      ->check(CLI::IsMember({"tf1", "tf2", "xplane", "trace-json", "runmetadata"}))
      ->capture_default_str();
  app->add_option("--ps", o->params.ps, "PS tasks (default: the scenario's)");
  app->add_option("--workers", o->workers,
                  "Worker tasks (default: the scenario's); a list (2,4,8,16) writes a sweep, one "
                  "run per count, to -o DIR/workers-<N>.json (compare with tfdiag scaling)");
  app->add_option("--steps", o->params.steps, "Training steps per worker")->capture_default_str();
  app->add_option("--embedding-rows", o->params.embedding_rows, "Embedding table rows");
  app->add_option("--embedding-dim", o->params.embedding_dim, "Embedding dimension");
  app->add_option("--dense-layers", o->params.dense_layers, "Dense layers");
  app->add_option("--ps-threads", o->params.ps_threads,
                  "Threads each PS serves its ops on, in arrival order (0: unbounded; default: "
                  "the scenario's, hot-ps 1, others 0)");
  app->add_option("--seed", o->params.seed, "Random seed (same seed, same bytes)")
      ->capture_default_str();
  app->add_flag("--pretty", o->params.pretty, "Indent like TensorFlow (indent=4)");
  app->add_flag("--tf2-steps", o->params.tf2_steps,
                "xplane, trace-json: workers without _SOURCE ops, each step marked by a Keras "
                "`train` TraceMe (steps from the marked groups)");
  app->add_flag(
      "--worker-gpu", o->params.worker_gpu,
      "Each worker task has a GPU running the MatMuls; its _SOURCE ~1 ms after the CPU's");
  app->add_option("--profiler-hook", o->params.profiler_hook_minutes,
                  "MINUTES: one file per step, MINUTES apart, as ProfilerHook writes them: -o DIR "
                  "gets DIR/timeline-<k>.json (tf1, tf2) or DIR/step-<k>.xplane.pb (xplane)");
  app->add_flag("--tool-files", o->params.tool_files,
                "xplane -o DIR, trace-json: add TF 2.2-2.3's profiler tool files beside each "
                "task's trace (overview_page.pb, ..., events.out.tfevents.*.profile-empty)");
  app->add_flag("--session-clock", o->params.session_clock,
                "xplane, trace-json: timestamps on the session's own clock from ~1 ms, as TF 2.4+ "
                "writes them (not the Unix epoch)");
  app->add_option("--device-tail", o->device_tail_ms,
                  "MS: with --tf2-steps, a GPU tracer plane per worker host whose kernels run "
                  "each step MS past the host's step end, with the derived Steps row (XProf's "
                  "GPU step time fixture)");
  app->add_flag("--rendezvous-keys", o->params.rendezvous_keys,
                "xplane, trace-json: each cross-device RecvTensor carries its rendezvous key "
                "(src_device;incarnation;dst_device;tensor;frame:iter), from which analyze ties "
                "TF2 transfers to their sending task");
  app->add_flag("--gzip", o->params.gzip, "gzip-compress the output");
  app->add_option("--twin", o->twin,
                  "FIX: the scenario's fixed twin, the same job and seed with one fix applied, to "
                  "check what `analyze` predicts the fix buys: partition (the embedding cut into "
                  "one part per PS), prefetch, sparse-apply, straggler, unshard, gather-on-ps, "
                  "ps-count (with --twin-ps N)")
      ->check(CLI::IsMember({"partition", "prefetch", "sparse-apply", "straggler", "unshard",
                             "gather-on-ps", "ps-count"}));
  app->add_option("--twin-ps", o->twin_ps, "--twin ps-count: the PS count after the fix");
  return {app, [o](int* exit_code) {
            *exit_code = 0;
            return Run(*o);
          }};
}

}  // namespace tfdiag
