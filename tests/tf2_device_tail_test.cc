// XProf's GPU step time on steps whose device work outlives the host step (issue 38, "GPU steps
// with long device tails"): `simulate --tf2-steps --device-tail MS` gives each worker host a GPU
// tracer plane whose last kernel of every step ends MS after the host's step marker, with the
// derived "Steps" row. XProf times a step (TF 2.4 tensorflow/core/profiler/utils/event_span.cc,
// StepDetails::StepTime) as its longest device step marker unless the longest host marker holds
// it. The expected step times are computed here from the files with the wire reader
// (tests/wire_reader.h), not with tfdiag's readers, and must differ from both the host marker's
// span and the host and device spans joined (the rule before issue 38), so the test can fail.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tests/test_util.h"
#include "tests/wire_reader.h"

namespace tfdiag::test {
namespace {

using Span = std::pair<int64_t, int64_t>;

struct Expected {
  std::vector<int64_t> xprof, host_only, joined;  // step times (ns) in step order
  int tails = 0;                                  // steps whose device work ends after the host's
};

// XProf's rule over one host file, from its wire bytes.
Expected FromWire(const std::string& path) {
  std::map<int64_t, Span> host, device;  // group -> longest host marker, longest Steps event
  auto longest = [](std::map<int64_t, Span>* m, int64_t g, Span s) {
    auto [it, fresh] = m->emplace(g, s);
    if (!fresh && s.second - s.first > it->second.second - it->second.first) it->second = s;
  };
  for (const WPlane& p : WalkPlanes(ReadFile(path))) {
    for (const WEvent& e : p.events) {
      auto g = e.ints.find("group_id");
      if (g == e.ints.end()) continue;
      if (p.name == "/host:CPU" && e.ints.count("_r") > 0)
        longest(&host, g->second, {e.start_ns, e.end_ns});
      if (p.name.rfind("/device:GPU", 0) == 0 && e.line == "Steps") {
        longest(&device, g->second, {e.start_ns, e.end_ns});
      }
    }
  }
  Expected x;
  for (const auto& [g, d] : device) {
    const Span h = host.at(g);
    const Span step = h.first <= d.first && d.second <= h.second ? h : d;
    x.xprof.push_back(step.second - step.first);
    x.host_only.push_back(h.second - h.first);
    x.joined.push_back(std::max(h.second, d.second) - std::min(h.first, d.first));
    x.tails += d.second > h.second;
  }
  return x;
}

std::vector<int64_t> StepTimes(const Capture& c, const std::string& task) {
  std::vector<int64_t> out;
  for (uint32_t t = 0; t < c.tasks.size(); ++t) {
    if (c.TaskLabelOf(t) != task) continue;
    for (const auto& s : c.TaskSteps(t)) out.push_back(s.end - s.start);
  }
  return out;
}

TEST(Tf2DeviceTail, StepTimeIsXprofsOnGpuStepsWithLongDeviceTails) {
  TempDir dir;
  const std::string logs = dir.File("logs"), json = dir.File("json");
  const std::string common =
      "simulate balanced --ps 1 --workers 2 --steps 4 --tf2-steps --session-clock "
      "--device-tail 7 ";
  ASSERT_EQ(RunTfdiag(common + "--format xplane -o '" + logs + "'").exit_code, 0);
  ASSERT_EQ(RunTfdiag(common + "--format trace-json -o '" + json + "'").exit_code, 0);
  const std::string run = logs + "/plugins/profile/2020_09_13_12_26_40/";
  const Capture from_xspace = LoadOrDie({logs});
  const Capture from_json = LoadOrDie({json});
  for (const std::string w : {"worker-0", "worker-1"}) {
    const Expected x = FromWire(run + w + ".xplane.pb");
    ASSERT_EQ(x.xprof.size(), 4u) << w;
    EXPECT_EQ(x.tails, 4) << w << ": every step's last kernel outlives its host marker";
    EXPECT_NE(x.xprof, x.host_only);
    EXPECT_NE(x.xprof, x.joined);
    const std::string task = "worker:" + w.substr(7);
    EXPECT_EQ(StepTimes(from_xspace, task), x.xprof) << task << " (XSpace)";
    EXPECT_EQ(StepTimes(from_json, task), x.xprof) << task << " (trace JSON)";
  }
}

TEST(Tf2DeviceTail, NeedsTf2StepsAndALogDirectory) {
  const RunResult r = RunTfdiag("simulate balanced --format tf1 --device-tail 5 -o /dev/null");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--device-tail"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace tfdiag::test
