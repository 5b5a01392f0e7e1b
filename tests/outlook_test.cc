// The scaling outlook from one profile (issue 44 item 3, analyzers/outlook.h): one capture's
// `outlook` (analyze -f json) against the same job simulated at 2x and 4x the workers. The truth
// is measured here from the simulated traces themselves (each worker's _SOURCE starts), not by
// tfdiag's step detection, and the simulator (samples/, `tfdiag simulate`) shares no code with
// the replay. bench/outlook/outlook_sweep.py runs the wider comparison (docs/scaling.md).
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

rapidjson::Document Parse(const std::string& text) {
  rapidjson::Document d;
  d.Parse(text.c_str(), text.size());
  return d;
}

// Worker steps per second over all workers, from the trace: per worker (its "... Compute"
// process), the median time between the starts of its _SOURCE ops after the first step; the sum
// of 1 / median over the workers.
double TraceStepsPerS(const std::string& path) {
  rapidjson::Document d = Parse(ReadFile(path));
  EXPECT_TRUE(d.IsObject()) << path;
  if (!d.IsObject()) return 0;
  std::map<int, bool> worker;  // pid -> a worker's Compute lane
  for (const auto& e : d["traceEvents"].GetArray()) {
    if (e.HasMember("ph") && std::string(e["ph"].GetString()) == "M" &&
        std::string(e["name"].GetString()) == "process_name") {
      const std::string n = e["args"]["name"].GetString();
      worker[e["pid"].GetInt()] = n.find("/job:worker/") != std::string::npos && n.size() >= 7 &&
                                  n.compare(n.size() - 7, 7, "Compute") == 0;
    }
  }
  std::map<int, std::vector<double>> starts;
  for (const auto& e : d["traceEvents"].GetArray()) {
    if (!e.HasMember("ph") || std::string(e["ph"].GetString()) != "X") continue;
    if (!worker[e["pid"].GetInt()] || !e.HasMember("args") || !e["args"].HasMember("name"))
      continue;
    if (std::string(e["args"]["name"].GetString()) == "_SOURCE") {
      starts[e["pid"].GetInt()].push_back(e["ts"].GetDouble());
    }
  }
  double rate = 0;
  for (auto& [pid, s] : starts) {
    std::sort(s.begin(), s.end());
    std::vector<double> gaps;
    for (size_t i = 2; i < s.size(); ++i) gaps.push_back(s[i] - s[i - 1]);
    if (gaps.empty()) continue;
    std::nth_element(gaps.begin(), gaps.begin() + gaps.size() / 2, gaps.end());
    rate += 1e6 / gaps[gaps.size() / 2];
  }
  return rate;
}

class Outlook : public ::testing::Test {
 protected:
  // Simulates `scenario` at `workers` (24 steps, seed 7); returns the file's path.
  std::string Simulate(const std::string& scenario, int workers, const std::string& extra = "") {
    const std::string path =
        dir_.File(scenario + "-" + std::to_string(workers) + "-" + std::to_string(n_++) + ".json");
    RunResult r = RunTfdiag("simulate " + scenario + " --workers " + std::to_string(workers) +
                            " --steps 24 --seed 7 " + extra + " -o " + path);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return path;
  }
  double TruthAt(const std::string& scenario, int workers, const std::string& extra = "") {
    return TraceStepsPerS(Simulate(scenario, workers, extra));
  }
  // The outlook of `path`'s capture (analyze -f json).
  rapidjson::Document OutlookOf(const std::string& path) {
    RunResult r = RunTfdiag("analyze -f json " + path);
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
    rapidjson::Document d = Parse(r.out);
    rapidjson::Document o;
    if (d.IsObject() && d.HasMember("outlook")) o.CopyFrom(d["outlook"], o.GetAllocator());
    return o;
  }
  // The predicted point at `workers`, or nullptr.
  static const rapidjson::Value* Point(const rapidjson::Value& o, int workers) {
    for (const auto& p : o["points"].GetArray()) {
      if (p["workers"].GetInt() == workers) return &p;
    }
    return nullptr;
  }

  TempDir dir_;
  int n_ = 0;
};

// A balanced job (the embedding partitioned over every PS, unbounded PS threads in the
// simulator) scales: the predicted steps/s at 2x and 4x are within 15% of the sweep, and no
// saturation is named by 4x, where the sweep's efficiency is still near 100%.
TEST_F(Outlook, BalancedJobScalesAsTheSweepDoes) {
  const int n = 4;
  rapidjson::Document o = OutlookOf(Simulate("balanced", n));
  ASSERT_TRUE(o.IsObject()) << "no outlook";
  ASSERT_STREQ(o["withheld"].GetString(), "");
  EXPECT_EQ(o["captured_workers"].GetInt(), n);
  const double base = TruthAt("balanced", n);
  for (int k : {2, 4}) {
    const rapidjson::Value* p = Point(o, k * n);
    ASSERT_NE(p, nullptr) << k << "x missing";
    const double truth = TruthAt("balanced", k * n);
    const double pred = (*p)["steps_per_s"].GetDouble();
    EXPECT_NEAR(pred, truth, 0.15 * truth) << k << "x";
    EXPECT_GE(truth / base / k, 0.9) << "the sweep itself scales at " << k << "x";
    EXPECT_GE((*p)["efficiency"].GetDouble(), 0.9) << k << "x";
  }
  if (o["saturates_at"].IsObject()) {
    EXPECT_GT(o["saturates_at"]["workers"].GetInt(), 4 * n);
  }
  EXPECT_TRUE(o["fix_first"].IsNull());  // a healthy job: nothing to fix first
  EXPECT_TRUE((*Point(o, 2 * n))["steps_per_s_after_fix"].IsNull());
}

