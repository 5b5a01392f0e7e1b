// Issue 35 item 5: hot-ps on op time. A PS busy nearly all the time cannot stand 2x out on
// busy time (the span caps it) against a PS over half busy, however far ahead it is: it is
// judged on its op time. Several PS that stand out together, each with a table of its own (two
// hot tables), are all named, with the fix for each. Timelines written op by op here, so the
// loads are known exactly.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analyzers/analysis.h"
#include "rules/rule_set.h"
#include "tests/test_util.h"
#include "tests/trace_json.h"

namespace tfdiag::test {
namespace {

// One PS's load: `threads` lanes each running ops on variable `var` back to back for `busy_us`
// (ops of 500 us), from time 0.
struct PsLoad {
  std::string var;
  int threads = 1;
  int64_t busy_us = 0;
};

// A TF1 timeline with these PS (ps:0, ps:1, ...) and one worker whose op spans `span_us`.
std::string Timeline(const std::vector<PsLoad>& ps, int64_t span_us) {
  std::vector<std::string> ev;
  for (size_t p = 0; p < ps.size(); ++p) {
    const int pid = static_cast<int>(p) + 1;
    ev.push_back(MetaEvent(pid, fmt::format("/job:ps/replica:0/task:{}/device:CPU:0", p)));
    ev.push_back(OpEvent(pid, 0, 0, 1, ps[p].var, "VariableV2"));
    ev.push_back(OpEvent(pid, 0, 1, 1, ps[p].var + "/read", "Identity", {ps[p].var}));
    for (int t = 0; t < ps[p].threads; ++t) {
      for (int64_t at = 2; at + 500 <= ps[p].busy_us; at += 500) {
        ev.push_back(OpEvent(pid, t, at, 500, fmt::format("{}/Gather_{}_{}", ps[p].var, t, at),
                             "GatherV2", {ps[p].var + "/read", "ids"}));
      }
    }
  }
  const int w = static_cast<int>(ps.size()) + 1;
  ev.push_back(MetaEvent(w, "/job:worker/replica:0/task:0/device:CPU:0"));
  ev.push_back(OpEvent(w, 0, 0, span_us, "model/MatMul", "MatMul"));
  return ObjectForm(ev);
}

RuleSet Rules() {
  StatusOr<RuleSet> r = DefaultRuleSet();
  EXPECT_TRUE(r.ok()) << r.status().message();
  return *r;
}

std::vector<const Finding*> HotPs(const AnalysisResult& r) {
  std::vector<const Finding*> out;
  for (const Finding& f : r.findings) {
    if (f.rule_id == "hot-ps") out.push_back(&f);
  }
  return out;
}

// ps:0 runs ops on two threads all through the capture (100% busy, 200 ms of op time); ps:1 is
// 60% busy (60 ms). Busy time gives 1.7x, under min_ratio_to_next; op time gives 3.3x: hot.
// Before: no hot-ps, the only advice elsewhere.
TEST(HotPsOpTime, ASaturatedPsIsJudgedOnItsOpTime) {
  TempDir dir;
  const std::string path = dir.File("sat.json");
  WriteFile(path, Timeline({{"emb", 2, 100'000},
                            {"dense_a", 1, 60'000},
                            {"dense_b", 1, 20'000},
                            {"dense_c", 1, 20'000}},
                           100'000));
  const AnalysisResult r = Analyze(LoadOrDie({path}), Rules());
  const std::vector<const Finding*> hot = HotPs(r);
  ASSERT_EQ(hot.size(), 1u);
  EXPECT_EQ(hot[0]->subject, "ps:0");
  EXPECT_EQ(hot[0]->severity, Severity::kHigh);
  EXPECT_NE(hot[0]->summary.find("op time"), std::string::npos) << hot[0]->summary;
  EXPECT_NE(hot[0]->fix.find("partition emb (on ps:0) into 4 shards"), std::string::npos)
      << hot[0]->fix;
  // The same loads below saturation (ps:0 on one thread, 50% busy; ps:1 30%): busy time alone
  // says 1.7x, not hot, as before.
  const std::string calm = dir.File("calm.json");
  WriteFile(calm, Timeline({{"emb", 1, 50'000},
                            {"dense_a", 1, 30'000},
                            {"dense_b", 1, 20'000},
                            {"dense_c", 1, 20'000}},
                           100'000));
  EXPECT_TRUE(HotPs(Analyze(LoadOrDie({calm}), Rules())).empty());
}

// Two hot tables, one on ps:0 and one on ps:1, 40 ms each; ps:2-3 5 ms each. Neither stands out
// alone (1x each other), together they do (8x the next): both are named, with the fix for both.
TEST(HotPsOpTime, TwoHotTablesNameBothPs) {
  TempDir dir;
  const std::string path = dir.File("two.json");
  WriteFile(path, Timeline({{"emb_a", 1, 40'000},
                            {"emb_b", 1, 40'000},
                            {"dense_b", 1, 5'000},
                            {"dense_c", 1, 5'000}},
                           100'000));
  const AnalysisResult r = Analyze(LoadOrDie({path}), Rules());
  const std::vector<const Finding*> hot = HotPs(r);
  ASSERT_EQ(hot.size(), 1u) << "one finding with both PS as its objects";
  EXPECT_TRUE(hot[0]->Covers("ps:0"));
  EXPECT_TRUE(hot[0]->Covers("ps:1"));
  EXPECT_FALSE(hot[0]->Covers("ps:2"));
  EXPECT_NE(hot[0]->fix.find("partition emb_a (on ps:0)"), std::string::npos) << hot[0]->fix;
  EXPECT_NE(hot[0]->fix.find("partition emb_b (on ps:1)"), std::string::npos) << hot[0]->fix;
  // One table partitioned over two of the four PS is not two hot tables (idle-ps's case).
  const std::string parts = dir.File("parts.json");
  WriteFile(parts, Timeline({{"emb/part_0", 1, 40'000},
                             {"emb/part_1", 1, 40'000},
                             {"dense_b", 1, 5'000},
                             {"dense_c", 1, 5'000}},
                            100'000));
  EXPECT_TRUE(HotPs(Analyze(LoadOrDie({parts}), Rules())).empty());
}

// A PS's receives are waits, not work (gen2 dev seed 101: ps:0 showed 9.7 s of RecvTensor, the
// gradients arriving over a NIC it shares, against 0.2 s of ops, and hot-ps named a variable of
// 1% of the work). ps:0 receives on two lanes, 900 us of every 1 ms through the first 90 ms (81%
// of the capture), and runs 2 ms of ops;
// ps:1 runs 30 ms on its table, ps:2-3 5 ms each. ps:0 is neither busy nor hot; ps:1 is.
// Before: ps:0 busy 90 ms, named hot (3x ps:1), its 2 ms variable the one to partition.
TEST(HotPsOpTime, ReceivesOnAPsAreNotItsBusyTime) {
  TempDir dir;
  const std::string path = dir.File("recv.json");
  std::string text = Timeline(
      {{"dense_tiny", 1, 2'000}, {"emb", 1, 30'000}, {"dense_b", 1, 5'000}, {"dense_c", 1, 5'000}},
      100'000);
  // Appended: RecvTensor on ps:0 (pid 1), lanes 1-2, 900 us each, to 90 ms (beside its ops).
  std::vector<std::string> recv;
  for (int lane = 1; lane <= 2; ++lane) {
    for (int64_t at = 0; at + 900 <= 90'000; at += 1'000) {
      recv.push_back(OpEvent(1, lane, at, 900, "RecvTensor", "RecvTensor"));
    }
  }
  const size_t end = text.rfind(']');
  ASSERT_NE(end, std::string::npos);
  std::string extra;
  for (const std::string& e : recv) extra += "," + e;
  text.insert(end, extra);
  WriteFile(path, text);
  const AnalysisResult r = Analyze(LoadOrDie({path}), Rules());
  const TaskStats* ps0 = r.stats.Find("ps:0");
  ASSERT_NE(ps0, nullptr);
  EXPECT_LT(ps0->busy_ns, 3'000'000) << "busy time is op time, receives left out";
  EXPECT_LT(ps0->op_time_ns, 3'000'000);
  EXPECT_GT(ps0->recv_busy_pct, 75) << "the receives in flight (81%) are kept apart";
  EXPECT_GT(ps0->recv_count, 100);
  const std::vector<const Finding*> hot = HotPs(r);
  for (const Finding* f : hot) EXPECT_FALSE(f->Covers("ps:0")) << f->summary;
  ASSERT_EQ(hot.size(), 1u);
  EXPECT_TRUE(hot[0]->Covers("ps:1")) << hot[0]->summary;
  EXPECT_NE(hot[0]->fix.find("partition emb (on ps:1)"), std::string::npos) << hot[0]->fix;
}

}  // namespace
}  // namespace tfdiag::test
