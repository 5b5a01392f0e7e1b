// Helpers shared by the outlook tests (tests/outlook_*_test.cc).
#pragma once

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <string>

#include "tests/test_util.h"

namespace tfdiag::test {

// `tfdiag analyze -f json TRACE` parsed into `*d`; a fatal failure (ASSERT_NO_FATAL_FAILURE the
// call) when it fails or its document has no `outlook` object.
inline void AnalyzeOutlook(const std::string& trace, rapidjson::Document* d) {
  const RunResult r = RunShell(std::string(BuiltTfdiag()) + " analyze -f json " + trace);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  d->Parse(r.out.c_str());
  ASSERT_TRUE(d->IsObject() && d->HasMember("outlook") && (*d)["outlook"].IsObject()) << r.out;
}

// bench/outlook/outlook_sweep.py on one independent-simulator job spec (`spec`, jobs.draw's
// keys) in `dir`: its one row parsed into `*d` (out.json), its table in `*table`. `*skip` gets a
// reason starting "python3 is not installed" where it cannot run (GTEST_SKIP() << it); a fatal
// failure (ASSERT_NO_FATAL_FAILURE the call) when the script fails or gives not one row.
inline void SweepOneSpec(const std::string& spec, const TempDir& dir, rapidjson::Document* d,
                         std::string* table, std::string* skip) {
  const std::string why =
      RunIndepBench("bench/outlook/outlook_sweep.py", "--indep-spec", spec, dir);
  if (why.rfind("python3 is not installed", 0) == 0) {
    *skip = why;
    return;
  }
  ASSERT_EQ(why, "");
  *table = ReadFile(dir.File("out.txt"));
  d->Parse(ReadFile(dir.File("out.json")).c_str());
  ASSERT_TRUE(d->IsObject() && d->HasMember("rows") && (*d)["rows"].Size() == 1u) << *table;
}

}  // namespace tfdiag::test
