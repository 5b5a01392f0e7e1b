// The simulator's PS service (samples/simulator.cc): a PS with N threads (Config::ps_threads,
// `simulate --ps-threads N`, hot-ps 1) runs at most N ops at once and serves the ops it receives
// in arrival order, a free thread never idling while an op is queued, as TF's PS runs incoming
// requests on its inter-op pool. Read straight from the trace JSON (ps:0's ops, the DataFlow
// arrow from each worker's IteratorGetNext to its embedding gather on ps:0), not through tfdiag's
// readers. Before, the PS served an op in the first gap behind intervals that steps laid out
// earlier had reserved: ps:0 sat idle while 148 of 160 gathers of a 10-step hot-ps job waited.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

struct PsTrace {
  std::vector<std::pair<int64_t, int64_t>> ops;  // ps:0's ops, [start, end) us
  // Per gather on ps:0: (its worker's IteratorGetNext end, the gather's start), us.
  std::vector<std::pair<int64_t, int64_t>> gathers;
};

// Reads a TF1 timeline (integer microseconds) of the simulator.
PsTrace ReadPs0(const std::string& path) {
  PsTrace t;
  rapidjson::Document d;
  d.Parse(ReadFile(path).c_str());
  EXPECT_FALSE(d.HasParseError()) << path;
  if (d.HasParseError()) return t;
  int64_t ps0 = -1;
  for (const auto& e : d["traceEvents"].GetArray()) {
    if (std::string(e["ph"].GetString()) != "M" || !e.HasMember("args")) continue;
    if (std::string(e["args"]["name"].GetString()) ==
        "/job:ps/replica:0/task:0/device:CPU:0 Compute")
      ps0 = e["pid"].GetInt64();
  }
  EXPECT_GE(ps0, 0) << path;
  std::map<int64_t, int64_t> flow_start;              // arrow id -> its producer's end
  std::vector<std::pair<int64_t, int64_t>> flow_end;  // (arrow id, consumer start) on ps:0
  std::map<int64_t, bool> gather_at;                  // ps:0 gather starts
  for (const auto& e : d["traceEvents"].GetArray()) {
    const std::string ph = e["ph"].GetString();
    if (ph == "X" && e["pid"].GetInt64() == ps0) {
      const int64_t ts = e["ts"].GetInt64();
      t.ops.emplace_back(ts, ts + e["dur"].GetInt64());
      if (std::string(e["args"]["op"].GetString()) == "GatherV2") gather_at[ts] = true;
    } else if (ph == "s") {
      flow_start[e["id"].GetInt64()] = e["ts"].GetInt64();
    } else if (ph == "t" && e["pid"].GetInt64() == ps0) {
      flow_end.emplace_back(e["id"].GetInt64(), e["ts"].GetInt64());
    }
  }
  for (const auto& [id, start] : flow_end) {
    if (gather_at.count(start) && flow_start.count(id))
      t.gathers.emplace_back(flow_start[id], start);
  }
  return t;
}

// How many of ps:0's ops run at each change point: (time, count from then on).
std::vector<std::pair<int64_t, int>> Running(const PsTrace& t) {
  std::vector<std::pair<int64_t, int>> delta;
  for (const auto& [s, e] : t.ops) {
    delta.emplace_back(s, 1);
    delta.emplace_back(e, -1);
  }
  std::sort(delta.begin(), delta.end());  // an end before a start at the same time
  std::vector<std::pair<int64_t, int>> out;
  int n = 0;
  for (const auto& [at, d] : delta) {
    n += d;
    if (!out.empty() && out.back().first == at) {
      out.back().second = n;
    } else {
      out.emplace_back(at, n);
    }
  }
  return out;
}

// Time in [a, b) during which fewer than `threads` of ps:0's ops run.
int64_t IdleThreadTime(const std::vector<std::pair<int64_t, int>>& run, int64_t a, int64_t b,
                       int threads) {
  int64_t idle = 0, at = a;
  int n = 0;
  for (const auto& [t, count] : run) {
    if (t <= a) {
      n = count;
      continue;
    }
    if (t >= b) break;
    if (n < threads) idle += t - at;
    at = t;
    n = count;
  }
  if (n < threads) idle += b - at;
  return idle;
}

int MaxRunning(const std::vector<std::pair<int64_t, int>>& run) {
  int m = 0;
  for (const auto& [t, n] : run) m = std::max(m, n);
  return m;
}

// hot-ps: ps:0 serves on one thread. From its worker's IteratorGetNext end the gather waits for
// the ids' RecvTensor (15 us +-30% later, on ps:0 too) and then itself (1 us +-30% after it): so
// from 20 us after the input's end until the gather starts, ps:0 is busy but for that 1.3 us
// and a microsecond of rounding at each end (TF1 timestamps are whole microseconds).
TEST(SimulatorPsService, OneThreadIsWorkConservingWhileGathersWait) {
  TempDir dir;
  const std::string path = dir.File("hot.json");
  ASSERT_EQ(RunTfdiag("simulate hot-ps --steps 10 --seed 7 -o " + path).exit_code, 0);
  const PsTrace t = ReadPs0(path);
  const auto run = Running(t);
  EXPECT_EQ(MaxRunning(run), 1);
  ASSERT_EQ(t.gathers.size(), 160u);  // 16 workers x 10 steps
  int waited = 0, idle = 0;
  for (const auto& [input_end, start] : t.gathers) {
    if (start - input_end > 1000) ++waited;
    if (start - 2 > input_end + 20 && IdleThreadTime(run, input_end + 20, start - 2, 1) > 4) ++idle;
  }
  EXPECT_GT(waited, 80) << "the hot PS queues its gathers";  // 127 of 160 wait over 1 ms
  EXPECT_EQ(idle, 0) << "ps:0 idled while a gather waited";
}

// --ps-threads: at most N ops at once on a PS, and a PS that queues uses all N.
TEST(SimulatorPsService, ThreadsBoundTheOpsAPsRunsAtOnce) {
  TempDir dir;
  for (int threads : {1, 2, 4}) {
    const std::string path = dir.File("hot-" + std::to_string(threads) + ".json");
    const RunResult r = RunTfdiag("simulate hot-ps --steps 4 --seed 3 --workers 48 --ps-threads " +
                                  std::to_string(threads) + " -o " + path);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(MaxRunning(Running(ReadPs0(path))), threads) << threads;
  }
  // 0: unbounded, as every other scenario's PS (their events are as before the PS had threads).
  const std::string path = dir.File("hot-0.json");
  ASSERT_EQ(RunTfdiag("simulate hot-ps --steps 4 --seed 3 --workers 48 --ps-threads 0 -o " + path)
                .exit_code,
            0);
  EXPECT_GT(MaxRunning(Running(ReadPs0(path))), 4);
  EXPECT_EQ(RunTfdiag("simulate hot-ps --ps-threads 257 -o " + dir.File("x.json")).exit_code, 2);
  EXPECT_EQ(RunTfdiag("simulate hot-ps --ps-threads -2 -o " + dir.File("x.json")).exit_code, 2);
}

}  // namespace
}  // namespace tfdiag::test
