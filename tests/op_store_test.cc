// OpStore (core/op_store.h): packed ops read back exactly as they were written, by index and in
// ranges, and CaptureBuilder::PackOps gives the Capture a plain build gives. Expectations come
// from the rows written (kept aside as plain vectors), never from the store itself.
#include "core/op_store.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "analyzers/task_stats.h"
#include "core/capture_builder.h"
#include "core/capture_finish.h"

namespace tfdiag {
namespace {

bool SameRow(const OpRow& a, const OpRow& b) {
  return a.start == b.start && a.dur() == b.dur() && a.node == b.node && a.device == b.device &&
         a.lane == b.lane;
}

std::string Show(const OpRow& r) {
  return "start " + std::to_string(r.start) + " dur " + std::to_string(r.dur()) + " node " +
         std::to_string(r.node) + " device " + std::to_string(r.device) + " lane " +
         std::to_string(r.lane);
}

// Rows for one device, sorted as Capture::ops: a run of whole-microsecond ops (TF1 timelines),
// then nanosecond ones with nested and overlapping ops, lane changes, epoch-sized starts, the
// longest duration kept, and large node ids.
std::vector<OpRow> DeviceRows(std::mt19937_64& rng, uint16_t device, size_t n) {
  std::vector<OpRow> rows(n);
  TimeNs t = 1'600'000'000'000'000'000;  // 2020 in ns since the epoch
  for (size_t i = 0; i < n; ++i) {
    OpRow& r = rows[i];
    const bool micros = i < n / 3;
    const TimeNs gap = static_cast<TimeNs>(rng() % 50'000);
    t += micros ? gap / 1000 * 1000 : gap;
    r.start = t;
    TimeNs dur = static_cast<TimeNs>(rng() % 200'000);
    if (micros) dur = dur / 1000 * 1000;
    if (i % 997 == 5) dur = OpRow::kMaxDur;
    r.set_dur(dur);
    r.node =
        rng() % 4 == 0 ? static_cast<uint32_t>(rng() % 5'000'000) : static_cast<uint32_t>(i % 70);
    r.device = device;
    r.lane = rng() % 5 == 0 ? static_cast<uint16_t>(rng() % 65536) : 0;
  }
  std::sort(rows.begin(), rows.end(), capture_finish::OpBefore);
  return rows;
}

TEST(OpStore, PackedRowsReadBackExactlyByIndexAndInRanges) {
  std::mt19937_64 rng(17);
  // Devices of 0 and 1 row, a block less, equal and more by one, two blocks and one more, and
  // thousands of rows: block edges and empty devices.
  const std::vector<size_t> sizes = {1000,           0, 1,     kPackBlock - 1,    kPackBlock,
                                     kPackBlock + 1, 0, 20000, 2 * kPackBlock + 1};
  std::vector<OpRow> expect;
  std::vector<PackedOps> devices;
  for (size_t d = 0; d < sizes.size(); ++d) {
    std::vector<OpRow> rows = DeviceRows(rng, static_cast<uint16_t>(d), sizes[d]);
    PackedOps p;
    p.Append(rows.data(), rows.size());
    EXPECT_EQ(p.count, rows.size());
    devices.push_back(std::move(p));
    expect.insert(expect.end(), rows.begin(), rows.end());
  }
  OpStore store;
  store.SetPacked(std::move(devices), {});
  ASSERT_TRUE(store.packed());
  ASSERT_EQ(store.size(), expect.size());
  for (size_t i = 0; i < expect.size(); ++i) {
    ASSERT_TRUE(SameRow(store[i], expect[i]))
        << i << ": " << Show(store[i]) << " vs " << Show(expect[i]);
  }
  // Ranges starting and ending anywhere, across blocks and devices, with the index passed.
  for (int k = 0; k < 200; ++k) {
    size_t a = rng() % (expect.size() + 1), b = rng() % (expect.size() + 1);
    if (a > b) std::swap(a, b);
    size_t next = a;
    store.ForEach(a, b, [&](const OpRow& op, uint32_t i) {
      ASSERT_EQ(i, next);
      ASSERT_TRUE(SameRow(op, expect[i])) << i;
      ++next;
    });
    EXPECT_EQ(next, b);
  }
  // A walk stops when fn returns false.
  size_t seen = 0;
  store.ForEach([&](const OpRow&) { return ++seen < 100; });
  EXPECT_EQ(seen, 100u);
  // Packed, even these rows (random lanes and node ids, mostly nanosecond times) take less than
  // the plain 24 bytes each.
  EXPECT_LT(store.MemoryBytes(), expect.size() * sizeof(OpRow));
  store.Unpack();
  ASSERT_FALSE(store.packed());
  ASSERT_EQ(store.plain().size(), expect.size());
  for (size_t i = 0; i < expect.size(); ++i) ASSERT_TRUE(SameRow(store.plain()[i], expect[i])) << i;
}

TEST(OpStore, NodeIdsAreMappedUnlessAlreadyMapped) {
  std::vector<OpRow> rows(3);
  for (uint32_t i = 0; i < 3; ++i) {
    rows[i].start = 1000 * i;
    rows[i].set_dur(10);
    rows[i].node = i;
    rows[i].device = 0;
    rows[i].lane = 0;
  }
  PackedOps builder_ids, mapped;
  builder_ids.Append(rows.data(), rows.size());
  mapped.Append(rows.data(), rows.size());
  mapped.nodes_mapped = true;
  std::vector<PackedOps> devices;
  devices.push_back(std::move(builder_ids));
  devices.push_back(std::move(mapped));
  OpStore store;
  store.SetPacked(std::move(devices), {7, 5, 6});
  const std::vector<OpRow> got = store.Rows();
  ASSERT_EQ(got.size(), 6u);
  EXPECT_EQ(got[0].node, 7u);
  EXPECT_EQ(got[1].node, 5u);
  EXPECT_EQ(got[2].node, 6u);
  for (size_t i = 3; i < 6; ++i) {
    EXPECT_EQ(got[i].node, i - 3);
    EXPECT_EQ(got[i].device, 1u);
  }
}

// The same ops added to two builders, one packing at random points (a device's ops split over
// several packs, rows left plain at the end): the Captures are the same, row for row, with the
// same nodes, steps, edges and task figures. Ops tie on start and duration with different nodes
// (ordered by node name, not by the order nodes were first seen), and partition inputs make
// cross-task edges.
enum class Pack { kNone, kOnce, kOften };

// Adds the same 6,000 ops (seeded) to a builder and finishes it. kOnce: packed after the last op
// (one part per device, taken as it is); kOften: packed at random points (a device's ops split
// over several parts, merged by Finish) with the last op left plain.
Capture BuildOps(Pack mode, int threads, int* packs) {
  const bool pack = mode == Pack::kOften;
  std::mt19937_64 rng(5);
  CaptureBuilder b;
  auto dev = [&](const std::string& job, int task) {
    StatusOr<DeviceName> d = ParseDeviceName(
        "/job:" + job + "/replica:0/task:" + std::to_string(task) + "/device:CPU:0");
    EXPECT_TRUE(d.ok());
    return b.AddDevice(*d);
  };
  const std::vector<std::string> names = {"zeta/read", "alpha/MatMul", "_SOURCE",
                                          "w/read",    "grad/Apply",   "beta"};
  for (int i = 0; i < 6000; ++i) {
    const int task = static_cast<int>(rng() % 3);
    const std::string job = task == 0 ? "ps" : "worker";
    const TimeNs start = static_cast<TimeNs>(rng() % 400) * 1000;  // many ties
    const TimeNs dur = static_cast<TimeNs>(rng() % 3) * 500;
    const std::string& name = names[rng() % names.size()];
    const bool consumer = job == "worker" && rng() % 4 == 0;
    const uint16_t lane = static_cast<uint16_t>(rng() % 3);
    std::vector<StrId> in;
    if (consumer) in.push_back(b.Intern("w/read_S7"));
    b.AddOp(start, dur, dev(job, task), lane, b.Intern(name), b.Intern(consumer ? "MatMul" : "Op"),
            in.data(), in.size());
    const bool pack_here = rng() % 700 == 0;  // drawn in both builds: the same ops follow
    if (pack && pack_here) {
      b.PackOps();
      ++*packs;
    }
  }
  if (mode == Pack::kOften) b.PackOps();
  b.AddOp(5, 1, dev("worker", 1), 0, b.Intern("late"), b.Intern("Op"), nullptr, 0);
  if (mode == Pack::kOnce) b.PackOps();
  return b.Finish(threads);
}

// The same ops built plain and packed: the Captures are the same, row for row, with the same
// nodes, steps, edges and task figures. Ops tie on start and duration with different nodes
// (ordered by node name, not by the order nodes were first seen), and partition inputs make
// cross-task edges.
TEST(OpStore, PackOpsGivesTheCaptureOfAPlainBuild) {
  for (const auto& [mode, threads] : {std::pair{Pack::kOnce, 1}, std::pair{Pack::kOften, 1},
                                      std::pair{Pack::kOnce, 2}, std::pair{Pack::kOften, 2}}) {
    SCOPED_TRACE(mode == Pack::kOnce ? "packed once" : "packed often");
    int packs = 0;
    const Capture ca = BuildOps(Pack::kNone, threads, &packs);
    const Capture cb = BuildOps(mode, threads, &packs);
    if (mode == Pack::kOften) {
      ASSERT_GT(packs, 3);
    }
    ASSERT_FALSE(ca.ops.packed());
    ASSERT_TRUE(cb.ops.packed());
    const std::vector<OpRow> ra = ca.ops.Rows(), rb = cb.ops.Rows();
    ASSERT_EQ(ra.size(), 6001u);
    ASSERT_EQ(ra.size(), rb.size());
    for (size_t i = 0; i < ra.size(); ++i) {
      ASSERT_TRUE(SameRow(ra[i], rb[i])) << i << ": " << Show(ra[i]) << " vs " << Show(rb[i]);
    }
    ASSERT_EQ(ca.nodes.size(), cb.nodes.size());
    EXPECT_EQ(ca.device_ops, cb.device_ops);
    ASSERT_EQ(ca.steps.size(), cb.steps.size());
    ASSERT_GT(ca.steps.size(), 3u);
    for (size_t i = 0; i < ca.steps.size(); ++i) {
      EXPECT_EQ(ca.steps[i].start, cb.steps[i].start);
      EXPECT_EQ(ca.steps[i].end, cb.steps[i].end);
    }
    ASSERT_FALSE(ca.edges.empty());
    ASSERT_EQ(ca.edges.size(), cb.edges.size());
    for (size_t i = 0; i < ca.edges.size(); ++i) EXPECT_EQ(ca.edges[i].count, cb.edges[i].count);
    EXPECT_EQ(ca.start, cb.start);
    EXPECT_EQ(ca.end, cb.end);
    const TaskStatsTable ta = ComputeTaskStats(ca, threads), tb = ComputeTaskStats(cb, threads);
    ASSERT_EQ(ta.tasks.size(), tb.tasks.size());
    for (size_t t = 0; t < ta.tasks.size(); ++t) {
      EXPECT_EQ(ta.tasks[t].busy_ns, tb.tasks[t].busy_ns);
      EXPECT_EQ(ta.tasks[t].op_time_ns, tb.tasks[t].op_time_ns);
      EXPECT_EQ(ta.tasks[t].variables.size(), tb.tasks[t].variables.size());
    }
  }
}

}  // namespace
}  // namespace tfdiag
