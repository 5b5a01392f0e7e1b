// The report says what it means (issue 39, item 8): no "nothing was analyzed" above a bundle's
// findings; the Findings header says how many rules could judge the inputs; a manifest's Cluster
// names the job it declares; grouped tables and Processes show throttling and nodes; one of a
// thing is singular; a requests-rise warning shows the change it warns of; a group of
// manifest objects is not counted as files; the Scheduling table's histogram column stays
// narrow; subcommands' --help is theirs alone, and --no-progress reads as a flag.
#include <gtest/gtest.h>

#include <string>

#include "core/bundle.h"
#include "core/plural.h"
#include "report/text_style.h"
#include "tests/fixtures.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

bool Has(const std::string& s, const std::string& what) {
  return s.find(what) != std::string::npos;
}

// A bundle as tfdiag attach writes one: a PS and a worker process, sampled, no TF ops; the
// worker runs 20 threads on a 1.5-CPU limit, throttled.
Capture LiveOnly() {
  SampledProcess w = Sampled("worker", 0, 42), ps = Sampled("ps", 0, 41);
  w.cpu_limit = ps.cpu_limit = 1.5;
  w.cpus_used = ps.cpus_used = 1.5;
  w.threads = 20, w.runnable = 9, w.throttled_per_sample = 6;
  return SampledCapture({w, ps}, 4);
}

TEST(ReportWording, BundleFindingsAreNotBelowNothingWasAnalyzed) {
  TempDir dir;
  ASSERT_TRUE(WriteBundle(LiveOnly(), dir.File("run.tfdiag.json")).ok());
  RunResult r = RunTfdiag("analyze --color never '" + dir.File("run.tfdiag.json") + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Has(r.out, "live     2 processes")) << r.out;
  EXPECT_FALSE(Has(r.out, "nothing was analyzed")) << r.out;
}

// Two oversubscribed, throttled workers on two nodes, as a cluster bundle has them.
Capture TwoNodesThrottled() {
  SampledProcess w = Sampled("worker", 0, 42);
  w.node = "node-a", w.cpu_limit = 1.5, w.cpus_used = 1.5;
  w.threads = 20, w.runnable = 9, w.throttled_per_sample = 6;
  SampledProcess w1 = w;
  w1.index = 1, w1.pid = 43, w1.node = "node-b", w1.throttled_per_sample = 7;
  return SampledCapture({w, w1}, 4, "2 nodes (Prometheus 2.42.0)");
}

