// Issue 37 items 2 and 5 (the agent's /metrics page): a task's bytes can never make a scrape
// invalid (promtool, Prometheus's own parser, is the judge), exited tasks leave the page after
// 5 minutes at any --interval, and two tasks that claim one identity are both kept and marked.
#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>
#include <unistd.h>

#include <string>

#include "report/label_value.h"
#include "report/prometheus_exporter.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

constexpr char kPromtool[] = "/usr/bin/promtool";

// `promtool check metrics` on `page`: "" when it accepts it, else what it said.
std::string PromtoolVerdict(const std::string& page) {
  TempDir dir;
  WriteFile(dir.File("page.prom"), page);
  RunResult r = RunShell(std::string(kPromtool) + " check metrics < " + dir.File("page.prom"));
  return r.exit_code == 0 ? "" : fmt::format("rc {}: {}{}", r.exit_code, r.out, r.err);
}

std::string Page(const TfdiagCollectable& c) {
  return prometheus::TextSerializer().Serialize(c.Collect());
}

LiveTaskFigures Task(int32_t pid, const std::string& job, int index, const std::string& pod) {
  LiveTaskFigures t;
  t.job = job, t.index = index, t.task = job + ":" + std::to_string(index), t.pid = pid;
  t.pod = pod, t.tf_job = "j", t.namespace_ = "team-a", t.node = "n1";
  t.threads = 4, t.cpu_seconds = 1.5, t.voluntary = 10, t.involuntary = 2;
  return t;
}

TEST(LabelValue, InvalidUtf8BecomesReplacementCharactersAndLongValuesAreCut) {
  EXPECT_EQ(LabelValue("ps"), "ps");
  EXPECT_EQ(LabelValue("w\xff"), "w\xef\xbf\xbd");
  EXPECT_EQ(LabelValue("caf\xc3\xa9"), "caf\xc3\xa9");  // kept
  EXPECT_TRUE(IsValidUtf8(LabelValue("\xed\xa0\x80\xc0\xaf\xf4\x90\x80\x80")));
  EXPECT_EQ(LabelValue(std::string(1000, 'a')).size(), kMaxLabelValueBytes);
  // A cut never splits a character.
  std::string e_acute;
  for (int i = 0; i < 200; ++i) e_acute += "\xc3\xa9";
  EXPECT_TRUE(IsValidUtf8(LabelValue(e_acute)));
  EXPECT_EQ(LabelValue(e_acute).size(), 256u);
  EXPECT_EQ(LabelValue(std::string(300, 'a') + "\xff").size(), 256u);
}

// Issue 46 item 6: a NUL or a raw CR in a task type reached a label value raw.
TEST(LabelValue, ControlCharactersBecomeReplacementCharacters) {
  EXPECT_EQ(LabelValue(std::string("p\0s", 3)), "p\xef\xbf\xbds");
  EXPECT_EQ(LabelValue("ps\r\n\x1b[2J\x7f"),
            "ps\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd[2J\xef\xbf\xbd");
  EXPECT_EQ(LabelValue("a\tb"),
            "a\xef\xbf\xbd"
            "b");
  EXPECT_EQ(LabelValue("caf\xc3\xa9 ~"), "caf\xc3\xa9 ~");  // printable text is kept
  // A cut value stays within the bound even when every byte was a control character.
  EXPECT_LE(LabelValue(std::string(400, '\r')).size(), kMaxLabelValueBytes);
  TfdiagCollectable c;
  LiveFigures f;
  f.ts = 1'000'000'000;
  f.node = "n1";
  f.tasks.push_back(Task(10, std::string("ps\0\r", 4), 0, "myjob-ps-0"));
  c.Update(f);
  const std::string page = Page(c);
  EXPECT_NE(page.find("replica_type=\"ps\xef\xbf\xbd\xef\xbf\xbd\""), std::string::npos) << page;
  EXPECT_EQ(page.find('\r'), std::string::npos);
  EXPECT_EQ(page.find('\0'), std::string::npos);
}

// Item 2: one 0xff byte in a TF_CONFIG task type made Prometheus refuse the node's whole page.
TEST(AgentExposition, BytesThatAreNotUtf8InAnyLabelKeepThePageValid) {
  if (::access(kPromtool, X_OK) != 0) GTEST_SKIP() << "no " << kPromtool << " (Debian prometheus)";
  TfdiagCollectable c;
  LiveFigures f;
  f.ts = 1'000'000'000;
  f.node = "node\xfe";
  f.environ_reads = 3;
  f.tasks.push_back(Task(10, "ps", 0, "myjob-ps-0"));
  LiveTaskFigures bad = Task(11, "w\xff", 0, "pod\xc0\xaf");
  bad.tf_job = "j\xed\xa0\x80", bad.namespace_ = "ns\x80", bad.has_traffic = true;
  bad.peers.push_back({"10.0.0.1:2222\xff", "ps:\xfe", false, 5, 6});
  f.tasks.push_back(bad);
  c.Update(f);
  const std::string page = Page(c);
  EXPECT_EQ(PromtoolVerdict(page), "") << page;
  EXPECT_NE(page.find("replica_type=\"w\xef\xbf\xbd\""), std::string::npos) << page;
  EXPECT_NE(page.find("pod=\"myjob-ps-0\""), std::string::npos) << "the good task is kept";
}

