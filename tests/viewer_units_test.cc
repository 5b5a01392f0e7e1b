// The viewer's units and windows are the CLI's (issue 46 item 7: the viewer showed MiB where the
// text report shows MB and MB/s, and a span of 26 s, its samples', where the text report says
// the recording's 47 s). One bundle as `tfdiag attach` writes it with its probes: a 47 s window
// in which a PS and a worker were sampled for 26 s (one worker: its findings are not grouped,
// so the text report lists their evidence line by line), with traffic and scheduling rows. The
// text report (`tfdiag analyze`) and the viewer's dump (--dump-view, each finding selected in
// turn) must give the same window, the same sizes and every finding's evidence in the same words.
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <string>
#include <vector>

#include "core/bundle.h"
#include "core/capture_builder.h"
#include "report/table.h"
#include "tests/viewer_util.h"

namespace tfdiag::test {
namespace {

constexpr TimeNs kS = 1'000'000'000;

std::string WriteProbeBundle(const TempDir& dir) {
  CaptureBuilder b;
  b.meta().host = "node-3";
  b.meta().interval_ms = 1000;
  b.meta().window_start = 1'700'000'000 * kS;
  b.meta().window_end = b.meta().window_start + 47 * kS;
  b.meta().probes = "sched(tp_btf), traffic(tp_btf)";
  const TimeNs first = b.meta().window_start + 10 * kS;  // sampled from 10 s to 36 s
  const uint32_t ps = b.AddTask("ps", 0, 0);
  std::vector<uint32_t> procs;
  for (int k = 0; k < 2; ++k) {
    ProcessRow p;
    p.task = k == 0 ? ps : b.AddTask("worker", 0, k - 1);
    p.pid = 100 + k;
    p.host_cpus = 2;
    p.cpuset_cpus = 2;
    p.first_ns = first;
    p.last_ns = first + 26 * kS;
    procs.push_back(b.AddProcess(p));
  }
  for (int i = 0; i <= 26; ++i) {
    const TimeNs ts = first + i * kS;
    for (int k = 0; k < 2; ++k) {
      ProcessSampleRow s;
      s.ts = ts;
      s.process = procs[k];
      s.threads = 8;
      s.runnable = k == 0 ? 1 : 3;
      s.cpu_ns = i * (k == 0 ? 900'000'000LL : 600'000'000LL);
      s.voluntary = i * 300;
      s.involuntary = i * (k == 0 ? 20 : 400);
      b.AddProcessSample(s);
      SchedRow r;
      r.ts = ts;
      r.process = procs[k];
      r.voluntary = s.voluntary;
      r.involuntary = s.involuntary;
      r.oncpu_ns = s.cpu_ns;
      r.runq_waits = i * 1000;
      r.runq_wait_ns = i * (k == 0 ? 50'000'000LL : 500'000'000LL);
      r.runq_hist[k == 0 ? 14 : 20] = r.runq_waits;
      b.AddSched(r);
      if (k == 0) continue;
      TrafficRow t;
      t.ts = ts;
      t.process = procs[k];
      t.local = b.Intern(fmt::format("127.0.0.1:{}", 40000 + k));
      t.peer = b.Intern("127.0.0.1:2222");
      t.peer_task = ps;
      t.bytes_sent = i * 143'000'000LL;  // 143 MB/s
      t.bytes_received = i * 20'000'000LL;
      b.AddTraffic(t);
    }
  }
  const std::string path = dir.File("probe.bundle.json");
  EXPECT_TRUE(WriteBundle(b.Finish(), path).ok());
  return path;
}

TEST(ViewerUnits, TheViewerGivesTheTextReportsWindowSizesAndEvidence) {
  const std::string why = ViewerSkipReason();
  if (!why.empty()) GTEST_SKIP() << why;
  TempDir dir;
  const std::string bundle = WriteProbeBundle(dir);
  RunResult text = RunTfdiag("analyze '" + bundle + "'");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  RunResult json = RunTfdiag("analyze -f json '" + bundle + "'");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  rapidjson::Document d = ParseJson(json.out);
  ASSERT_TRUE(d.IsObject());
  const size_t n = d["findings"].Size();
  ASSERT_GT(n, 0u) << text.out;

  // The window: the recording's 47 s, as the text report's Cluster section gives it.
  ASSERT_NE(text.out.find("live     2 processes over 47.0 s"), std::string::npos) << text.out;
  std::set<std::string> figures;
  std::string status;
  for (size_t i = 0; i <= n; ++i) {  // the default view, then each finding selected
    const std::string name = "v" + std::to_string(i);
    const std::string out = dir.File(name + ".json");
    RunResult r =
        RunView("--size 1400x860 --dump-view '" + out + "' " +
                (i < n ? "--select " + std::to_string(i) + " " : "") + "'" + bundle + "'");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    rapidjson::Document v = ParseJson(ReadFile(out));
    ASSERT_TRUE(v.IsObject() && v.HasMember("figures"));
    if (i == n) status = v["status"].GetString();
    for (const auto& f : v["figures"].GetArray()) figures.insert(f.GetString());
  }
  EXPECT_NE(status.find("2 processes over 47.0 s"), std::string::npos) << status;
  EXPECT_EQ(status.find("26"), std::string::npos)
      << "the samples' span, not the window: " << status;

  // Sizes in the text report's SI units: the PS's bar names what it received as FormatBytes does.
  std::string all;
  for (const std::string& f : figures) all += f + "\n";
  static const std::regex binary(R"(\d (KiB|MiB|GiB))");
  EXPECT_FALSE(std::regex_search(all, binary)) << all;
  EXPECT_NE(all.find(FormatBytes(26 * 143e6) + " received"), std::string::npos) << all;

  // Every finding's evidence line of the text report ("      - label: value") is a figure of
  // the viewer's, in the same words ("unknown" is "-" there).
  static const std::regex evidence(R"(^      - (.+): (.+)$)");
  size_t lines = 0;
  bool in_evidence = false;
  size_t at = 0;
  while (at < text.out.size()) {
    const size_t end = std::min(text.out.find('\n', at), text.out.size());
    const std::string line = text.out.substr(at, end - at);
    at = end + 1;
    if (line == "    evidence:") {
      in_evidence = true;
      continue;
    }
    std::smatch m;
    if (!in_evidence || !std::regex_match(line, m, evidence)) {
      in_evidence = false;
      continue;
    }
    ++lines;
    const std::string value = m[2] == "unknown" ? "-" : std::string(m[2]);
    EXPECT_TRUE(figures.count(std::string(m[1]) + ": " + value)) << line << "\nnot in\n" << all;
  }
  EXPECT_GT(lines, 3u) << text.out;
}

}  // namespace
}  // namespace tfdiag::test
