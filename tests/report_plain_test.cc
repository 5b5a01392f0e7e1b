// The text outputs read plainly (issue 39, a new user's report): "1 CPU", not "1 CPUs"; the
// thread-config advice and its snippet give the same per-pod values; a hot PS's CPU figure says
// whether it is demand or use; the Processes table names its units; a wait names its statistic;
// rule counts add up across `rules list`, analyze and scaling; `tfdiag scaling` reads as analyze
// does; `rules explain` lays its table out for a terminal, with the right units; separate
// captures show the time captured; attach folds per-pid notes; prose wraps at 100 columns.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "analyzers/hot_ps_floor.h"
#include "core/bundle.h"
#include "core/plural.h"
#include "report/wrap.h"
#include "rules/rule_docs.h"
#include "rules/rule_set.h"
#include "tests/fixtures.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

bool Has(const std::string& s, const std::string& what) {
  return s.find(what) != std::string::npos;
}

std::vector<std::string> Lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// A pod list: one PS pod with a 1-CPU limit and two worker pods with 2 CPUs, no thread settings.
std::string PodsOneAndTwoCpus() {
  std::string items;
  for (int i = 0; i < 3; ++i) {
    const std::string role = i == 0 ? "ps" : "worker";
    const int index = i == 0 ? 0 : i - 1;
    const std::string cpu = i == 0 ? "1" : "2";
    items += std::string(i ? "," : "") +
             R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"j-)" + role + "-" +
             std::to_string(index) + R"(","labels":{"training.kubeflow.org/replica-type":")" +
             role + R"(","training.kubeflow.org/replica-index":")" + std::to_string(index) +
             R"("}},"spec":{"nodeName":"n1","containers":[{"name":"tensorflow","env":[],)"
             R"("resources":{"limits":{"cpu":")" +
             cpu + R"(","memory":"4Gi"},"requests":{"cpu":")" + cpu + R"(","memory":"4Gi"}}}]}})";
  }
  return R"({"apiVersion":"v1","kind":"List","items":[)" + items + "]}";
}

// The text report of PodsOneAndTwoCpus().
RunResult AnalyzePods() {
  TempDir dir;
  WriteFile(dir.File("pods.json"), PodsOneAndTwoCpus());
  return RunTfdiag("analyze --color never '" + dir.File("pods.json") + "'");
}

TEST(ReportPlain, OneCpuIsSingular) {
  RunResult r = AnalyzePods();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Has(r.out, "CPU limit 1 CPU to 2 CPUs")) << r.out;
  EXPECT_FALSE(Has(r.out, "1 CPUs")) << r.out;
  EXPECT_EQ(WithUnit(1, "{:.3g}", "CPUs"), "1 CPU");
  EXPECT_EQ(WithUnit(0.5, "{:.3g}", "CPUs"), "0.5 CPUs");
  EXPECT_EQ(WithUnit(1, "{:.2f}", "CPUs"), "1.00 CPUs");
  EXPECT_EQ(WithUnit(1, "{:.3g}", "Gbit/s"), "1 Gbit/s");
}

// For a 1-CPU PS pod: intra-op 1, inter-op 2 in the advice, and the snippet's comment says the
// same (before: "set them to the CPU limit (1)" above "# at least 2").
TEST(ReportPlain, ThreadConfigAdviceMatchesItsSnippet) {
  RunResult r = AnalyzePods();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Has(r.out, "set them for its CPU limit: intra-op 1, inter-op 2, OMP 1")) << r.out;
  EXPECT_TRUE(Has(r.out, "set them for its CPU limit: intra-op 2, inter-op 2, OMP 2")) << r.out;
  EXPECT_FALSE(Has(r.out, "set them to the CPU limit (1)")) << r.out;
  EXPECT_TRUE(Has(r.out, "# M = N, but 2 when N is 1")) << r.out;
}

// ApplyHotPsFloor's CPU figure: demand (eBPF on-CPU + run-queue) when it is above the CPU used,
// named as demand; CPU used otherwise, named as use.
TEST(ReportPlain, HotPsCpuFigureSaysDemandOrUse) {
  StatusOr<RuleSet> rules = DefaultRuleSet();
  ASSERT_TRUE(rules.ok());
  const Rule* hot = rules->Find("hot-ps");
  ASSERT_NE(hot, nullptr);
  Capture c;
  TaskStatsTable stats;
  TrafficStats traffic;
  std::vector<ProcessStats> procs(1);
  procs[0].task = "ps:0", procs[0].samples = 5, procs[0].cpus = 2, procs[0].cpu_cores = 0.191;
  procs[0].cpu_limit = 2;
  std::vector<SchedStats> sched(1);
  sched[0].process = 0, sched[0].cpu_demand = 0.698;
  for (const bool with_demand : {true, false}) {
    const std::vector<SchedStats> s = with_demand ? sched : std::vector<SchedStats>{};
    AnalysisInput in{c, stats, procs, traffic, s};
    Finding f;
    f.task = f.subject = "ps:0";
    ApplyHotPsFloor(in, *hot, &f);
    ASSERT_FALSE(f.evidence.empty());
    const Figure& fig = f.evidence[0];
    if (with_demand) {
      EXPECT_EQ(fig.label,
                "CPU demand (running + runnable threads) of ps:0 against the CPUs it may use");
      EXPECT_NEAR(fig.value, 34.9, 0.1);
    } else {
      EXPECT_EQ(fig.label, "CPU used by ps:0 against the CPUs it may use");
      EXPECT_NEAR(fig.value, 9.55, 0.1);
    }
  }
}