// Item 2: gone tasks stayed 300 updates (25 minutes at --interval 5s, the DaemonSet's).
TEST(AgentExposition, AGoneTaskLeavesAfterFiveMinutesAtEveryInterval) {
  for (int interval_s : {1, 5, 30}) {
    SCOPED_TRACE(fmt::format("--interval {}s", interval_s));
    TfdiagCollectable c;
    const TimeNs step = TimeNs{interval_s} * 1'000'000'000;
    TimeNs ts = 1'700'000'000'000'000'000;
    LiveFigures f;
    f.ts = ts, f.node = "n1";
    f.tasks.push_back(Task(10, "ps", 0, "myjob-ps-0"));
    f.tasks.push_back(Task(11, "worker", 0, "myjob-worker-0"));
    c.Update(f);
    // The worker exits: the recorder keeps it (alive false); the PS vanishes from the figures.
    const TimeNs exit_ts = ts + step;
    LiveFigures g;
    g.node = "n1";
    g.tasks.push_back(Task(11, "worker", 0, "myjob-worker-0"));
    g.tasks.back().alive = false;
    for (ts = exit_ts; ts <= exit_ts + TimeNs{295} * 1'000'000'000; ts += step) {
      g.ts = ts;
      c.Update(g);
    }
    EXPECT_EQ(c.tasks(), 2u) << "both stay (up 0) for 5 minutes";
    for (; ts <= exit_ts + TimeNs{301} * 1'000'000'000 + step; ts += step) {
      g.ts = ts;
      c.Update(g);
    }
    EXPECT_EQ(c.tasks(), 0u) << "both gone after 5 minutes";
  }
}

// Item 5: a pod claiming another pod's pod/namespace/task replaced it on the page, silently.
TEST(AgentExposition, TwoLiveTasksClaimingOneIdentityAreBothKeptMarkedAndLogged) {
  TfdiagCollectable c;
  LiveFigures f;
  f.ts = 1'000'000'000, f.node = "n1", f.environ_reads = 0;
  f.tasks.push_back(Task(20, "worker", 0, "myjob-worker-0"));
  f.tasks.back().threads = 8;
  f.tasks.push_back(Task(30, "worker", 0, "myjob-worker-0"));  // the impostor
  f.tasks.back().threads = 1;
  f.tasks.push_back(Task(40, "ps", 0, "myjob-ps-0"));
  std::vector<std::string> log = c.Update(f);
  ASSERT_EQ(log.size(), 1u);
  EXPECT_NE(log[0].find("pids 20, 30"), std::string::npos) << log[0];
  EXPECT_EQ(c.tasks(), 3u);
  const std::string page = Page(c);
  // Neither owns the plain labels (the impostor had the higher pid here; a lower one kept them
  // before): both are marked, in pid order.
  EXPECT_EQ(page.find("tfdiag_task_threads{namespace=\"team-a\",node=\"n1\",pod=\"myjob-worker-0\","
                      "replica_index=\"0\",replica_type=\"worker\",tf_job=\"j\"}"),
            std::string::npos)
      << page;
  EXPECT_NE(page.find("tf_job=\"j\",conflict=\"1\"} 8"), std::string::npos) << page;
  EXPECT_NE(page.find("tf_job=\"j\",conflict=\"2\"} 1"), std::string::npos) << page;
  EXPECT_NE(page.find("tfdiag_agent_identity_conflicts{node=\"n1\"} 2"), std::string::npos) << page;
  EXPECT_EQ(
      page.find("pod=\"myjob-ps-0\",replica_index=\"0\",replica_type=\"ps\",tf_job=\"j\",conflict"),
      std::string::npos);
  if (::access(kPromtool, X_OK) == 0) {
    EXPECT_EQ(PromtoolVerdict(page), "") << page;
  }
  // Logged once, not at every update.
  f.ts += 1'000'000'000;
  EXPECT_TRUE(c.Update(f).empty());
  // A restart (the old process gone, a new one with its labels) is no conflict.
  f.tasks[1].alive = false;
  f.ts += 1'000'000'000;
  c.Update(f);
  const std::string after = Page(c);
  EXPECT_EQ(after.find(",conflict=\""), std::string::npos) << after;
  EXPECT_NE(after.find("tfdiag_agent_identity_conflicts{node=\"n1\"} 0"), std::string::npos);
}

}  // namespace
}  // namespace tfdiag::test
