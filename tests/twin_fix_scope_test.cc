// The twin suites' fixed twins apply a finding's fix as its text says (issue 44): a fix on
// tasks to the tasks it names and no other (a straggler-worker finding naming worker:3 speeds
// worker 3 alone, in each of the three independent generators; a ps-cpu-quota finding naming
// ps:1 lifts ps:1's quota alone), and input-bound's, a change to the pipeline's code, on every
// worker (bench/twins/indep/fix_scope_check.py lists each check; a few seconds).
#include <gtest/gtest.h>

#include <string>

#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

TEST(TwinFixScope, TwinChangesOnlyTheNamedTasks) {
  if (!HavePython3()) {
    GTEST_SKIP() << "python3 is not installed: the generators (bench/twins) need it";
  }
  const RunResult r =
      RunShell(std::string("python3 ") + SourceDir() + "/bench/twins/indep/fix_scope_check.py");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  // Each check prints one line; a script that ran none would pass on its exit code alone.
  EXPECT_NE(r.out.find("all checks hold"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.out.find("indep: straggler-worker on worker:3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("gen3: every worker's input leaves its step"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("gen2: the twin lifts ps:1's quota alone"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace tfdiag::test
