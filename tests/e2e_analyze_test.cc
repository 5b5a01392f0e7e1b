// End-to-end: the built tfdiag binary on real traces (../shared/traces), simulated scenarios and
// bad inputs. Expectations on real traces are computed here from the files themselves with an
// independent DOM parse, not copied from tfdiag's output.
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <regex>
#include <set>

#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

rapidjson::Document ParseJson(const std::string& text) {
  rapidjson::Document d;
  d.Parse(text.c_str());
  EXPECT_FALSE(d.HasParseError()) << "not JSON: " << text.substr(0, 200);
  return d;
}

// Expected per-task figures computed from a TF1 timeline with a DOM parse: task label -> counts.
struct Expect {
  int ops = 0, recv = 0;
  std::set<std::string> devices;
};
std::map<std::string, Expect> ExpectedFromTimeline(const std::string& path) {
  rapidjson::Document d = ParseJson(ReadFile(path));
  std::map<int64_t, std::string> pid_device;
  for (auto& e : d["traceEvents"].GetArray()) {
    if (std::string(e["ph"].GetString()) == "M" &&
        std::string(e["name"].GetString()) == "process_name") {
      pid_device[e["pid"].GetInt64()] = e["args"]["name"].GetString();
    }
  }
  std::regex re(R"(/job:([a-z]+)/replica:0/task:(\d+)/(device:)?([A-Za-z]+:\d+))");
  std::map<std::string, Expect> out;
  for (auto& e : d["traceEvents"].GetArray()) {
    if (std::string(e["ph"].GetString()) != "X") continue;
    std::smatch m;
    std::string dev = pid_device[e["pid"].GetInt64()];
    if (!std::regex_search(dev, m, re)) continue;
    Expect& x = out[m[1].str() + ":" + m[2].str()];
    ++x.ops;
    x.recv += std::string(e["args"]["op"].GetString()) == "RecvTensor";
    x.devices.insert(m[4].str());
  }
  return out;
}

