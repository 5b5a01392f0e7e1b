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

}  // namespace tfdiag::test
