// `tfdiag analyze --prometheus` errors that need no job's series: an unreachable server, a
// server that is not Prometheus (refusing, a web page, too slow), bad flags, options without
// --prometheus, time parsing; and the deploy/ rules checked by promtool. Split from
// cluster_prometheus_test.cc (the suite on a backfilled server).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "collectors/prometheus/job_reader.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

TEST(ClusterPromErrors, UnreachableServerIsExit2) {
  const int port = FreePorts(1)[0];
  RunResult r = RunTfdiag("analyze --prometheus http://127.0.0.1:" + std::to_string(port) +
                          " --job j --window 5m");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("cannot be reached"), std::string::npos) << r.err;
}

// A real HTTP server (Python's http.server) that is not Prometheus: it answers every request
// with `mode`: "401", "403", "html" (200 with a web page) or "sleep" (never answers in time).
class FakeHttp {
 public:
  explicit FakeHttp(const std::string& mode) {
    port_ = FreePorts(1)[0];
    const std::string script =
        "import http.server,sys,time\n"
        "mode=sys.argv[2]\n"
        "class H(http.server.BaseHTTPRequestHandler):\n"
        "  def log_message(self,*a): pass\n"
        "  def reply(self):\n"
        "    if mode=='sleep': time.sleep(30)\n"
        "    code=int(mode) if mode.isdigit() else 200\n"
        "    body=b'<html><body>Welcome to nginx!</body></html>'\n"
        "    self.send_response(code); self.send_header('Content-Type','text/html')\n"
        "    self.send_header('Content-Length',str(len(body))); self.end_headers()\n"
        "    self.wfile.write(body)\n"
        "  do_GET=reply\n"
        "  do_POST=reply\n"
        "http.server.ThreadingHTTPServer(('127.0.0.1',int(sys.argv[1])),H).serve_forever()\n";
    pid_ = fork();
    if (pid_ == 0) {
      execlp("python3", "python3", "-c", script.c_str(), std::to_string(port_).c_str(),
             mode.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    for (int i = 0; i < 100; ++i) {
      if (RunShell("python3 -c 'import socket;socket.create_connection((\"127.0.0.1\"," +
                   std::to_string(port_) + "),1)'")
              .exit_code == 0)
        break;
      usleep(50000);
    }
  }
  ~FakeHttp() {
    if (pid_ <= 0) return;  // never kill(-1, ...)
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  pid_t pid_ = -1;
  int port_ = 0;
};

TEST(ClusterPromErrors, AuthRefusedNotPrometheusAndTimeoutAreExit2) {
  struct Case {
    std::string mode, extra, expect;
  };
  const std::vector<Case> cases = {
      {"401", "", "HTTP 401 (unauthorized): check --bearer-token-file or --basic-auth"},
      {"403", "", "HTTP 403 (forbidden)"},
      {"html", "", "is not the Prometheus HTTP API"},
      {"404", "", "HTTP 404"},
      {"sleep", " --prometheus-timeout 1", "no reply to /api/v1/status/buildinfo within 1 s"},
  };
  for (const Case& c : cases) {
    FakeHttp server(c.mode);
    const auto t0 = std::chrono::steady_clock::now();
    RunResult r =
        RunTfdiag("analyze --prometheus " + server.url() + " --job j --window 5m" + c.extra);
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(r.exit_code, 2) << c.mode << ": " << r.err;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << c.mode << ": " << r.err;
    EXPECT_LT(secs, 10) << c.mode;
  }
}

// Issue 36: options of the cluster mode given without --prometheus were silently ignored.
TEST(ClusterPromErrors, ClusterOptionsWithoutPrometheusAreAnError) {
  const std::string trace = std::string(TFDIAG_SOURCE_DIR) + "/samples/hot-ps.tf1.json.gz";
  for (const std::string opt : {"--job mnist", "--namespace training", "--window 1h", "--step 15s",
                                "--start 2026-01-01T00:00:00Z"}) {
    RunResult r = RunTfdiag("analyze " + trace + " " + opt);
    EXPECT_EQ(r.exit_code, 2) << opt << ": " << r.err;
    EXPECT_NE(r.err.find(opt.substr(0, opt.find(' ')) + " requires --prometheus"),
              std::string::npos)
        << opt << ": " << r.err;
  }
  RunResult s = RunTfdiag("scaling " + trace + " " + trace + " --job mnist");
  EXPECT_EQ(s.exit_code, 2) << s.err;
  EXPECT_NE(s.err.find("--job requires --prometheus"), std::string::npos) << s.err;
}

TEST(ClusterPromErrors, BadFlagsAreExit2) {
  struct Case {
    std::string args, expect;
  };
  const std::vector<Case> cases = {
      {"--prometheus ftp://x --job j", "expected an http:// or https:// URL"},
      {"--prometheus http://127.0.0.1:1", "--job"},
      {"--prometheus http://127.0.0.1:1 --job j --window 5x", "--window"},
      {"--prometheus http://127.0.0.1:1 --job j --start 2026-13-01T00:00:00Z --end 1", "--start"},
      {"--prometheus http://127.0.0.1:1 --job j --start 200 --end 100", "after --start"},
      {"--prometheus http://127.0.0.1:1 --job j --basic-auth nocolon", "USER:PASSFILE"},
      {"--prometheus http://127.0.0.1:1 --job j --bearer-token-file /nonexistent",
       "--bearer-token-file"},
  };
  for (const Case& c : cases) {
    RunResult r = RunTfdiag("analyze " + c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << c.args << ": " << r.err;
  }
}

TEST(ClusterPromTime, ParsesRfc3339AndUnixSeconds) {
  EXPECT_EQ(*ParsePromTime("2026-11-23T18:00:00Z"), 1795456800.0);
  EXPECT_EQ(*ParsePromTime("2026-11-23T19:00:00+01:00"), 1795456800.0);
  EXPECT_EQ(*ParsePromTime("1795456800"), 1795456800.0);
  EXPECT_FALSE(ParsePromTime("2026-11-23 18:00").ok());
  EXPECT_FALSE(ParsePromTime("2026-11-23T18:00:00").ok());
  EXPECT_EQ(*ParsePromDuration("1h30m"), 5400.0);
  EXPECT_FALSE(ParsePromDuration("30").ok());
  EXPECT_FALSE(ParsePromDuration("-5m").ok());
}

}  // namespace
}  // namespace tfdiag::test

namespace tfdiag::test {
namespace {

// deploy/: the recording and alerting rules parse, and fire on a hot PS, a throttled worker and
// two PS on one node (and not on the balanced job beside them), as promtool evaluates them.
TEST(DeployRules, PromtoolChecksAndUnitTestsTheRules) {
  if (access("/usr/bin/promtool", X_OK) != 0)
    GTEST_SKIP() << "no /usr/bin/promtool (Debian package prometheus)";
  const std::string dir = std::string(TFDIAG_SOURCE_DIR) + "/deploy";
  RunResult check = RunShell("cd " + dir + " && promtool check rules tfdiag.rules.yml");
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  EXPECT_NE(check.out.find("SUCCESS: 11 rules found"), std::string::npos) << check.out;
  RunResult test = RunShell("cd " + dir + " && promtool test rules tfdiag.rules.test.yml");
  EXPECT_EQ(test.exit_code, 0) << test.out << test.err;
}

}  // namespace
}  // namespace tfdiag::test
