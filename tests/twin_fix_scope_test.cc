// The twin suites' fixed twins apply a finding's fix to the tasks it names and to no other
// (issue 44): an input-bound finding naming worker:3 gets a twin that prefetches worker 3 alone,
// in each of the three independent generators, and a ps-cpu-quota finding naming ps:1 a twin
// that lifts ps:1's quota alone (bench/twins/indep/fix_scope_check.py lists each check; about
// 2 s).
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
  EXPECT_NE(r.out.find("indep: worker 3 prefetched"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("gen2: the twin lifts ps:1's quota alone"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace tfdiag::test
