// The ledger of what `make test` did not judge (issue 47, tests/skip_ledger.cc): skipped tests
// and parts of tests left out, each with its reason; tests/run_tests.sh prints it at the end.
#pragma once

#include <string>

namespace tfdiag::test {

// How a load-gated live test's skip reason starts when the machine was too busy to judge it
// (other work's CPU during its run, its wake-up lateness, its runs' spread): the serial live
// phase of `make test` (tests/run_tests.sh) then waits for a quiet machine and runs it again.
// The decision to skip must rest on that load measure alone, never on the test's outcome.
inline constexpr char kTooLoaded[] = "machine too loaded";

// Records a part of a test that was not run and why (a README command that needs root, ...):
// printed, and a line in the ledger when TFDIAG_TEST_LEDGER names a file. The test goes on.
void NoteNotRun(const std::string& what);

}  // namespace tfdiag::test
