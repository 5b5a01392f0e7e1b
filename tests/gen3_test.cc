// The third independent PS-job generator (issue 44, bench/twins/gen3, written apart from tfdiag,
// indepsim and gen2): on two DEV seeds tfdiag reads its captures with every task and no unresolved
// input, and measures the median worker step within 5% of the generator's truth; planted causes
// (a straggler, slow input, a hot table, a dense optimizer, sync replicas) move the truth the way
// their fixes should; and the scorer run_gen3.py shares with run_indep.py flags a prediction 30%
// off its twin and a wrong `Fix first` (bench/twins/gen3/gen3_check.py lists each check).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

TEST(Gen3, CapturesTruthDirectionsAndScorerHold) {
  if (!HavePython3()) {
    GTEST_SKIP() << "python3 is not installed: the generator (bench/twins/gen3) needs it";
  }
  TempDir dir;
  const RunResult r =
      RunShell(std::string("python3 ") + SourceDir() + "/bench/twins/gen3/gen3_check.py " +
               BuiltTfdiag() + " " + dir.path() + " --draws 300");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  // Each check prints one line; a script that ran none would pass on its exit code alone.
  EXPECT_NE(r.out.find("all checks hold"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.out.find("within 5% of the generator's"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("moves the truth as expected"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the scorer flags a prediction 30% off"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the idle-ps twin drops every PS the finding names"), std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace tfdiag::test
