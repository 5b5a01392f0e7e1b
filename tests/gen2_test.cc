// The second independent PS-job generator (issue 44, bench/twins/gen2): its captures are read by
// tfdiag with the step the generator measured, its CFS quota acts, and the scorer run_gen2.py
// shares with run_indep.py flags a wrong prediction and a wrong `Fix first`
// (bench/twins/gen2/gen2_check.py lists each check; a few seconds).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

TEST(Gen2, CapturesStepsQuotaAndScorerHold) {
  if (!HavePython3()) {
    GTEST_SKIP() << "python3 is not installed: the generator (bench/twins/gen2) needs it";
  }
  TempDir dir;
  const RunResult r =
      RunShell(std::string("python3 ") + SourceDir() + "/bench/twins/gen2/gen2_check.py " +
               BuiltTfdiag() + " " + dir.path());
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  // Each check prints one line; a script that ran none would pass on its exit code alone.
  EXPECT_NE(r.out.find("all checks hold"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.out.find("within 5%"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace tfdiag::test
