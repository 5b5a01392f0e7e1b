// How hosts were read, said once per log directory (issue 39 item 8: "20 'host read as' notes
// for one log directory"), and not at all above the error of an input with nothing to analyze.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

size_t Count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

// A simulated log directory of 10 hosts (2 PS, 8 workers, one XSpace each): one note lists them.
TEST(HostNotes, OneNotePerLogDirectory) {
  TempDir dir;
  const std::string logs = dir.File("logs");
  ASSERT_EQ(RunTfdiag("simulate balanced --format xplane --steps 3 -o '" + logs + "'").exit_code,
            0);
  const RunResult r = RunTfdiag("analyze '" + logs + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Count(r.err, "read as"), 1u) << r.err;
  EXPECT_NE(r.err.find(logs + ": 10 hosts read as tasks: ps-0 -> ps:0, ps-1 -> ps:1, worker-0 -> "
                              "worker:0"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("(by pod name: 10)"), std::string::npos) << r.err;
}

// One host in three profiling sessions (--run all): one note for the log directory.
TEST(HostNotes, OneHostOfSeveralSessionsIsOneNote) {
  const std::string logs = SharedTrace("mholmeslinder_9a8988e_scalars8_logdir");
  if (!std::filesystem::exists(logs)) GTEST_SKIP() << "no " << logs;
  const RunResult r = RunTfdiag("analyze --run all '" + logs + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Count(r.err, "read as"), 1u) << r.err;
  EXPECT_NE(r.err.find("/train (3 host files): host 'd1792a5a2842' read as localhost:0"),
            std::string::npos)
      << r.err;
}

// An XSpace with one empty /host:CPU plane: the error alone, no note on runs or hosts above it.
TEST(HostNotes, NothingToAnalyzePrintsOnlyTheError) {
  TempDir dir;
  const std::string run = dir.File("logs/plugins/profile/2021_01_01_00_00_00");
  std::filesystem::create_directories(run);
  // XSpace { planes { name: "/host:CPU" } }: field 1 (length 11) holding field 2 (length 9).
  WriteFile(run + "/h1.xplane.pb", std::string("\x0a\x0b\x12\x09/host:CPU", 13));
  const RunResult r = RunTfdiag("analyze '" + dir.File("logs") + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.find("note:"), std::string::npos) << r.err;
  EXPECT_EQ(Count(r.err, "\n"), 1u) << r.err;
  EXPECT_NE(r.err.find("nothing to analyze"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace tfdiag::test