TEST(E2eAnalyze, RealTfEncryptedTraceReportsOnePsTwoWorkersWithExactCounts) {
  if (!SharedAvailable()) GTEST_SKIP() << "../shared/traces not found beside the repository";
  const std::string trace = SharedTrace("tfe_e0cd14f_timeline_client.json");
  RunResult r = RunTfdiag("analyze -f json '" + trace + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  rapidjson::Document j = ParseJson(r.out);
  EXPECT_STREQ(j["schema"].GetString(), "tfdiag.analysis/1");
  EXPECT_EQ(j["cluster"]["ps"].GetInt(), 1);
  EXPECT_EQ(j["cluster"]["workers"].GetInt(), 2);
  std::map<std::string, Expect> expect = ExpectedFromTimeline(trace);
  ASSERT_EQ(expect.size(), 3u);
  ASSERT_EQ(j["tasks"].Size(), expect.size());
  for (auto& t : j["tasks"].GetArray()) {
    std::string label = t["task"].GetString();
    ASSERT_TRUE(expect.count(label)) << label;
    EXPECT_EQ(t["ops"].GetInt(), expect[label].ops) << label;
    EXPECT_EQ(t["recv_tensor_count"].GetInt(), expect[label].recv) << label;
    EXPECT_EQ(t["devices"].GetInt(), static_cast<int>(expect[label].devices.size())) << label;
    EXPECT_LE(t["busy_ns"].GetInt64(), t["op_time_ns"].GetInt64()) << label;
  }
  // The PS serves split and w/read to both workers (_S<N> inputs on the workers' MatMuls).
  ASSERT_EQ(j["ps_load"].Size(), 1u);
  EXPECT_EQ(j["ps_load"][0]["transfers_served"].GetInt(), 4);
  EXPECT_EQ(j["ps_load"][0]["transfers_received"].GetInt(), 2);
  EXPECT_NEAR(j["ps_load"][0]["share_pct"].GetDouble(), 100.0, 1e-9);
  // A single PS can be neither hot nor idle.
  for (auto& f : j["findings"].GetArray()) {
    EXPECT_STRNE(f["rule"].GetString(), "hot-ps");
    EXPECT_STRNE(f["rule"].GetString(), "idle-ps");
  }
}

TEST(E2eAnalyze, RealTfEncryptedTraceTextNamesTheCluster) {
  if (!SharedAvailable()) GTEST_SKIP() << "../shared/traces not found beside the repository";
  RunResult r =
      RunTfdiag("analyze --color never '" + SharedTrace("tfe_e0cd14f_timeline_client.json") + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("ps (1 task), worker (2 tasks)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("PS load"), std::string::npos);
  EXPECT_NE(r.out.find("Findings"), std::string::npos);
  EXPECT_EQ(r.out.find("\x1b["), std::string::npos) << "no colour when asked";
}

TEST(E2eAnalyze, RealSingleProcessTraceIsOneLocalTask) {
  if (!SharedAvailable()) GTEST_SKIP() << "../shared/traces not found beside the repository";
  const std::string trace = SharedTrace("ikhlestov_8f7e68b_CPU_timeline_02_step_0.json");
  RunResult r = RunTfdiag("analyze -f json '" + trace + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  rapidjson::Document j = ParseJson(r.out);
  std::map<std::string, Expect> expect = ExpectedFromTimeline(trace);
  ASSERT_EQ(expect.size(), 1u);
  ASSERT_EQ(j["tasks"].Size(), 1u);
  EXPECT_STREQ(j["tasks"][0]["task"].GetString(), "localhost:0");
  EXPECT_EQ(j["tasks"][0]["ops"].GetInt(), expect["localhost:0"].ops);
  EXPECT_EQ(j["cluster"]["ps"].GetInt(), 0);
  EXPECT_EQ(j["findings"].Size(), 0u);
}

TEST(E2eAnalyze, BinaryProfilerProtobufsAreReadAndOtherBinaryIsRejected) {
  if (!SharedAvailable()) GTEST_SKIP() << "../shared/traces not found beside the repository";
  // The profilers' protobufs are read (tests/profile_reader_test.cc checks what).
  for (const char* f : {"tfprof_d6853e0_GPU-multi-worker_34.83.195.179_6003.xplane.pb",
                        "tfe_b3b9f35_local.trace"}) {
    RunResult r = RunTfdiag(std::string("analyze -f json '") + SharedTrace(f) + "'");
    EXPECT_EQ(r.exit_code, 0) << f << r.err;
    EXPECT_NE(r.out.find(std::string(f).find("xplane") != std::string::npos ? "\"xplane\""
                                                                            : "\"profiler-trace\""),
              std::string::npos);
  }
  // Other binary data: one line naming the file, a byte offset and what was expected.
  TempDir dir;
  WriteFile(dir.File("blob.pb"), std::string("\x01\x02\x03garbage\x00\x7f", 13));
  RunResult r = RunTfdiag("analyze '" + dir.File("blob.pb") + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("blob.pb"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("byte "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("binary"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
}

TEST(E2eAnalyze, SeveralFilesMergeIntoOneCapture) {
  if (!SharedAvailable()) GTEST_SKIP() << "../shared/traces not found beside the repository";
  // Split the real trace into one file per worker task (metadata in both), as a user with one
  // timeline per worker would have it; the merged analysis must equal the whole file's.
  const std::string trace = SharedTrace("tfe_e0cd14f_timeline_client.json");
  rapidjson::Document d = ParseJson(ReadFile(trace));
  TempDir dir;
  std::string parts[2] = {"", ""};
  std::map<int64_t, std::string> pid_name;
  for (auto& e : d["traceEvents"].GetArray()) {
    if (std::string(e["ph"].GetString()) == "M")
      pid_name[e["pid"].GetInt64()] = e["args"]["name"].GetString();
  }
  std::string meta;
  for (auto& e : d["traceEvents"].GetArray()) {
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    e.Accept(w);
    std::string s = buf.GetString();
    if (std::string(e["ph"].GetString()) == "M") {
      meta += (meta.empty() ? "" : ",") + s;
      continue;
    }
    // worker:1's ops go to the second file, everything else to the first.
    int which = pid_name[e["pid"].GetInt64()].find("/job:worker/replica:0/task:1") == 0 ? 1 : 0;
    parts[which] += "," + s;
  }
  WriteFile(dir.File("a.json"), "{\"traceEvents\":[" + meta + parts[0] + "]}");
  WriteFile(dir.File("b.json"), "[" + meta + parts[1]);  // bare array, no closing bracket
  RunResult whole = RunTfdiag("analyze -f json '" + trace + "'");
  RunResult merged = RunTfdiag("analyze -f json " + dir.File("a.json") + " " + dir.File("b.json"));
  ASSERT_EQ(merged.exit_code, 0) << merged.err;
  rapidjson::Document jw = ParseJson(whole.out), jm = ParseJson(merged.out);
  EXPECT_EQ(jm["inputs"].Size(), 2u);
  EXPECT_EQ(jm["cluster"]["ops"].GetInt(), jw["cluster"]["ops"].GetInt());
  ASSERT_EQ(jm["tasks"].Size(), jw["tasks"].Size());
  for (rapidjson::SizeType i = 0; i < jw["tasks"].Size(); ++i) {
    EXPECT_STREQ(jm["tasks"][i]["task"].GetString(), jw["tasks"][i]["task"].GetString());
    EXPECT_EQ(jm["tasks"][i]["busy_ns"].GetInt64(), jw["tasks"][i]["busy_ns"].GetInt64());
    EXPECT_EQ(jm["tasks"][i]["recv_tensor_count"].GetInt(),
              jw["tasks"][i]["recv_tensor_count"].GetInt());
  }
  EXPECT_EQ(jm["edges"].Size(), jw["edges"].Size());
}

TEST(E2eAnalyze, HotPsScenarioNamesThePsAndTheVariable) {
  TempDir dir;
  for (const char* fmt : {"tf1", "tf2"}) {
    std::string file = dir.File(std::string("hot.") + fmt + ".json");
    // Severity comes from hot-ps's own evidence (issue 35), whatever the replay predicts.
    RunResult s =
        RunTfdiag(std::string("simulate hot-ps --steps 10 --format ") + fmt + " -o " + file);
    ASSERT_EQ(s.exit_code, 0) << s.err;
    rapidjson::Document truth = ParseJson(ReadFile(file));
    const auto& expect = truth["tfdiagGroundTruth"]["expect"][0];
    RunResult r = RunTfdiag("analyze -f json --fail-on high " + file);
    EXPECT_EQ(r.exit_code, 1) << "a high finding with --fail-on high exits 1; " << r.err;
    rapidjson::Document j = ParseJson(r.out);
    bool found = false;
    for (auto& f : j["findings"].GetArray()) {
      if (std::string(f["rule"].GetString()) != "hot-ps") continue;
      found = true;
      EXPECT_STREQ(f["subject"].GetString(), expect["subject"].GetString());
      ASSERT_GE(f["ops"].Size(), 1u);
      EXPECT_STREQ(f["ops"][0].GetString(), expect["variable"].GetString());
    }
    EXPECT_TRUE(found) << fmt << ": no hot-ps finding:\n" << r.out;
  }
}

// --timings reports each phase on stderr and leaves stdout (the report) as it is.
TEST(E2eAnalyze, TimingsGoToStderrAndDoNotChangeTheReport) {
  TempDir dir;
  const std::string file = dir.File("hot.json");
  ASSERT_EQ(RunTfdiag("simulate hot-ps --steps 3 -o " + file).exit_code, 0);
  RunResult plain = RunTfdiag("analyze -f json --threads 2 " + file);
  RunResult timed = RunTfdiag("analyze -f json --threads 2 --timings " + file);
  ASSERT_EQ(timed.exit_code, 0) << timed.err;
  EXPECT_EQ(plain.out, timed.out);
  EXPECT_EQ(plain.err.find("timings"), std::string::npos);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(timed.err, m,
                                std::regex(R"(timings \(s, wall, 2 threads\): read ([0-9.]+), )"
                                           R"(finish ([0-9.]+), analyze ([0-9.]+), render )"
                                           R"(([0-9.]+), write ([0-9.]+))")))
      << timed.err;
  EXPECT_GT(std::stod(m[1].str()), 0.0) << "reading a file takes some time";
}

// The analysis JSON without its inputs block (names, gzip, sizes), which differ by design below.
std::string WithoutInputs(const std::string& json) {
  return std::regex_replace(json, std::regex(R"("inputs": \[[^\]]*\],)"), "");
}

// Inputs that can be read only once (a pipe, standard input as "-", gzip through /dev/stdin) are
// copied to a temporary file first: the report equals the file's own, names the input as given,
// an error names it too, and no copy is left behind in $TMPDIR.
TEST(E2eAnalyze, PipesAndStandardInputGiveTheFilesReport) {
  TempDir dir, tmp;
  const std::string file = dir.File("hot.json");
  ASSERT_EQ(RunTfdiag("simulate hot-ps --steps 3 -o " + file).exit_code, 0);
  const RunResult direct = RunTfdiag("analyze -f json " + file);
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  const std::string tfdiag = "TMPDIR='" + tmp.path() + "' " + TFDIAG_BINARY;
  const RunResult dash = RunShell("(cat '" + file + "' | " + tfdiag + " analyze -f json -)");
  const RunResult gz =
      RunShell("(gzip -c '" + file + "' | " + tfdiag + " analyze -f json /dev/stdin)");
  for (const RunResult* r : {&dash, &gz}) {
    ASSERT_EQ(r->exit_code, 0) << r->err;
    EXPECT_TRUE(WithoutInputs(r->out) == WithoutInputs(direct.out));
    EXPECT_NE(WithoutInputs(r->out).find(R"("cluster")"), std::string::npos);
  }
  EXPECT_NE(dash.out.find(R"("path": "-")"), std::string::npos);
  EXPECT_NE(gz.out.find(R"("path": "/dev/stdin")"), std::string::npos);
  EXPECT_NE(gz.out.find(R"("gzip": true)"), std::string::npos);

  // Standard input redirected from the file itself: read in place, named "-".
  const RunResult redirected = RunShell("(" + tfdiag + " analyze -f json - < '" + file + "')");
  ASSERT_EQ(redirected.exit_code, 0) << redirected.err;
  EXPECT_TRUE(WithoutInputs(redirected.out) == WithoutInputs(direct.out));
  EXPECT_NE(redirected.out.find(R"("path": "-")"), std::string::npos);

  const RunResult cut = RunShell("(head -c 5000 '" + file + "' | " + tfdiag + " analyze -)");
  EXPECT_EQ(cut.exit_code, 2);
  EXPECT_NE(cut.err.find("-: byte "), std::string::npos) << cut.err;
  EXPECT_EQ(cut.err.find("tfdiag-input"), std::string::npos) << cut.err;
  EXPECT_EQ(cut.err.find("/proc/self/fd"), std::string::npos) << cut.err;
  // Standard input twice, under one name or two: it can be read once, so that is an error, not
  // an empty second input. Redirected from a file, it can be read twice.
  for (const char* args : {"- -", "- /dev/stdin"}) {
    const RunResult twice =
        RunShell("(cat '" + file + "' | " + tfdiag + " analyze -f json " + args + ")");
    EXPECT_EQ(twice.exit_code, 2) << args;
    EXPECT_NE(twice.err.find("the same pipe or standard input as -; it can be read only once"),
              std::string::npos)
        << args << ": " << twice.err;
  }
  const RunResult file_twice = RunShell("(" + tfdiag + " analyze -f json - - < '" + file + "')");
  EXPECT_EQ(file_twice.exit_code, 0) << file_twice.err;
  EXPECT_EQ(RunShell("ls -A '" + tmp.path() + "'").out, "") << "temporary copies left behind";
}

// A run killed while it copies its standard input (SIGKILL: no handler runs) leaves no copy in
// $TMPDIR: the copy is unlinked as soon as it is created and read through its descriptor.
TEST(E2eAnalyze, KilledWhileCopyingStandardInputLeavesNoCopy) {
  TempDir dir, tmp;
  const std::string file = dir.File("hot.json"), fifo = dir.File("in.fifo");
  ASSERT_EQ(RunTfdiag("simulate hot-ps --steps 3 -o " + file).exit_code, 0);
  const RunResult r = RunShell(
      "mkfifo '" + fifo + "' && (TMPDIR='" + tmp.path() + "' " + TFDIAG_BINARY + " analyze - < '" +
      fifo + "' >/dev/null 2>&1 & t=$!; exec 3>'" + fifo + "'; cat '" + file +
      "' >&3; sleep 0.5; echo \"during:$(ls -A '" + tmp.path() + "')\"; kill -9 $t; wait $t; " +
      "exec 3>&-; echo \"after:$(ls -A '" + tmp.path() + "')\")");
  EXPECT_NE(r.out.find("during:\n"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.out.find("after:\n"), std::string::npos) << r.out << r.err;
}

TEST(E2eAnalyze, BalancedScenarioIsQuiet) {
  TempDir dir;
  for (const char* fmt : {"tf1", "tf2"}) {
    std::string file = dir.File(std::string("bal.") + fmt + ".json");
    ASSERT_EQ(RunTfdiag(std::string("simulate balanced --steps 4 --format ") + fmt + " -o " + file)
                  .exit_code,
              0);
    RunResult r = RunTfdiag("analyze -f json --fail-on info " + file);
    EXPECT_EQ(r.exit_code, 0) << r.out;
    rapidjson::Document j = ParseJson(r.out);
    EXPECT_EQ(j["findings"].Size(), 0u) << r.out;
    EXPECT_GE(j["cluster"]["ps"].GetInt(), 2);
  }
}

TEST(E2eAnalyze, BadInputExitsTwoWithOneLineAndLeavesNoOutputFile) {
  TempDir dir;
  struct Case {
    const char* name;
    std::string contents;
  };
  std::vector<Case> cases = {
      {"notjson.json", "hello"},
      {"truncated.json", "{\"traceEvents\":[{\"ph\":\"X\",\"pid\":1,"},
      {"wrongtype.json", "{\"traceEvents\":\"nope\"}"},
      {"noevents.json", "{\"displayTimeUnit\":\"ns\"}"},
      {"empty.json", ""},
      {"garbage.bin", std::string("\x00\x01\x02\xff\xfe garbage", 14)},
      {"badgzip.json.gz",
       std::string("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03garbage-not-deflate", 29)},
  };
  for (const Case& c : cases) {
    std::string in = dir.File(c.name), out = dir.File(std::string(c.name) + ".out.json");
    WriteFile(in, c.contents);
    RunResult r = RunTfdiag("analyze -f json -o " + out + " " + in);
    EXPECT_EQ(r.exit_code, 2) << c.name;
    EXPECT_NE(r.err.find(in), std::string::npos) << c.name << ": " << r.err;
    EXPECT_NE(r.err.find("byte "), std::string::npos) << c.name << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << c.name << ": " << r.err;
    struct stat st;
    EXPECT_NE(::stat(out.c_str(), &st), 0) << c.name << ": output file left behind";
    // No temporary file either.
    EXPECT_NE(std::system(("ls " + dir.path() + " | grep -q '\\.tmp\\.'").c_str()), 0) << c.name;
  }
}

TEST(E2eAnalyze, UsageErrorsExitTwo) {
  EXPECT_EQ(RunTfdiag("analyze").exit_code, 2);
  EXPECT_EQ(RunTfdiag("analyze /nonexistent/file.json").exit_code, 2);
  EXPECT_EQ(RunTfdiag("nosuchcommand").exit_code, 2);
  TempDir dir;
  WriteFile(dir.File("t.json"), "[]");
  EXPECT_EQ(RunTfdiag("analyze --fail-on bogus " + dir.File("t.json")).exit_code, 2);
  EXPECT_EQ(RunTfdiag("analyze --disable no-such-rule " + dir.File("t.json")).exit_code, 2);
}

TEST(E2eAnalyze, OutputFileIsWrittenAtomicallyAndIsValidJson) {
  TempDir dir;
  std::string file = dir.File("bal.json"), out = dir.File("report.json");
  ASSERT_EQ(RunTfdiag("simulate balanced --steps 2 -o " + file).exit_code, 0);
  RunResult r = RunTfdiag("analyze -f json -o " + out + " " + file);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.empty());
  rapidjson::Document j = ParseJson(ReadFile(out));
  EXPECT_TRUE(j.HasMember("findings"));
}

}  // namespace
}  // namespace tfdiag::test
