// XSpace steps and packed ops: a task's group_id spans over all of its planes become one step per
// group, whichever plane (and pack) the events were in; a _SOURCE op anywhere in the file makes
// the steps come from _SOURCE ops instead. XSpaces are written here with the generated classes;
// expected steps are computed from the events written.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "collectors/xplane/xplane.pb.h"
#include "collectors/xplane/xplane_reader.h"
#include "core/capture_builder.h"
#include "tests/test_util.h"
#include "tests/xplane_build.h"

namespace tfdiag {
namespace {

using test::ReadXSpaceFile;
using test::TempDir;

struct Ev {
  std::string op;  // "name:Type"
  int64_t start_us, dur_us;
  int64_t group;  // -1: none
};

// A plane of TF ops (one line) named `plane`, its events `evs`.
void AddPlane(xplane::XSpace* space, const std::string& plane, const std::vector<Ev>& evs) {
  xplane::XPlane* p = space->add_planes();
  p->set_id(space->planes_size());
  p->set_name(plane);
  std::vector<test::XEv> line;
  for (const Ev& e : evs) {
    line.push_back({e.op, e.start_us, e.dur_us, {}});
    if (e.group >= 0) line.back().stats["group_id"] = e.group;
  }
  test::AddXLine(p, 1, "", line);
}

// (start, end) in ns of each step of `task`, in order.
std::vector<std::pair<TimeNs, TimeNs>> StepsOf(const Capture& c, const std::string& task) {
  std::vector<std::pair<TimeNs, TimeNs>> out;
  const uint32_t t = c.FindTask(task);
  for (const StepRow& s : c.TaskSteps(t)) out.emplace_back(s.start, s.end);
  return out;
}

constexpr TimeNs kBase = 1'000'000;  // the line's timestamp_ns
TimeNs Us(int64_t us) { return kBase + us * 1000; }

TEST(XSpaceSteps, AGroupSpansEveryPlaneOfItsTask) {
  TempDir dir;
  xplane::XSpace space;
  // worker:0 has two TF-op planes (CPU and GPU device names); group 1 runs on both, group 2 on
  // the first only, group 3 on the second only. worker:1 has its own group 1.
  AddPlane(&space, "/job:worker/replica:0/task:0/device:CPU:0",
           {{"a/MatMul:MatMul", 0, 10, 1}, {"b/Relu:Relu", 20, 5, 2}});
  AddPlane(&space, "/job:worker/replica:0/task:1/device:CPU:0", {{"a/MatMul:MatMul", 3, 4, 1}});
  AddPlane(&space, "/job:worker/replica:0/task:0/device:GPU:0",
           {{"c/Conv:Conv2D", 8, 40, 1}, {"d/Add:AddV2", 60, 2, 3}});
  const Capture c = ReadXSpaceFile(space, dir.File("w.xplane.pb"));
  EXPECT_TRUE(c.ops.packed());
  EXPECT_EQ(c.ops.size(), 5u);
  EXPECT_EQ(c.stats.marked_step_tasks, 2);
  const std::vector<std::pair<TimeNs, TimeNs>> w0 = {
      {Us(0), Us(48)}, {Us(20), Us(25)}, {Us(60), Us(62)}};
  EXPECT_EQ(StepsOf(c, "worker:0"), w0);
  const std::vector<std::pair<TimeNs, TimeNs>> w1 = {{Us(3), Us(7)}};
  EXPECT_EQ(StepsOf(c, "worker:1"), w1);
  // The ops read back from the packed store as written.
  std::multiset<std::pair<TimeNs, TimeNs>> spans;
  c.ops.ForEach([&](const OpRow& op) { spans.emplace(op.start, op.end()); });
  const std::multiset<std::pair<TimeNs, TimeNs>> want = {
      {Us(0), Us(10)}, {Us(20), Us(25)}, {Us(3), Us(7)}, {Us(8), Us(48)}, {Us(60), Us(62)}};
  EXPECT_EQ(spans, want);
}

TEST(XSpaceSteps, ASourceOpInALaterPlaneTakesTheStepsBack) {
  TempDir dir;
  xplane::XSpace space;
  AddPlane(&space, "/job:worker/replica:0/task:0/device:CPU:0",
           {{"a/MatMul:MatMul", 0, 10, 1}, {"a/MatMul:MatMul", 20, 10, 2}});
  // worker:1's plane starts each step with a _SOURCE op: the file's steps are its _SOURCE ops.
  AddPlane(&space, "/job:worker/replica:0/task:1/device:CPU:0",
           {{"_SOURCE:NoOp", 0, 1, 1}, {"a/MatMul:MatMul", 1, 5, 1}, {"_SOURCE:NoOp", 30, 1, 2}});
  const Capture c = ReadXSpaceFile(space, dir.File("w.xplane.pb"));
  EXPECT_EQ(c.stats.marked_step_tasks, 0);
  // worker:0 runs no _SOURCE: one step over its ops; worker:1 one step per _SOURCE.
  const std::vector<std::pair<TimeNs, TimeNs>> w0 = {{Us(0), Us(30)}};
  EXPECT_EQ(StepsOf(c, "worker:0"), w0);
  const std::vector<std::pair<TimeNs, TimeNs>> w1 = {{Us(0), Us(6)}, {Us(30), Us(31)}};
  EXPECT_EQ(StepsOf(c, "worker:1"), w1);
}

// Tasks with group_id steps keep those, the others get their recovered steps, in task order: the
// tasks' ranges of Capture::steps follow one another and cover it.
TEST(XSpaceSteps, MarkedAndRecoveredTasksShareTheStepTable) {
  TempDir dir;
  xplane::XSpace space;
  AddPlane(&space, "/job:worker/replica:0/task:1/device:CPU:0",
           {{"a/MatMul:MatMul", 40, 10, 7}, {"a/MatMul:MatMul", 0, 10, 6}});
  // No group_id stats: one step over its ops.
  AddPlane(&space, "/job:ps/replica:0/task:0/device:CPU:0",
           {{"v/Gather:GatherV2", 5, 3, -1}, {"v/Apply:ApplyAdam", 44, 4, -1}});
  AddPlane(
      &space, "/job:worker/replica:0/task:0/device:CPU:0",
      {{"a/MatMul:MatMul", 1, 2, 1}, {"b/Relu:Relu", 30, 5, 2}, {"a/MatMul:MatMul", 50, 9, 3}});
  const Capture c = ReadXSpaceFile(space, dir.File("w.xplane.pb"));
  EXPECT_EQ(c.stats.marked_step_tasks, 2);
  const std::vector<std::pair<TimeNs, TimeNs>> ps = {{Us(5), Us(48)}};
  EXPECT_EQ(StepsOf(c, "ps:0"), ps);
  const std::vector<std::pair<TimeNs, TimeNs>> w0 = {
      {Us(1), Us(3)}, {Us(30), Us(35)}, {Us(50), Us(59)}};
  EXPECT_EQ(StepsOf(c, "worker:0"), w0);
  const std::vector<std::pair<TimeNs, TimeNs>> w1 = {{Us(0), Us(10)}, {Us(40), Us(50)}};
  EXPECT_EQ(StepsOf(c, "worker:1"), w1);
  ASSERT_EQ(c.task_steps.size(), c.tasks.size());
  uint32_t next = 0;
  for (const auto& [b, e] : c.task_steps) {
    EXPECT_EQ(b, next);
    next = e;
  }
  EXPECT_EQ(next, c.steps.size());
  EXPECT_EQ(c.steps.size(), 6u);
}

// More ops on one plane than the reader holds plain (it packs every 2^19): the device's parts are
// merged in time order, and every op is read back.
TEST(XSpaceSteps, APlaneLargerThanOnePackReadsBackInOrder) {
  TempDir dir;
  xplane::XSpace space;
  std::vector<Ev> evs;
  constexpr int kOps = 600'000;
  for (int i = 0; i < kOps; ++i) {
    // Two interleaved lanes' worth of times in one line, out of order across packs.
    const int64_t t = i % 2 == 0 ? i : kOps * 2 - i;
    evs.push_back({i % 3 == 0 ? "x/Mul:Mul" : "y/Add:AddV2", t, 1 + i % 7, -1});
  }
  AddPlane(&space, "/job:ps/replica:0/task:0/device:CPU:0", evs);
  const Capture c = ReadXSpaceFile(space, dir.File("ps.xplane.pb"));
  ASSERT_EQ(c.ops.size(), static_cast<size_t>(kOps));
  TimeNs prev = INT64_MIN;
  int64_t n = 0, total_dur = 0, want_dur = 0;
  c.ops.ForEach([&](const OpRow& op) {
    EXPECT_LE(prev, op.start);
    prev = op.start;
    total_dur += op.dur();
    ++n;
  });
  for (int i = 0; i < kOps; ++i) want_dur += (1 + i % 7) * 1000;
  EXPECT_EQ(n, kOps);
  EXPECT_EQ(total_dur, want_dur);
  EXPECT_EQ(c.start, Us(0));
}

}  // namespace
}  // namespace tfdiag
