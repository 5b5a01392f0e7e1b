// The ledger of what the tests did not judge (issue 47): when TFDIAG_TEST_LEDGER names a file,
// every skipped test appends one line "<Suite.Name>\tskipped\t<reason>" and every command or
// check a test left out appends "<Suite.Name>\tnot run\t<what and why>" (NoteNotRun). The
// reasons are flattened to one line (tabs and line breaks become spaces). Each line is one
// write(2) to a file opened with O_APPEND, so tests that ctest runs side by side do not mix
// their lines. tests/run_tests.sh prints the ledger at the end of `make test` and retries the
// live tests whose reason starts with kTooLoaded.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "tests/ledger.h"

namespace tfdiag::test {
namespace {

void AppendLedger(const std::string& test, const char* kind, const std::string& reason) {
  const char* path = std::getenv("TFDIAG_TEST_LEDGER");
  if (path == nullptr || *path == '\0') return;
  std::string line = test + "\t" + kind + "\t";
  for (char c : reason) line += (c == '\t' || c == '\n' || c == '\r') ? ' ' : c;
  while (!line.empty() && line.back() == ' ') line.pop_back();
  line += '\n';
  const int fd = ::open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;
  (void)!::write(fd, line.data(), line.size());
  ::close(fd);
}

std::string CurrentTest() {
  const ::testing::TestInfo* t = ::testing::UnitTest::GetInstance()->current_test_info();
  return t != nullptr ? std::string(t->test_suite_name()) + "." + t->name() : "(no test)";
}

class SkipLedger : public ::testing::EmptyTestEventListener {
  void OnTestEnd(const ::testing::TestInfo& info) override {
    const ::testing::TestResult* r = info.result();
    if (r == nullptr || !r->Skipped()) return;
    std::string reason;
    for (int i = 0; i < r->total_part_count(); ++i) {
      const ::testing::TestPartResult& p = r->GetTestPartResult(i);
      if (p.type() == ::testing::TestPartResult::kSkip) reason = p.message();
    }
    AppendLedger(std::string(info.test_suite_name()) + "." + info.name(), "skipped",
                 reason.empty() ? "(no reason given)" : reason);
  }
};

// Registered before main (gtest_main's) runs the tests; gtest owns and deletes the listener.
[[maybe_unused]] const bool kRegistered = [] {
  ::testing::UnitTest::GetInstance()->listeners().Append(new SkipLedger);
  return true;
}();

}  // namespace

void NoteNotRun(const std::string& what) {
  std::printf("not run: %s\n", what.c_str());
  AppendLedger(CurrentTest(), "not run", what);
}

}  // namespace tfdiag::test
