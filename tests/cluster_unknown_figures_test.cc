// A Capture built without /proc (analyze --prometheus from cAdvisor, or any other such source)
// has no pid, no runnable threads and no cpuset: reports must show them as unknown, never as 0,
// and bundles must keep "unknown" through a round trip.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <string>

#include "core/bundle.h"
#include "core/capture_builder.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

// One worker pod on node-7 as cAdvisor sees it: 2-CPU CFS limit, 64 threads, throttled in 60%
// of its periods; pid, runnable threads and cpuset unknown.
Capture PodWithoutProc() {
  CaptureBuilder b;
  b.meta().host = "1 node (Prometheus 2.42.0)";
  b.meta().interval_ms = 15000;
  b.meta().window_start = 1'000'000'000'000LL;
  b.meta().window_end = 1'000'000'000'000LL + 600'000'000'000LL;
  ProcessRow p;
  p.task = b.AddTask("worker", 0, 17);
  p.pod = b.Intern("ctr-job-worker-17");
  p.node = b.Intern("node-7");
  p.cpu_limit = 2;
  p.quota_us = 200000;
  p.period_us = 100000;
  p.first_ns = b.meta().window_start;
  p.last_ns = b.meta().window_end;
  const uint32_t proc = b.AddProcess(p);
  for (int i = 0; i <= 40; ++i) {
    ProcessSampleRow s;
    s.ts = b.meta().window_start + i * 15'000'000'000LL;
    s.process = proc;
    s.threads = 64;
    s.runnable = -1;
    s.cpu_ns = i * 15'000'000'000LL * 2;  // 2 CPUs
    s.nr_periods = i * 150;               // 10 per s
    s.nr_throttled = i * 90;              // 60%
    b.AddProcessSample(s);
  }
  return b.Finish();
}

TEST(UnknownFigures, ReportsShowThemAsUnknownNotZero) {
  TempDir tmp;
  ASSERT_TRUE(WriteBundle(PodWithoutProc(), tmp.File("pod.bundle.json")).ok());
  // The bundle keeps "unknown" (-1) through a round trip.
  Capture r = LoadOrDie({tmp.File("pod.bundle.json")});
  ASSERT_EQ(r.process_samples.size(), 41u);
  EXPECT_EQ(r.process_samples[0].runnable, -1);
  RunResult json = RunTfdiag("analyze -f json " + tmp.File("pod.bundle.json"));
  ASSERT_EQ(json.exit_code, 0) << json.err;
  rapidjson::Document d;
  d.Parse(json.out.c_str());
  ASSERT_FALSE(d.HasParseError());
  EXPECT_EQ(d["processes"][0]["runnable_mean"].GetDouble(), -1);
  bool found = false;
  for (const auto& f : d["findings"].GetArray()) {
    if (std::string(f["rule"].GetString()) != "thread-oversubscription") continue;
    found = true;
    const std::string summary = f["summary"].GetString();
    // Throttling with many threads fires the rule; the pod names the process.
    EXPECT_NE(summary.find("worker:17 (pod ctr-job-worker-17) runs 64 threads on 2 CPU of CFS "
                           "quota, throttled in 60% of CFS periods"),
              std::string::npos)
        << summary;
    EXPECT_EQ(summary.find("runnable"), std::string::npos) << summary;
    for (const auto& e : f["evidence"].GetArray())
      EXPECT_EQ(std::string(e["label"].GetString()).find("runnable"), std::string::npos);
  }
  EXPECT_TRUE(found) << json.out;
  RunResult text = RunTfdiag("analyze --color never " + tmp.File("pod.bundle.json"));
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_EQ(text.out.find("pid 0"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("0 of 0"), std::string::npos) << text.out;
  // task, pid "-", pod, QoS "", limit 2, cpuset "-", threads 64, runnable "-".
  EXPECT_NE(text.out.find("worker:17    -  ctr-job-worker-17"), std::string::npos) << text.out;
}

TEST(UnknownFigures, RunnableBelowMinusOneIsABadBundle) {
  TempDir tmp;
  std::string b = BundleJson(PodWithoutProc());
  // The first sample row: [ts, process, threads, runnable, ...]; runnable -1 -> -2.
  const size_t row = b.find("\"process_samples\"");
  ASSERT_NE(row, std::string::npos);
  const size_t at = b.find(",64,-1,", row);
  ASSERT_NE(at, std::string::npos) << b.substr(row, 200);
  b.replace(at, 7, ",64,-2,");
  WriteFile(tmp.File("bad.json"), b);
  RunResult r = RunTfdiag("analyze " + tmp.File("bad.json"));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("runnable"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace tfdiag::test
