// tfdiag: why is this distributed TensorFlow PS/worker job slow? See README.md.
#include <malloc.h>

#include <cstdio>
#include <exception>
#include <new>
#include <string>

#include "cli/commands.h"
#include "core/escape.h"

namespace {

int ExitCodeFor(const tfdiag::Status& s) {
  switch (s.code()) {
    case tfdiag::StatusCode::kOk:
      return 0;
    case tfdiag::StatusCode::kInvalidInput:
    case tfdiag::StatusCode::kUsage:
    case tfdiag::StatusCode::kIo:
    case tfdiag::StatusCode::kNotFound:
      return 2;
    default:
      return 3;
  }
}

}  // namespace

int main(int argc, char** argv) {
  // Large blocks (the importer's 1 MiB row blocks) always come from mmap, so each one freed while
  // rows are flattened goes back to the OS at once; glibc's dynamic threshold would otherwise
  // move them onto the heap, where freed memory stays resident.
  mallopt(M_MMAP_THRESHOLD, 256 * 1024);
  CLI::App app{
      "tfdiag: finds why a distributed TensorFlow parameter-server job is slow, where, with what "
      "evidence, and what to change.\nExit codes: 0 ok, 1 a finding at or above --fail-on, "
      "2 bad input or usage, 3 internal error."};
  app.set_version_flag("--version", std::string("tfdiag ") + TFDIAG_VERSION);
  app.require_subcommand(1);
  std::vector<tfdiag::Command> commands = {
      tfdiag::RegisterAnalyze(app), tfdiag::RegisterAttach(app), tfdiag::RegisterSimulate(app),
      tfdiag::RegisterRules(app),   tfdiag::RegisterFix(app),    tfdiag::RegisterView(app),
      tfdiag::RegisterScaling(app),
  };
  // After the subcommands: CLI11 copies a parent's footer into each subcommand made after it, so
  // every `tfdiag X --help` ended with the whole routing table (issue 39).
  app.footer(
      "\nWhat do you have? -> the command (README.md, \"What do you have?\"):\n"
      "  TF1 timelines, TF2 profiles, TensorBoard log directories, RunMetadata\n"
      "      tfdiag analyze worker0.json worker1.json    tfdiag analyze logs/ [--run NAME]\n"
      "  the job's manifest (TFJob, Volcano Job, ElasticJob, Deployment) or a pod list\n"
      "      tfdiag analyze job.yaml [logs/] [pods.json]   then   tfdiag fix --cpus 4 job.yaml\n"
      "      (pod lists: kubectl get pods -o json > pods.json)\n"
      "  a cluster Prometheus (kube-state-metrics, cAdvisor, tfdiag agents)\n"
      "      tfdiag analyze --prometheus http://prom:9090 --job NAME\n"
      "  a node where the job runs (root)\n"
      "      tfdiag attach --duration 30s -o run.tfdiag.json   then   tfdiag analyze "
      "run.tfdiag.json\n"
      "  runs at several worker counts\n"
      "      tfdiag scaling run-4w.json run-8w.json\n"
      "  a desktop and any of the above\n"
      "      tfdiag view <the same inputs>   (the viewer tfdiag-view: make demo builds it)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    // CLI11's own errors ("--input: Path does not exist: x") get the prefix of every other error,
    // naming the subcommand being parsed when there is one.
    std::string cmd = "tfdiag";
    for (const tfdiag::Command& c : commands) {
      if (c.app->parsed()) cmd += " " + c.app->get_name();
    }
    std::fprintf(stderr, "%s: error: %s\nRun '%s --help' for usage.\n", cmd.c_str(), e.what(),
                 cmd.c_str());
    return 2;
  }
  for (tfdiag::Command& c : commands) {
    if (!c.app->parsed()) continue;
    int exit_code = 0;
    tfdiag::Status s;
    // An exception that escapes a command is a bug (errors are Status): it ends in exit code 3
    // with what it says, never in std::terminate's SIGABRT.
    try {
      s = c.run(&exit_code);
    } catch (const std::bad_alloc&) {
      s = tfdiag::Internal("out of memory (std::bad_alloc)");
    } catch (const std::exception& e) {
      s = tfdiag::Internal("internal error: uncaught exception: {}", e.what());
    } catch (...) {
      s = tfdiag::Internal("internal error: uncaught exception of an unknown type");
    }
    if (!s.ok()) {
      std::fprintf(stderr, "tfdiag %s: error: %s\n", c.app->get_name().c_str(),
                   tfdiag::PrintableMessage(s.message()).c_str());
      return ExitCodeFor(s);
    }
    return exit_code;
  }
  return 2;
}
