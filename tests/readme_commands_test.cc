// The README's first screen runs as written (issues 31 and 39): every command of the short tour
// and then of the routing table ("What do you have?") is taken out of README.md and run by a
// shell in an empty directory holding only `build/` and `samples/` of the checkout (links), with
// build/ on PATH: the test makes none of the files the commands name, the tour's own commands
// must (issue 39: the tour once read timeline.json and job.yaml that nothing made). Stand-ins,
// since this machine is not a cluster: the Prometheus at http://prom:9090 is a real Prometheus on
// a loopback port holding a TF job named as in the commands (tests/cluster_metrics.h); the tour's
// psload job runs 8 s instead of 40, and `attach` records it and is stopped by SIGINT after a few
// seconds, as Ctrl-C would; `view` renders once under Xvfb (--screenshot) instead of opening a
// window. Also: `tfdiag --help` routes each kind of evidence to its command.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/cluster_metrics.h"
#include "tests/ledger.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

// The README's text between `from` (a heading) and the next heading of level 2.
std::string SectionOf(const std::string& readme, const std::string& from) {
  const size_t start = readme.find(from);
  if (start == std::string::npos) return "";
  const size_t end = readme.find("\n## ", start + from.size());
  return readme.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

// The routing table's commands: every `build/tfdiag ...` or `sudo build/tfdiag ...` span of
// its rows, in order.
std::vector<std::string> TableCommands(const std::string& readme) {
  std::vector<std::string> out;
  const std::string table = SectionOf(readme, "## What do you have?");
  static const std::regex span("`((sudo )?build/tfdiag [^`]*)`");
  for (std::sregex_iterator it(table.begin(), table.end(), span), end; it != end; ++it) {
    out.push_back((*it)[1]);
  }
  return out;
}

// The tour's commands: the lines of its first code block, comments (two spaces, then #) cut.
std::vector<std::string> TourCommands(const std::string& readme) {
  std::vector<std::string> out;
  const std::string tour = SectionOf(readme, "## A short tour");
  const size_t open = tour.find("```sh\n");
  if (open == std::string::npos) return out;
  const size_t close = tour.find("\n```", open + 6);
  std::string block = tour.substr(open + 6, close - open - 6);
  static const std::regex comment("\\s{2,}#.*$");
  size_t pos = 0;
  while (pos < block.size()) {
    size_t nl = block.find('\n', pos);
    if (nl == std::string::npos) nl = block.size();
    std::string line = std::regex_replace(block.substr(pos, nl - pos), comment, "");
    if (!line.empty()) out.push_back(line);
    pos = nl + 1;
  }
  return out;
}

bool StartsWith(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }

class ReadmeCommands : public ::testing::Test {
 protected:
  void SetUp() override {
    readme_ = ReadFile(std::string(TFDIAG_SOURCE_DIR) + "/README.md");
    ASSERT_FALSE(readme_.empty());
  }
  std::string readme_;
};

TEST_F(ReadmeCommands, FirstScreenCommandsRunAsWritten) {
  const std::vector<std::string> table = TableCommands(readme_);
  const std::vector<std::string> tour = TourCommands(readme_);
  ASSERT_GE(table.size(), 9u) << "the routing table's commands";
  ASSERT_GE(tour.size(), 15u) << "the tour's commands";
  EXPECT_TRUE(StartsWith(tour[0], "build/tfdiag simulate ")) << "the tour makes its input first";
  // Every kind of evidence the issue names is routed by the table.
  const std::string section = SectionOf(readme_, "## What do you have?");
  for (const char* kind : {"log directory", "manifest", "pod list", "Prometheus", "tfdiag view",
                           "tfdiag fix", "tfdiag attach", "tfdiag scaling"}) {
    EXPECT_NE(section.find(kind), std::string::npos) << "the routing table names " << kind;
  }

  // An empty directory holding only the checkout's build/ and samples/, as after `make demo`:
  // every other file a command reads must come from a command before it.
  TempDir dir;
  const std::string build = std::filesystem::path(TFDIAG_BINARY).parent_path().string();
  std::filesystem::create_directory_symlink(build, dir.File("build"));
  std::filesystem::create_directory_symlink(std::string(TFDIAG_SOURCE_DIR) + "/samples",
                                            dir.File("samples"));
  // In a subshell: RunShell's own redirections come after the command's (`> fixed.yaml`). PATH:
  // build/ and the system's tools (sudo, xvfb-run), nothing else of the test's.
  auto sh = [&](const std::string& cmd) {
    return RunShell("cd '" + dir.path() + "' && PATH='" + dir.File("build") +
                    ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' && (" + cmd +
                    ")");
  };

  // Prometheus: a real server holding a TF job named mnist over the last 40 minutes (the default
  // window is 30 minutes).
  PromServer prom;
  std::string prom_skip = PromServer::SkipReason();
  if (prom_skip.empty()) {
    ClusterJobSpec job;
    job.name = "mnist";
    job.ps = 2;
    job.workers = 4;
    job.nodes = 2;
    job.shared_ps = -1;
    job.throttled_node = -1;
    const double now = std::floor(static_cast<double>(std::time(nullptr)));
    std::string om, error;
    AppendClusterJob(job, now - 2400, now - 15, 15, &om);
    if (!prom.Start(om, "", &error)) prom_skip = "the test Prometheus did not start: " + error;
  }
  // attach records the job the tour's psload line starts (samples/psload/run_job.sh, in the
  // background): the tour must start what attach is to find.
  const bool root = geteuid() == 0;
  bool started_psload = false;
  const bool have_sudo = sh("command -v sudo").exit_code == 0;
  const std::string viewer_skip = [] {
    if (std::string(BuiltViewer()).empty()) return std::string("the viewer is not built");
    if (RunShell("command -v xvfb-run").exit_code != 0) return std::string("no xvfb-run");
    return std::string();
  }();

  // The tour first (it makes logs/, timeline.json, ...), then the table's commands the tour has
  // not run already (the table's attach, run again, would find the tour's psload job gone).
  std::vector<std::string> commands = tour;
  for (const std::string& c : table) {
    if (std::find(tour.begin(), tour.end(), c) == tour.end()) commands.push_back(c);
  }
  // Files that a command not run would have made (attach's -o without root): a command that
  // reads one is not run either, and the test makes none of them in its stead.
  std::vector<std::string> not_made;
  auto reads_not_made = [&](const std::string& cmd) -> std::string {
    std::istringstream words(cmd);
    for (std::string w; words >> w;) {
      if (std::find(not_made.begin(), not_made.end(), w) != not_made.end()) return w;
    }
    return "";
  };
  for (const std::string& written : commands) {
    std::string cmd = written;
    if (const std::string f = reads_not_made(cmd); !f.empty()) {
      NoteNotRun("README command: " + written + " (reads " + f +
                 ", which the command that makes it, not run, would write)");
      continue;
    }
    if (StartsWith(cmd, "samples/psload/run_job.sh ")) {
      if (!root) {
        NoteNotRun("README command: " + written + " (attach, which records it, needs root)");
        continue;
      }
      // As written, but for 8 s: attach records it for 4 s below, and the test waits for it.
      static const std::regex duration("--duration [0-9]+");
      cmd = std::regex_replace(cmd, duration, "--duration 8");
      started_psload = true;
    }
    if (cmd.find(" attach ") != std::string::npos) {
      if (!root) {
        NoteNotRun("README command: " + written +
                   " (needs root: tfdiag attach reads other "
                   "users' /proc and loads eBPF probes)");
        std::smatch out;
        static const std::regex output(" -o ([^ ]+)");
        if (std::regex_search(written, out, output)) not_made.push_back(out[1].str());
        continue;
      }
      if (!have_sudo && StartsWith(cmd, "sudo ")) cmd = cmd.substr(5);
      // Ctrl-C after 4 s: the bundle is written, and the exit code is attach's.
      cmd = "timeout --preserve-status -s INT 4 " + cmd;
    }
    if (cmd.find("--prometheus http://prom:9090") != std::string::npos) {
      if (!prom_skip.empty()) {
        NoteNotRun("README command: " + written + " (" + prom_skip + ")");
        continue;
      }
      cmd.replace(cmd.find("http://prom:9090"), 16, prom.url());
    }
    if (StartsWith(cmd, "build/tfdiag view ")) {
      if (!viewer_skip.empty()) {
        NoteNotRun("README command: " + written + " (" + viewer_skip + ")");
        continue;
      }
      cmd = "xvfb-run -a " + cmd + " --screenshot view.png --size 800x600";
    }
    RunResult r = sh(cmd);
    if (started_psload && StartsWith(cmd, "samples/psload/run_job.sh ")) {
      // A user sees run_job.sh's first line ("... in /tmp/psload.XXXXXX") before typing the next
      // command: wait for it (the line follows the start of every task), then a moment more for
      // the tasks to exec psload.
      for (int i = 0; i < 100; ++i) {
        if (ReadFile(dir.File("psload.out")).find(" in /tmp/psload.") != std::string::npos) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    const bool fail_on = cmd.find("--fail-on") != std::string::npos;
    EXPECT_TRUE(r.exit_code == 0 || (fail_on && r.exit_code == 1))
        << "README command: " << written << "\nran: " << cmd << "\nexit " << r.exit_code << "\n"
        << r.err;
  }
  if (root) {
    EXPECT_TRUE(started_psload) << "the tour starts no job for attach to record";
    // run_job.sh prints its summary paths when its workers are done: wait for it (at most 30 s),
    // so that no task of the tour outlives the test.
    std::string out;
    for (int i = 0; i < 300 && started_psload; ++i) {
      out = ReadFile(dir.File("psload.out"));
      if (out.find("worker-0.json") != std::string::npos) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_NE(out.find("worker-0.json"), std::string::npos) << "the job did not finish:\n" << out;
    // Its summaries and logs went to a new /tmp/psload.XXXXXX, named on its first line.
    std::smatch m;
    static const std::regex where(" in (/tmp/psload\\.[A-Za-z0-9]+)\n");
    if (std::regex_search(out, m, where)) std::filesystem::remove_all(m[1].str());
  }
  // What the commands were to make (a file whose maker was not run is absent: the test makes
  // no stand-in).
  for (const char* made : {"timeline.json", "hook", "report.json", "sweep/workers-16.json", "logs",
                           "fixed.yaml", "tfdiag.sarif", "run.tfdiag.json"}) {
    const bool expected =
        std::find(not_made.begin(), not_made.end(), std::string(made)) == not_made.end();
    EXPECT_EQ(std::filesystem::exists(dir.File(made)), expected) << made;
  }
  EXPECT_EQ(root, not_made.empty()) << "only attach needs root, and it writes run.tfdiag.json";
  EXPECT_NE(ReadFile(dir.File("fixed.yaml")), ReadFile(dir.File("samples/job.yaml")))
      << "fix --cpus 4 changed nothing";
  const std::string sarif = ReadFile(dir.File("tfdiag.sarif"));
  EXPECT_NE(sarif.find("\"ruleId\": \"thread-config\""), std::string::npos)
      << sarif.substr(0, 2000);
}

// `tfdiag --help` routes each kind of evidence to its command, as the README's table does.
TEST_F(ReadmeCommands, HelpRoutesEachKindOfEvidence) {
  RunResult r = RunTfdiag("--help");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* what :
       {"manifest", "pod list", "kubectl get pods -o json", "--prometheus", "log directories",
        "tfdiag view", "tfdiag fix", "tfdiag attach", "tfdiag scaling"}) {
    EXPECT_NE(r.out.find(what), std::string::npos) << "tfdiag --help names " << what << "\n"
                                                   << r.out;
  }
  RunResult a = RunTfdiag("analyze --help");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  for (const char* what : {"manifests", "pod lists", "Prometheus", "log directories"}) {
    EXPECT_NE(a.out.find(what), std::string::npos) << "analyze --help names " << what;
  }
}

// The report the README quotes from `make demo` is what tfdiag prints on the bundled sample,
// line for line ("..." stands for lines left out).
TEST_F(ReadmeCommands, DemoOutputIsQuotedAsPrinted) {
  const std::string marker = "`make demo` ends with the report on the bundled sample";
  const size_t at = readme_.find(marker);
  ASSERT_NE(at, std::string::npos) << "the README quotes make demo's report";
  const size_t open = readme_.find("```\n", at);
  ASSERT_NE(open, std::string::npos);
  const size_t close = readme_.find("\n```", open + 4);
  const std::string quoted = readme_.substr(open + 4, close - open - 4);
  RunResult r = RunTfdiag("analyze --color never " + std::string(TFDIAG_SOURCE_DIR) +
                          "/samples/hot-ps.tf1.json.gz");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  size_t lines = 0, pos = 0;
  while (pos < quoted.size()) {
    size_t nl = quoted.find('\n', pos);
    if (nl == std::string::npos) nl = quoted.size();
    const std::string line = quoted.substr(pos, nl - pos);
    pos = nl + 1;
    if (line.empty() || line == "...") continue;
    ++lines;
    EXPECT_NE(r.out.find(line + "\n"), std::string::npos)
        << "the README quotes a line make demo does not print:\n"
        << line << "\nprinted:\n"
        << r.out.substr(0, 3000);
  }
  EXPECT_GE(lines, 2u);
}

}  // namespace
}  // namespace tfdiag::test
