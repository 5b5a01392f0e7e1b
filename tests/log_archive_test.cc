// Issue 45 item 5: a TensorBoard log directory packed as .tar.gz / .tgz (how log directories are
// shared) is read as the directory itself (collectors/xplane/log_archive.h): the same report,
// packed at test time from the real log directories; hostile archives (an absolute path, "..",
// a symbolic link, a device) are refused with a line naming the entry, and nothing is left in the
// temporary directory either way.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <string>

#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

#define REQUIRE_SHARED() \
  if (!SharedAvailable()) GTEST_SKIP() << "../shared/traces not found beside the repository"

bool Has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

size_t EntriesIn(const std::string& dir) {
  size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    (void)e;
    ++n;
  }
  return n;
}

// The JSON report without what names the inputs (paths, notes) and timings.
std::string Figures(std::string json) {
  const size_t tasks = json.find("\"tasks\": [");
  const size_t findings = json.find("\"findings\": [");
  const size_t rules = json.find("\"rules\": {");
  if (tasks == std::string::npos || findings == std::string::npos || rules == std::string::npos) {
    return json;
  }
  const size_t ps = json.find("\"xprof_checks\"", tasks);  // file paths differ
  return json.substr(tasks, ps - tasks) + json.substr(findings, rules - findings);
}

TEST(LogArchive, ATarGzOfARealLogDirectoryGivesTheSameReportAsTheDirectory) {
  REQUIRE_SHARED();
  for (const char* logdir : {"mholmeslinder_3baf8a2_scalars3_20201221-164239",
                             "mholmeslinder_9a8988e_scalars8_logdir"}) {
    SCOPED_TRACE(logdir);
    TempDir dir, tmp;
    const std::string tgz = dir.File("logs.tgz");
    ASSERT_EQ(
        RunShell("tar -czf '" + tgz + "' -C '" + SharedTrace(logdir) + "/..' '" + logdir + "'")
            .exit_code,
        0);
    const RunResult d = RunTfdiag("analyze -f json --run all '" + SharedTrace(logdir) + "'");
    const RunResult a = RunShell("TMPDIR='" + tmp.path() + "' " + TFDIAG_BINARY +
                                 " analyze -f json --run all '" + tgz + "'");
    ASSERT_EQ(d.exit_code, 0) << d.err;
    ASSERT_EQ(a.exit_code, 0) << a.err;
    EXPECT_EQ(Figures(a.out), Figures(d.out));
    EXPECT_TRUE(Has(a.out, "a tar archive, unpacked")) << a.out.substr(0, 3000);
    // No temporary path reaches the report, and nothing is left behind.
    EXPECT_FALSE(Has(a.out, "tfdiag-archive-")) << a.out;
    EXPECT_FALSE(Has(a.err, "tfdiag-archive-")) << a.err;
    EXPECT_EQ(EntriesIn(tmp.path()), 0u);
  }
}

TEST(LogArchive, HostileEntriesAreRefusedAndNothingIsLeftBehind) {
  TempDir dir, tmp;
  struct Case {
    const char* name;
    const char* python;  // adds one entry to tarfile `t`
    const char* expect;
  };
  const Case cases[] = {
      {"dotdot", "i=tarfile.TarInfo('logs/../../evil'); i.size=1; t.addfile(i, io.BytesIO(b'x'))",
       "'..' component"},
      {"absolute", "i=tarfile.TarInfo('/tmp/evil'); i.size=1; t.addfile(i, io.BytesIO(b'x'))",
       "absolute path"},
      {"symlink",
       "i=tarfile.TarInfo('logs/x.xplane.pb'); i.type=tarfile.SYMTYPE; i.linkname='/etc/passwd'; "
       "t.addfile(i)",
       "a link, device"},
      {"device", "i=tarfile.TarInfo('logs/dev'); i.type=tarfile.CHRTYPE; t.addfile(i)",
       "a link, device"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string tgz = dir.File(std::string(c.name) + ".tar.gz");
    ASSERT_EQ(RunShell("python3 -c \"import tarfile, io; t=tarfile.open('" + tgz + "', 'w:gz'); " +
                       c.python + "; t.close()\"")
                  .exit_code,
              0);
    const RunResult r =
        RunShell("TMPDIR='" + tmp.path() + "' " + TFDIAG_BINARY + " analyze '" + tgz + "'");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_TRUE(Has(r.err, c.expect)) << r.err;
    EXPECT_TRUE(Has(r.err, "entry 1")) << r.err;
    EXPECT_EQ(EntriesIn(tmp.path()), 0u);
  }
}

}  // namespace
}  // namespace tfdiag::test