// A hot PS (one unpartitioned embedding on ps:0, served on one thread): the outlook names ps:0's
// CPU and a saturation point the sweep confirms: at three quarters of it the sweep still scales
// at 60% or more, at a quarter beyond it no longer does. 2x is within 15%.
TEST_F(Outlook, HotPsSaturatesWhereTheSweepDoes) {
  const int n = 8;
  rapidjson::Document o = OutlookOf(Simulate("hot-ps", n));
  ASSERT_TRUE(o.IsObject()) << "no outlook";
  ASSERT_STREQ(o["withheld"].GetString(), "");
  ASSERT_TRUE(o["saturates_at"].IsObject()) << "no saturation named";
  EXPECT_STREQ(o["saturates_at"]["task"].GetString(), "ps:0");
  EXPECT_STREQ(o["saturates_at"]["kind"].GetString(), "ps-cpu");
  const int sat = o["saturates_at"]["workers"].GetInt();
  const double base = TruthAt("hot-ps", n);
  auto eff = [&](int w) { return TruthAt("hot-ps", w) / base / (double(w) / n); };
  EXPECT_GE(eff(sat * 3 / 4), 0.6) << "named " << sat << ": the sweep saturates earlier";
  EXPECT_LT(eff(sat * 5 / 4), 0.6) << "named " << sat << ": the sweep scales beyond";
  const double truth2 = TruthAt("hot-ps", 2 * n);
  const rapidjson::Value* p2 = Point(o, 2 * n);
  ASSERT_NE(p2, nullptr);
  EXPECT_NEAR((*p2)["steps_per_s"].GetDouble(), truth2, 0.15 * truth2);
  // Fix first partitions the hot table: the job then scales further than as it is.
  ASSERT_TRUE(o["fix_first"].IsObject());
  EXPECT_STREQ(o["fix_first"]["rule"].GetString(), "hot-ps");
  const rapidjson::Value* p4 = Point(o, 4 * n);
  ASSERT_NE(p4, nullptr);
  EXPECT_GT((*p4)["steps_per_s_after_fix"].GetDouble(), 1.3 * (*p4)["steps_per_s"].GetDouble());
}

// The text report: a "Scaling outlook" section right after the Fix first line, with the verdict
// naming the saturated PS and a row per worker count.
TEST_F(Outlook, TextReportShowsTheOutlookAfterFixFirst) {
  const std::string path = Simulate("hot-ps", 8);
  RunResult r = RunTfdiag("analyze " + path);
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
  const size_t fix = r.out.find("Fix first:"), sec = r.out.find("Scaling outlook");
  const size_t cluster = r.out.find("\nCluster");
  ASSERT_NE(sec, std::string::npos) << r.out;
  EXPECT_TRUE(fix == std::string::npos || fix < sec) << r.out;
  EXPECT_LT(sec, cluster);
  const std::string part = r.out.substr(sec, cluster - sec);
  EXPECT_NE(part.find("ps:0 CPU (1 thread) saturates at"), std::string::npos) << part;
  for (const char* w : {"    8 ", "   16 ", "   32 "}) {
    EXPECT_NE(part.find(w), std::string::npos) << w << "\n" << part;
  }
  EXPECT_NE(part.find("assumed: "), std::string::npos) << part;
}

// No PS, no outlook: a capture of workers alone gives outlook null in JSON and no section.
TEST_F(Outlook, NoPsNoOutlook) {
  const std::string path = dir_.File("local.json");
  // Two steps of one local task: _SOURCE and a MatMul each.
  WriteFile(
      path,
      R"({"traceEvents":[{"ph":"M","name":"process_name","pid":1,"args":{"name":)"
      R"("/job:localhost/replica:0/task:0/device:CPU:0 Compute"}},)"
      R"({"ph":"X","pid":1,"tid":0,"ts":1000,"dur":1,"name":"NoOp","args":{"name":"_SOURCE","op":"NoOp"}},)"
      R"({"ph":"X","pid":1,"tid":0,"ts":1002,"dur":500,"name":"MatMul","args":{"name":"m","op":"MatMul"}},)"
      R"({"ph":"X","pid":1,"tid":0,"ts":2000,"dur":1,"name":"NoOp","args":{"name":"_SOURCE","op":"NoOp"}},)"
      R"({"ph":"X","pid":1,"tid":0,"ts":2002,"dur":500,"name":"MatMul","args":{"name":"m","op":"MatMul"}}]})");
  RunResult r = RunTfdiag("analyze -f json " + path);
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
  rapidjson::Document d = Parse(r.out);
  ASSERT_TRUE(d.IsObject()) << r.out;
  ASSERT_TRUE(d.HasMember("outlook"));
  if (d["outlook"].IsObject()) {  // withheld with the reason, never points
    EXPECT_STRNE(d["outlook"]["withheld"].GetString(), "");
    EXPECT_EQ(d["outlook"]["points"].Size(), 0u);
  }
}

}  // namespace
}  // namespace tfdiag::test
