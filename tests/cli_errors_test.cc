// Issue 14 item 15, through the built binary: every error line carries "tfdiag <cmd>: error:"
// (CLI11's own parse errors too), attach run as root never tells the user to run as root, a --job
// that matches nothing says what TF tasks there were and which TFJob they belong to, and a
// RunMetadata in protobuf text format gets a hint instead of a bare JSON error.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "collectors/discovery/discovery.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

bool StartsWith(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

TEST(CliErrors, ParseErrorsCarryTheCommandPrefix) {
  struct Case {
    std::string args, prefix, must_contain;
  };
  const Case cases[] = {
      {"analyze /no/such/timeline.json", "tfdiag analyze: error: ", "/no/such/timeline.json"},
      {"analyze - --no-such-flag", "tfdiag analyze: error: ", "--no-such-flag"},
      {"fix /no/such/manifest.yaml", "tfdiag fix: error: ", "/no/such/manifest.yaml"},
      {"rules explain", "tfdiag rules: error: ", "id"},
      {"attach --duration", "tfdiag attach: error: ", "--duration"},
      {"simulate hot-ps --steps many", "tfdiag simulate: error: ", "many"},
      {"no-such-command", "tfdiag: error: ", "subcommand"},
      {"", "tfdiag: error: ", "subcommand"},
  };
  for (const Case& c : cases) {
    RunResult r = RunTfdiag(c.args);
    SCOPED_TRACE(c.args);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(StartsWith(r.err, c.prefix)) << r.err;
    EXPECT_NE(r.err.find(c.must_contain), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  // Help is not an error: stdout, exit 0.
  RunResult help = RunTfdiag("analyze --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("analyze"), std::string::npos);
  EXPECT_TRUE(help.err.empty()) << help.err;
}

TEST(CliErrors, EnvironHintNeverAsksRootToRunAsRoot) {
  std::string hint = EnvironUnreadableHint(3);
  EXPECT_TRUE(StartsWith(hint, "3 processes' environment could not be read")) << hint;
  if (::geteuid() == 0) {
    EXPECT_EQ(hint.find("run as root"), std::string::npos) << hint;
    EXPECT_NE(hint.find("although tfdiag runs as root"), std::string::npos) << hint;
  } else {
    EXPECT_NE(hint.find("run as root"), std::string::npos) << hint;
  }
  EXPECT_NE(EnvironUnreadableHint(1).find("1 process' environment"), std::string::npos);
}

TEST(CliErrors, JobMatchingNothingNamesTheTasksFoundAndTheirJobs) {
  EXPECT_EQ(TfJobOfPod("myjob-worker-3"), "myjob");
  EXPECT_EQ(TfJobOfPod("my-job-ps-0"), "my-job");
  EXPECT_EQ(TfJobOfPod("worker-3"), "");
  EXPECT_EQ(TfJobOfPod("localhost"), "");
  // A real process with a TF_CONFIG of TFJob zz14job (its own address names its pod).
  const std::string tf_config =
      R"({"cluster":{"ps":["zz14job-ps-0.default.svc:2222"],)"
      R"("worker":["zz14job-worker-0.default.svc:2222","zz14job-worker-1.default.svc:2222"]},)"
      R"("task":{"type":"worker","index":1}})";
  int fd = -1;
  pid_t pid =
      SpawnWaitingShell({"zz14_task"}, {"PATH=/usr/bin:/bin", "TF_CONFIG=" + tf_config}, &fd);
  ASSERT_GT(pid, 0);
  std::string pid_arg = " --pid " + std::to_string(pid);
  RunResult none = RunTfdiag("attach --analyze --no-bpf -d 1s --job otherjob" + pid_arg);
  RunResult both =
      RunTfdiag("attach --analyze --no-bpf -d 1s --job otherjob --pod nopod" + pid_arg);
  // The whole /proc (other tests' tasks may show up too): as root, never "run as root".
  RunResult scan = RunTfdiag("attach --analyze --no-bpf -d 1s --job zz14-no-such-job");
  ::close(fd);
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);

  EXPECT_EQ(none.exit_code, 2) << none.err;
  EXPECT_TRUE(StartsWith(none.err,
                         "tfdiag attach: error: --job otherjob matched none of the TF "
                         "tasks found among 1 process: the 1 TF task found belongs "
                         "to TFJob zz14job: zz14job-worker-1 (worker:1)"))
      << none.err;
  EXPECT_NE(both.err.find("--job otherjob, --pod nopod matched none"), std::string::npos)
      << both.err;
  EXPECT_EQ(scan.exit_code, 2) << scan.err;
  EXPECT_NE(scan.err.find("--job zz14-no-such-job matched none"), std::string::npos) << scan.err;
  EXPECT_NE(scan.err.find("TFJob zz14job: zz14job-worker-1 (worker:1)"), std::string::npos)
      << scan.err;
  if (::geteuid() == 0) {
    EXPECT_EQ(scan.err.find("run as root"), std::string::npos) << scan.err;
  }
}

TEST(CliErrors, TextRunMetadataGetsAHint) {
  TempDir dir;
  const std::string text =
      "step_stats {\n  dev_stats {\n    device: \"/job:worker/replica:0/task:0/device:CPU:0\"\n"
      "    node_stats {\n      node_name: \"MatMul\"\n      all_start_micros: 1000\n"
      "      all_end_rel_micros: 20\n    }\n  }\n}\n";
  for (const char* name : {"run_metadata.pbtxt", "step.txt"}) {
    WriteFile(dir.File(name), text);
    RunResult r = RunTfdiag(std::string("analyze ") + dir.File(name));
    SCOPED_TRACE(name);
    // RunMetadata support may read it; if not, the error must say what the file is.
    if (r.exit_code == 0) continue;
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(StartsWith(r.err, "tfdiag analyze: error: ")) << r.err;
    EXPECT_NE(r.err.find("RunMetadata"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("generate_chrome_trace_format"), std::string::npos) << r.err;
  }
  // Other JSON errors get no such hint.
  WriteFile(dir.File("bad.json"), "{\"traceEvents\": [ {\"ph\": \"X\", }\n");
  RunResult bad = RunTfdiag("analyze " + dir.File("bad.json"));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err.find("RunMetadata"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace tfdiag::test
