// Issue 32 item 11 (xplane reader, op store, task stats, reports): values from inputs never wrap
// a signed 64-bit sum (undefined behaviour, found by UBSan; seen as "span -9223372036854773760
// ns" and negative step times). An XLine timestamp outside [0, 2^62) ns is rejected with the
// byte offset and the value; the op store keeps any int64 times exactly; task-table sums and
// spans saturate at INT64_MAX instead of turning negative.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <limits>
#include <string>

#include "analyzers/task_stats.h"
#include "collectors/xplane/xplane.pb.h"
#include "collectors/xplane/xplane_reader.h"
#include "core/capture_builder.h"
#include "core/device_name.h"
#include "core/saturating.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

TEST(Saturating, AddAndSubClampInsteadOfWrapping) {
  EXPECT_EQ(SatAdd(kMax - 1, 5), kMax);
  EXPECT_EQ(SatAdd(kMin + 1, -5), kMin);
  EXPECT_EQ(SatAdd(40, 2), 42);
  EXPECT_EQ(SatSub(kMax, -1), kMax);
  EXPECT_EQ(SatSub(kMin, 1), kMin);
  EXPECT_EQ(SatSub(5, 7), -2);
  int64_t sum = kMax - 10;
  SatAccumulate(&sum, 20);
  EXPECT_EQ(sum, kMax);
}

// An XSpace with one TF-op plane of worker:0 whose line starts at `line_ts` ns.
std::string XSpaceWithLineAt(int64_t line_ts) {
  xplane::XSpace space;
  xplane::XPlane* p = space.add_planes();
  p->set_id(1);
  p->set_name("/job:worker/replica:0/task:0/device:CPU:0");
  (*p->mutable_event_metadata())[1].set_id(1);
  (*p->mutable_event_metadata())[1].set_name("a/MatMul:MatMul");
  xplane::XLine* line = p->add_lines();
  line->set_id(1);
  line->set_name("tf ops");
  line->set_timestamp_ns(line_ts);
  xplane::XEvent* e = line->add_events();
  e->set_metadata_id(1);
  e->set_offset_ps(5'000'000);
  e->set_duration_ps(2'000'000'000'000'000'000);  // 2e6 s
  std::string bytes;
  EXPECT_TRUE(space.SerializeToString(&bytes));
  return bytes;
}

TEST(OverflowXSpace, LineTimestampsOutsideTheRangeAreRejectedWithTheByteOffset) {
  TempDir dir;
  for (int64_t ts : {kMax - 2048, kMin + 2048, int64_t{-1}, int64_t{1} << 62}) {
    const std::string path = dir.File("w.xplane.pb");
    const std::string bytes = XSpaceWithLineAt(ts);
    std::ofstream(path, std::ios::binary) << bytes;
    CaptureBuilder b;
    const Status s = ReadXSpace(path, &b);
    ASSERT_FALSE(s.ok()) << "timestamp_ns " << ts << " accepted";
    const std::string m(s.message());
    EXPECT_NE(m.find(path + ": byte "), std::string::npos) << m;
    EXPECT_NE(m.find("timestamp_ns (ns since the epoch) in [0, 2^62), got " + std::to_string(ts)),
              std::string::npos)
        << m;
    // The offset is where the field's value starts in the file: the varint of `ts` is there.
    const size_t at = std::stoul(m.substr(m.find(": byte ") + 7));
    ASSERT_LT(at, bytes.size());
    EXPECT_EQ(static_cast<uint8_t>(bytes[at - 1]), (3u << 3) | 0) << "the byte before is the tag";
  }
  // In range, the op is read, and its end does not wrap.
  const std::string path = dir.File("ok.xplane.pb");
  std::ofstream(path, std::ios::binary) << XSpaceWithLineAt((int64_t{1} << 62) - 1);
  CaptureBuilder b;
  ASSERT_TRUE(ReadXSpace(path, &b).ok());
  const Capture c = b.Finish();
  EXPECT_GT(c.end, c.start);
}

TEST(OverflowXSpace, AnalyzeOfAFarTimestampIsExit2NotANegativeSpan) {
  TempDir dir;
  const std::string path = dir.File("w.xplane.pb");
  std::ofstream(path, std::ios::binary) << XSpaceWithLineAt(kMax - 2048);
  RunResult r = RunTfdiag("analyze --no-progress '" + path + "'");
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(r.out.find("span     -"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("timestamp_ns"), std::string::npos) << r.err;
}

// Ops whose starts are further apart than INT64_MAX (a capture mixing inputs): the packed store
// gives back every start and end exactly.
TEST(OverflowOpStore, TimesFurtherApartThanInt64MaxReadBackExactly) {
  CaptureBuilder b;
  StatusOr<DeviceName> dn = ParseDeviceName("/job:worker/replica:0/task:0/device:CPU:0");
  ASSERT_TRUE(dn.ok());
  const uint32_t dev = b.AddDevice(*dn);
  const StrId name = b.Intern("a/MatMul"), type = b.Intern("MatMul");
  const std::vector<TimeNs> starts = {kMin / 2 - 7001, kMax / 2 + 3000, kMax / 2 + 4000};
  for (TimeNs s : starts) b.AddOp(s, 1000, dev, 0, name, type, nullptr, 0);
  b.PackOps();
  const Capture c = b.Finish();
  std::vector<TimeNs> got;
  c.ops.ForEach([&](const OpRow& op) {
    got.push_back(op.start);
    EXPECT_EQ(op.dur(), 1000);
  });
  EXPECT_EQ(got, starts);
}

// Steps whose lengths sum past INT64_MAX: the mean saturates instead of turning negative.
TEST(OverflowTaskStats, StepSumsAndSpansSaturate) {
  CaptureBuilder b;
  StatusOr<DeviceName> dn = ParseDeviceName("/job:worker/replica:0/task:0/device:CPU:0");
  ASSERT_TRUE(dn.ok());
  const uint32_t dev = b.AddDevice(*dn);
  const uint32_t task = b.AddTask("worker", 0, 0);
  const StrId name = b.Intern("a/MatMul"), type = b.Intern("MatMul");
  b.AddOp(kMin / 2 - 1000, 1000, dev, 0, name, type, nullptr, 0);
  b.AddOp(kMax / 2 + 1000, 1000, dev, 0, name, type, nullptr, 0);
  b.AddStep(task, 0, kMax / 2 + 1000);
  b.AddStep(task, 1, kMax / 2 + 1000);
  const Capture c = b.Finish();
  const TaskStatsTable t = ComputeTaskStats(c);
  EXPECT_EQ(t.span_ns, kMax) << "saturated, not negative";
  const TaskStats* w = t.Find("worker:0");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->steps, 2);
  EXPECT_GT(w->step_mean_ns, 0);
  EXPECT_EQ(w->step_mean_ns, kMax / 2);
  EXPECT_GE(w->busy_ns, 0);
}

}  // namespace
}  // namespace tfdiag::test
