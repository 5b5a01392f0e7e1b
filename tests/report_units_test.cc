// One duration formatter in a report (issue 31 item 6): a finding's summary never says
// "4726.20 ms" beside "4.73 s" in the tables, and the PS table lists no variable at "0%".
#include <gtest/gtest.h>

#include <regex>

#include "tests/test_util.h"
#include "tests/trace_json.h"

namespace tfdiag::test {
namespace {

// Three workers, four steps each (a _SOURCE op starts a step): steps of 5 s with 2 s of
// IteratorGetNext, worker:2's of 10 s (a straggler, input-bound as all).
std::string SlowJob() {
  std::vector<std::string> ev;
  for (int w = 0; w < 3; ++w) {
    ev.push_back(MetaEvent(w, fmt::format("/job:worker/replica:0/task:{}/device:CPU:0", w)));
    const int64_t step_us = w == 2 ? 10'000'000 : 5'000'000;
    for (int s = 0; s < 4; ++s) {
      const int64_t t = s * step_us;
      ev.push_back(OpEvent(w, 0, t, 1, "_SOURCE", "NoOp"));
      ev.push_back(OpEvent(w, 0, t + 1, 2'000'000, "IteratorGetNext", "IteratorGetNext"));
      ev.push_back(OpEvent(w, 0, t + 2'000'001, step_us - 2'000'002, "dense/MatMul", "MatMul"));
    }
  }
  std::string s = "{\"traceEvents\":[";
  for (size_t i = 0; i < ev.size(); ++i) s += (i ? ",\n" : "") + ev[i];
  return s + "]}\n";
}

TEST(ReportUnits, SummariesUseTheTablesDurationUnits) {
  TempDir dir;
  WriteFile(dir.File("slow.json"), SlowJob());
  RunResult r = RunTfdiag("analyze --color never '" + dir.File("slow.json") + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("straggler-worker"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("input-bound"), std::string::npos) << r.out;
  // 1000 ms and more is written in seconds everywhere.
  std::smatch m;
  const std::regex long_ms("[0-9]{4,}\\.[0-9]+ ms");
  EXPECT_FALSE(std::regex_search(r.out, m, long_ms)) << m.str(0) << "\n" << r.out;
  EXPECT_NE(r.out.find("median step takes 10.00 s"), std::string::npos) << r.out;
  // Each object's own summary (in the JSON objects[]) too.
  RunResult j = RunTfdiag("analyze -f json '" + dir.File("slow.json") + "'");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  EXPECT_NE(j.out.find("2.00 s per step"), std::string::npos) << j.out;
  EXPECT_FALSE(std::regex_search(j.out, m, long_ms)) << m.str(0);
}

TEST(ReportUnits, PsTableListsNoVariableAtZeroPercent) {
  RunResult r = RunTfdiag("analyze --color never '" + std::string(SourceDir()) +
                          "/samples/hot-ps.tf1.json.gz'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const size_t table = r.out.find("PS load");
  ASSERT_NE(table, std::string::npos) << r.out;
  const std::string ps = r.out.substr(table, r.out.find("\n\n", table) - table);
  EXPECT_EQ(ps.find(" 0%"), std::string::npos) << ps;
  EXPECT_NE(ps.find("embedding/embedding_weights 77%"), std::string::npos) << ps;
}

}  // namespace
}  // namespace tfdiag::test