TEST(ReportPlain, ProcessesHeadersNameTheirUnits) {
  TempDir dir;
  SampledProcess w = Sampled("worker", 0, 42), ps = Sampled("ps", 0, 41);
  w.cpu_limit = 1.5, w.threads = 20, w.runnable = 9;
  ASSERT_TRUE(WriteBundle(SampledCapture({w, ps}, 4), dir.File("run.tfdiag.json")).ok());
  RunResult r = RunTfdiag("analyze --color never '" + dir.File("run.tfdiag.json") + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const size_t at = r.out.find("Processes");
  ASSERT_NE(at, std::string::npos) << r.out;
  const size_t head = r.out.find('\n', at) + 1;
  const std::string line = r.out.substr(head, r.out.find('\n', head) - head);
  for (const char* h : {"CPU limit (CPUs)", "runnable threads", "CPU used (CPUs)",
                        "invol. ctx switches/s", "throttled periods"}) {
    EXPECT_TRUE(Has(line, h)) << h << "\n" << line;
  }
}

// A simulated hot-PS job: the critical path is the median step's, a finding's waits are means.
TEST(ReportPlain, WaitsNameTheirStatistic) {
  TempDir dir;
  ASSERT_EQ(RunTfdiag("simulate hot-ps --steps 5 -o " + dir.File("hot.json")).exit_code, 0);
  RunResult r = RunTfdiag("analyze --color never " + dir.File("hot.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Has(r.out,
                  "(per worker, in its median step: the largest segments, in order; a "
                  "finding's waits are means over all its steps)"))
      << r.out;
  EXPECT_TRUE(Has(r.out, " per step (mean over its 5 steps) until ")) << r.out;
}

// `rules list`, analyze and the rule set count the same rules: 20 + scaling-limit.
TEST(ReportPlain, RuleCountsAddUp) {
  StatusOr<RuleSet> rules = DefaultRuleSet();
  ASSERT_TRUE(rules.ok());
  const size_t all = rules->rules.size();
  RunResult list = RunTfdiag("rules list");
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_TRUE(Has(list.out, Count(all, "rule") + ": " + Count(all - 1, "analyze rule") +
                                "; scaling-limit runs in tfdiag scaling)"))
      << list.out;
  RunResult a =
      RunTfdiag("analyze --color never '" + std::string(TFDIAG_SOURCE_DIR) + "/samples/job.yaml'");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_TRUE(Has(a.out, fmt::format(" of {} analyze rules could judge", all - 1))) << a.out;
  EXPECT_TRUE(Has(a.out, "  scaling-limit: runs in tfdiag scaling (compares runs), not in analyze"))
      << a.out;
}

// A sweep that stops scaling: the finding reads as analyze's ([HIGH]), before ahead of after,
// the runs' worker counts named plainly, and how throughput was measured in words.
TEST(ReportPlain, ScalingReadsAsAnalyzeDoes) {
  TempDir dir;
  ASSERT_EQ(RunTfdiag("simulate hot-ps --steps 5 --workers 4,8 --embedding-dim 256 -o " +
                      dir.File("sweep"))
                .exit_code,
            0);
  RunResult r = RunTfdiag("scaling " + dir.File("sweep/workers-4.json") + " " +
                          dir.File("sweep/workers-8.json"));
  ASSERT_LE(r.exit_code, 1) << r.err;
  EXPECT_TRUE(Has(r.out, "[HIGH] scaling-limit")) << r.out;
  EXPECT_FALSE(Has(r.out, "[high]")) << r.out;
  EXPECT_TRUE(Has(r.out, "throughput measured as: steps/s = 1 / the median step time")) << r.out;
  const size_t before = r.out.find("    workers before: 4");
  const size_t after = r.out.find("    workers (after, in ");
  ASSERT_NE(before, std::string::npos) << r.out;
  ASSERT_NE(after, std::string::npos) << r.out;
  EXPECT_LT(before, after) << r.out;
  for (const char* fig : {"throughput", "median step time", "busy share of ps:0"}) {
    const size_t b = r.out.find(std::string("    ") + fig + " before: ");
    const size_t a = r.out.find(std::string("    ") + fig + " after: ");
    if (b == std::string::npos || a == std::string::npos) continue;
    EXPECT_LT(b, a) << fig << "\n" << r.out;
  }
}

// The threshold table as aligned columns, no pipes, with the units of their values.
TEST(ReportPlain, RulesExplainLaysOutItsTable) {
  RunResult r = RunTfdiag("rules explain hot-ps");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(Has(r.out, "| ")) << r.out;
  EXPECT_FALSE(Has(r.out, "|---")) << r.out;
  EXPECT_FALSE(Has(r.out, "\n## ")) << r.out;
  bool nic = false, mb = false;
  for (const std::string& l : Lines(r.out)) {
    std::istringstream cols(l);
    std::string name, value, unit;
    cols >> name >> value >> unit;
    if (name == "nic_gbps") nic = value == "10" && unit == "Gbit/s";
    if (name == "bytes_min_total_mb") mb = value == "1" && unit == "MB";
    // Only a word longer than the line (a URL), or a line of code, never broken mid-expression
    // (a call's bracket opens right after a name; issue 48).
    if (TextColumns(l) > 100) {
      const bool code = std::regex_search(l, std::regex("[A-Za-z0-9_.]\\("));
      EXPECT_TRUE(code || l.find(' ', l.find_first_not_of(" -")) == std::string::npos) << l;
    }
  }
  EXPECT_TRUE(nic) << r.out;
  EXPECT_TRUE(mb) << r.out;
  RunResult md = RunTfdiag("rules explain --markdown hot-ps");
  EXPECT_EQ(md.out, std::string(RuleDoc("hot-ps")));
}

// Three ProfilerHook dumps a minute apart: the Cluster section shows the time captured.
TEST(ReportPlain, SeparateCapturesShowTheTimeCaptured) {
  TempDir dir;
  ASSERT_EQ(
      RunTfdiag("simulate hot-ps --steps 3 --profiler-hook 1 -o " + dir.File("hook")).exit_code, 0);
  RunResult r = RunTfdiag("analyze --color never " + dir.File("hook") + "/*.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Has(r.out, "  captured ")) << r.out;
  EXPECT_TRUE(Has(r.out, "(3 captures over ")) << r.out;
  EXPECT_FALSE(Has(r.out, "  span     ")) << r.out;
}

// Prose wraps at 100 columns with a hanging indent (on a terminal, or --width 100); a word longer
// than the line stays whole.
TEST(ReportPlain, ProseWrapsAtOneHundredColumns) {
  const std::string text(30, 'a');
  const std::string w =
      WrapText(text + " " + text + " " + text + " " + text, 100, "    ", "      ");
  ASSERT_EQ(Lines(w).size(), 2u) << w;
  EXPECT_EQ(Lines(w)[1].rfind("      a", 0), 0u) << w;
  const std::string url = "https://example.com/" + std::string(120, 'x');
  EXPECT_TRUE(Has(WrapText("see " + url, 100, "", "  "), "\n  " + url + "\n"));
  EXPECT_EQ(WrapText("a\n  b", 100, "- ", "  "), "- a\n    b\n");
  // Code is not broken mid-expression, nor a URL left alone after a bare dash (issue 48).
  const std::string call = "ConfigProto(intra_op_parallelism_threads=N, inter_op_threads=M)";
  for (size_t at : {0u, 10u, 20u, 30u}) {
    const std::string wrapped =
        WrapText(std::string(at, 'x') + " TF1 " + call + " and more words", 40, "", "  ");
    EXPECT_TRUE(Has(wrapped, call)) << wrapped;
  }
  EXPECT_TRUE(Has(WrapText("set `a = b + c` here", 8, "", ""), "`a = b + c`"));
  const std::string dashed = WrapText(std::string(90, 'y') + " - " + url, 100, "", "");
  EXPECT_TRUE(Has(dashed, "- " + url)) << dashed;
  EXPECT_FALSE(Has(dashed, " -\n")) << dashed;
  // Prose parentheses (opened after a space) still wrap.
  EXPECT_GT(
      Lines(WrapText("a (b c d e f g h i j k l m n o p q r s t u v w x y z)", 10, "", "")).size(),
      2u);
  // A report with long summaries, impact and fix lines: every prose line of its findings fits.
  TempDir dir;
  ASSERT_EQ(RunTfdiag("simulate hot-ps --steps 5 -o " + dir.File("hot.json")).exit_code, 0);
  // --width 100: what a terminal gets (stdout here is a pipe, which gets one line per text).
  RunResult r = RunTfdiag("analyze --color never --width 100 " + dir.File("hot.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  RunResult flat = RunTfdiag("analyze --color never " + dir.File("hot.json"));
  EXPECT_NE(flat.out, r.out);
  EXPECT_TRUE(Has(r.out, "\n      ")) << r.out;
  // The Tasks table's free-text cell (top op types) is cut on a terminal, whole when piped.
  auto row = [](const std::string& out) {
    const size_t at = out.find("\n  ps:0 ");
    return at == std::string::npos ? std::string()
                                   : out.substr(at + 1, out.find('\n', at + 1) - at - 1);
  };
  EXPECT_LT(TextColumns(row(r.out)), TextColumns(row(flat.out))) << row(r.out);
  EXPECT_EQ(row(r.out).substr(row(r.out).size() - 5), ", ...") << row(r.out);
  const size_t findings = r.out.find("\nFindings (");
  ASSERT_NE(findings, std::string::npos) << r.out;
  bool prose = false;  // inside the summary, impact, waits or fix of a finding
  int checked = 0;
  for (const std::string& l : Lines(r.out.substr(findings))) {
    if (l.rfind("  [", 0) == 0 || l.rfind("    impact:", 0) == 0 || l == "    waits:" ||
        l == "    fix:") {
      prose = true;
    } else if (l == "    evidence:" || l.rfind("    see:", 0) == 0 || l.empty()) {
      prose = false;
    }
    if (!prose) continue;
    ++checked;
    // A longer line is a single unbreakable word after its indent, or code, which is never
    // broken mid-expression (a call's bracket opens right after a name; issue 48).
    if (TextColumns(l) > 100) {
      const bool code = std::regex_search(l, std::regex("[A-Za-z0-9_.]\\("));
      EXPECT_TRUE(code || l.find(' ', l.find_first_not_of(' ')) == std::string::npos) << l;
    }
  }
  EXPECT_GT(checked, 5) << r.out;
}

// Tasks outside Kubernetes: one note for all, not one per pid (before: "pid N: namespace
// unknown: ... resolves outside its mount (not followed)" per task); -v lists each.
TEST(ReportPlain, AttachFoldsPerPidNotes) {
  char link[64] = {};
  if (readlink("/var/run", link, sizeof link - 1) <= 0) {
    GTEST_SKIP() << "/var/run is not a symlink here: a task's service-account path is not "
                    "refused, so there is no per-pid note to fold";
  }
  std::vector<pid_t> pids;
  for (int i = 0; i < 3; ++i) {
    pid_t pid = fork();
    if (pid == 0) {
      std::string env =
          "TF_CONFIG={\"cluster\":{\"ps\":[\"127.0.0.1:1\"],\"worker\":[\"127.0.0.1:2\","
          "\"127.0.0.1:3\"]},\"task\":{\"type\":\"" +
          std::string(i == 0 ? "ps" : "worker") +
          "\",\"index\":" + std::to_string(i == 0 ? 0 : i - 1) + "}}";
      char* envp[] = {env.data(), nullptr};
      char* argv[] = {const_cast<char*>("sleep"), const_cast<char*>("30"), nullptr};
      execve("/bin/sleep", argv, envp);
      _exit(127);
    }
    pids.push_back(pid);
  }
  usleep(300 * 1000);
  std::string args;
  for (pid_t p : pids) args += " --pid " + std::to_string(p);
  TempDir dir;
  RunResult folded =
      RunTfdiag("attach --no-bpf --duration 1s" + args + " -o " + dir.File("b.json"));
  RunResult each =
      RunTfdiag("attach --no-bpf --duration 1s -v" + args + " -o " + dir.File("b2.json"));
  for (pid_t p : pids) kill(p, SIGKILL), waitpid(p, nullptr, 0);
  ASSERT_EQ(folded.exit_code, 0) << folded.err;
  ASSERT_EQ(each.exit_code, 0) << each.err;
  int per_pid = 0;
  for (const std::string& l : Lines(each.err)) per_pid += Has(l, ": namespace unknown: ");
  if (per_pid < 2) GTEST_SKIP() << "no per-pid namespace notes here:\n" << each.err;
  int lines = 0;
  for (const std::string& l : Lines(folded.err)) lines += Has(l, "namespace unknown");
  EXPECT_EQ(lines, 1) << folded.err;
  EXPECT_TRUE(Has(folded.err,
                  "3 tasks are not in Kubernetes pods (no service-account namespace "
                  "in their root): namespace unknown (pids "))
      << folded.err;
  // The bundle keeps each.
  EXPECT_TRUE(Has(ReadFile(dir.File("b.json")), "namespace unknown")) << "bundle";
}

}  // namespace
}  // namespace tfdiag::test