TEST(ReportWording, OversubscriptionAndProcessesTablesShowThrottlingAndNodes) {
  TempDir dir;
  ASSERT_TRUE(WriteBundle(TwoNodesThrottled(), dir.File("run.tfdiag.json")).ok());
  RunResult r = RunTfdiag("analyze --color never '" + dir.File("run.tfdiag.json") + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const size_t at = r.out.find("thread-oversubscription");
  ASSERT_NE(at, std::string::npos) << r.out;
  // The grouped finding's table: each worker's node and throttled share beside its threads.
  const size_t table = r.out.find("\n    task", at);
  ASSERT_NE(table, std::string::npos) << r.out;
  const std::string head = r.out.substr(table + 1, r.out.find('\n', table + 1) - table - 1);
  EXPECT_TRUE(Has(head, "node")) << head;
  EXPECT_TRUE(Has(head, "throttled CFS periods")) << head;
  EXPECT_TRUE(Has(r.out, "node-a")) << r.out;
  // The Processes table names each process's node.
  const size_t procs = r.out.find("Processes");
  ASSERT_NE(procs, std::string::npos) << r.out;
  const std::string phead =
      r.out.substr(r.out.find('\n', procs) + 1,
                   r.out.find('\n', r.out.find('\n', procs) + 1) - r.out.find('\n', procs) - 1);
  EXPECT_TRUE(Has(phead, " node ")) << phead;
}

TEST(ReportWording, OneOfAThingIsSingular) {
  TempDir dir;
  ASSERT_TRUE(
      WriteBundle(SampledCapture({Sampled("ps", 0, 41)}, 3), dir.File("one.tfdiag.json")).ok());
  RunResult r = RunTfdiag("analyze --color never '" + dir.File("one.tfdiag.json") + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Has(r.out, "live     1 process over")) << r.out;
  EXPECT_FALSE(Has(r.out, "1 processes")) << r.out;
  EXPECT_EQ(Count(1, "node"), "1 node");
  EXPECT_EQ(Count(2, "process"), "2 processes");
  EXPECT_EQ(Count(0, "policy"), "0 policies");
  EXPECT_EQ(Count(4, "PS"), "4 PS");
}

TEST(ReportWording, ManifestReportSaysWhatItJudgedAndDeclares) {
  RunResult r =
      RunTfdiag("analyze --color never '" + std::string(TFDIAG_SOURCE_DIR) + "/samples/job.yaml'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The TFJob's 4 PS and 16 workers, not "jobs none".
  EXPECT_TRUE(Has(r.out, "jobs     none profiled; declared: ps (4 tasks), worker (16 tasks)"))
      << r.out;
  // Not "(19 rules run)" above the rules a manifest cannot feed.
  EXPECT_FALSE(Has(r.out, "rules run)")) << r.out;
  EXPECT_TRUE(Has(r.out, "rules could judge these inputs; Not judged below)")) << r.out;
}

// A grouped manifest finding names its file once ("in job.yaml:"), then each object by document
// and field path, instead of repeating the whole file path on every row.
TEST(ReportWording, ManifestObjectRowsDoNotRepeatThePath) {
  const std::string job = std::string(TFDIAG_SOURCE_DIR) + "/samples/job.yaml";
  RunResult r = RunTfdiag("analyze --color never '" + job + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Has(r.out, "\n      in " + job + ":\n")) << r.out;
  EXPECT_TRUE(Has(r.out, "\n      - (doc 1): spec.tfReplicaSpecs.PS.template.spec.containers[0]"))
      << r.out;
  EXPECT_FALSE(Has(r.out, "      - " + job)) << r.out;
}

TEST(ReportWording, RequestsRiseWarningShowsTheRise) {
  TempDir dir;
  WriteFile(dir.File("job.yaml"),
            TfJobYaml("small", {{"PS", 1,
                                 "            image: tf\n"
                                 "            resources:\n"
                                 "              requests: {cpu: \"1\", memory: 600Mi}\n"
                                 "              limits: {cpu: \"1\", memory: 640Mi}\n"}}));
  RunResult r = RunTfdiag("fix '" + dir.File("job.yaml") + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Has(r.err,
                  "requests rise (requests = limits, over all replicas): memory 600 MiB -> "
                  "640 MiB; the job"))
      << r.err;
  EXPECT_FALSE(Has(r.err, "CPU 1.0 -> 1.0")) << "CPU does not rise: " << r.err;
}

// The Scheduling table's run-queue histogram column lists the 4 fullest buckets and counts the
// rest: a process whose waits spread over 28 buckets (each 1% or more) ran past 300 characters
// when every such bucket was listed. The JSON's runq_hist keeps all 32.
TEST(ReportWording, SchedulingHistogramColumnStaysNarrow) {
  TempDir dir;
  Capture c = SampledCapture({Sampled("worker", 0, 42)}, 4);
  c.meta.probes = "sched(tp_btf)";
  for (size_t i = 0; i < c.process_samples.size(); ++i) {
    SchedRow r;
    r.ts = c.process_samples[i].ts;
    r.process = c.process_samples[i].process;
    r.oncpu_ns = c.process_samples[i].cpu_ns;
    r.voluntary = 100 * static_cast<int64_t>(i);
    r.involuntary = 10 * static_cast<int64_t>(i);
    for (int b = 4; b < 32; ++b) r.runq_hist[b] = static_cast<int64_t>(i) * (b == 20 ? 3 : 1);
    for (int64_t n : r.runq_hist) r.runq_waits += n;
    r.runq_wait_ns = r.runq_waits * 50000;
    c.sched.push_back(r);
  }
  ASSERT_TRUE(WriteBundle(c, dir.File("run.tfdiag.json")).ok());
  RunResult r = RunTfdiag("analyze --color never '" + dir.File("run.tfdiag.json") + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const size_t head = r.out.find("\nScheduling");
  ASSERT_NE(head, std::string::npos) << r.out;
  const size_t row = r.out.find("\n  worker:0 ", head);
  ASSERT_NE(row, std::string::npos) << r.out;
  const std::string line = r.out.substr(row + 1, r.out.find('\n', row + 1) - row - 1);
  EXPECT_LE(line.size(), 200u) << line;
  EXPECT_TRUE(Has(line, "(+24 more)")) << line;  // 28 buckets of 1% or more, 4 shown
  EXPECT_TRUE(Has(line, "<= 2.10 ms 10%")) << "the fullest bucket, [1.05, 2.1) ms: " << line;
}

TEST(ReportWording, SubcommandHelpIsItsOwn) {
  RunResult root = RunTfdiag("--help");
  EXPECT_TRUE(Has(root.out, "What do you have?")) << root.out;
  for (const char* sub : {"analyze", "scaling", "fix", "attach", "rules", "simulate", "view"}) {
    RunResult r = RunTfdiag(std::string(sub) + " --help");
    EXPECT_EQ(r.exit_code, 0) << sub << r.err;
    EXPECT_FALSE(Has(r.out, "What do you have?")) << sub << "\n" << r.out;
  }
  RunResult a = RunTfdiag("analyze --help");
  EXPECT_TRUE(Has(a.out, "--no-progress")) << a.out;
  EXPECT_FALSE(Has(a.out, "{false}")) << a.out;
}

// A fix the replay predicts makes the step longer says so in words, not only as a "+" sign (gen3
// report12 2929: idle-ps's fix predicted 6% slower read like any other impact line), and says not
// to apply it where its whole range is slower; a gain, and a change the report's whole percents
// show as +1%, do not.
TEST(ReportWording, AFixPredictedSlowerSaysSo) {
  auto first_line = [](double saving_pct, double low_pct = 0, double high_pct = 0) {
    Finding f;
    f.impact.set = true;
    f.impact.method = "replay", f.impact.confidence = "medium";
    f.impact.step_ns = 100e6;
    f.impact.step_ns_after_fix = 100e6 * (1 - saving_pct / 100);
    f.impact.saving_pct = saving_pct;
    f.impact.low_ns = low_pct * 1e6, f.impact.high_ns = high_pct * 1e6;
    return text::ImpactLines(f).at(0);
  };
  EXPECT_TRUE(Has(first_line(-6), "(+6%), replay, confidence medium; predicted 6% slower"))
      << first_line(-6);
  EXPECT_FALSE(Has(first_line(-6), "do not apply")) << "no range: not shown wholly slower";
  EXPECT_FALSE(Has(first_line(-6, 95, 117), "do not apply")) << "its range reaches now's step";
  EXPECT_TRUE(Has(first_line(-6, 103, 109), "whole range too: do not apply this fix as written"))
      << first_line(-6, 103, 109);
  EXPECT_TRUE(Has(first_line(-1.6), "(+2%)") && Has(first_line(-1.6), "predicted 2% slower"))
      << "judged on the printed percent: " << first_line(-1.6);
  EXPECT_FALSE(Has(first_line(-1), "slower")) << first_line(-1);
  EXPECT_FALSE(Has(first_line(20), "slower")) << first_line(20);
}

}  // namespace
}  // namespace tfdiag::test
