// Issue 15 item 8: strings a workload controls (a pod name from the container's /etc/hostname,
// a task type in TF_CONFIG, thread names, manifest values) reach the terminal only through
// Printable(): no ESC, BEL, CR or C1 control gets out raw in any text output.
#include "core/escape.h"

#include <gtest/gtest.h>

#include "core/bundle.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

bool HasRawControl(const std::string& s) {
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if ((c < 0x20 && c != '\n') || c == 0x7f) return true;
    if (c == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
        static_cast<unsigned char>(s[i + 1]) < 0xa0)
      return true;
  }
  return false;
}

TEST(Printable, EscapesControlsKeepsUtf8) {
  EXPECT_EQ(Printable("ps-0"), "ps-0");
  EXPECT_EQ(Printable("\x1b]0;owned\x07"), "\\x1b]0;owned\\x07");
  EXPECT_EQ(Printable("a\rb\nc\td\x7f"), "a\\x0db\\x0ac\\x09d\\x7f");
  EXPECT_EQ(Printable("caf\xc3\xa9 \xe6\x97\xa5"), "caf\xc3\xa9 \xe6\x97\xa5");  // UTF-8 kept
  EXPECT_EQ(Printable("\xc2\x9b"
                      "31m"),
            "\\u009b31m");                         // C1 CSI
  EXPECT_EQ(Printable("\xff\xc3"), "\\xff\\xc3");  // not UTF-8
  EXPECT_FALSE(HasRawControl(Printable(std::string("\x00\x01\x1b[2J\x9b", 7))));
}

TEST(Printable, TextReportEscapesWorkloadStrings) {
  const std::string evil_pod = "\x1b]0;owned\x07mnist-ps-0\x1b[2J";
  CaptureBuilder b;
  b.meta().host = "node\x1b[31m";
  b.meta().interval_ms = 1000;
  b.meta().window_start = 1'000'000'000;
  b.meta().window_end = 3'000'000'000;
  uint32_t ps = b.AddTask("ps\x1b[1m", 0, 0);
  ProcessRow p;
  p.task = ps;
  p.pid = 41;
  p.pod = b.Intern(evil_pod);
  p.qos = b.Intern("Burstable\r");
  p.cpu_limit = 1;
  p.quota_us = 100000;
  p.period_us = 100000;
  p.host_cpus = 8;
  uint32_t q = b.AddProcess(p);
  for (int i = 0; i < 3; ++i) {
    ProcessSampleRow s;
    s.ts = 1'000'000'000LL * (i + 1);
    s.process = q;
    s.threads = 20;
    s.runnable = 9;
    s.cpu_ns = 900'000'000LL * i;
    b.AddProcessSample(s);
  }
  TempDir dir;
  ASSERT_TRUE(WriteBundle(b.Finish(), dir.File("b.json")).ok());
  RunResult r = RunTfdiag("analyze --color never '" + dir.File("b.json") + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(HasRawControl(r.out)) << r.out;
  EXPECT_FALSE(HasRawControl(r.err)) << r.err;
  EXPECT_NE(r.out.find("\\x1b]0;owned\\x07mnist-ps-0\\x1b[2J"), std::string::npos) << r.out;
  // A PS pod in a pod list, named by a workload; its notes and findings on stderr/stdout.
  const std::string pods =
      "{\"apiVersion\":\"v1\",\"kind\":\"PodList\",\"items\":[{\"metadata\":{\"name\":"
      "\"tf-ps-0\\u001b]2;x\\u0007\",\"labels\":{\"role\":\"ps\"}},\"spec\":{\"nodeName\":"
      "\"n\\u001b[5m\",\"containers\":[{\"name\":\"c\\r\",\"env\":[{\"name\":\"TF_CONFIG\","
      "\"value\":\"{\\\"task\\\":{\\\"type\\\":\\\"ps\\\\u001b[2J\\\"}}\"}]}]}}]}";
  WriteFile(dir.File("pods.json"), pods);
  r = RunTfdiag("analyze --color never '" + dir.File("pods.json") + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(HasRawControl(r.out)) << r.out;
  EXPECT_FALSE(HasRawControl(r.err)) << r.err;
  EXPECT_NE(r.out.find("tf-ps-0\\x1b]2;x\\x07"), std::string::npos) << r.out;
  // Errors quote manifest values escaped too.
  WriteFile(dir.File("bad.yaml"),
            "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n"
            "    resources: {limits: {cpu: \"1\\e[2J\"}}\n");
  r = RunTfdiag("analyze '" + dir.File("bad.yaml") + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_FALSE(HasRawControl(r.err)) << r.err;
}

}  // namespace
}  // namespace tfdiag::test
