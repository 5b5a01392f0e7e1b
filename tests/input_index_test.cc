// The one resolution of `<tensor>_S<N>` inputs (core/partition_inputs.h: InputIndex,
// ResolveOpInputs), which the capture's edges table and the step graph share, and the one device
// cursor (core/device_cursor.h) the step graph and the replay walk devices with. Captures are
// built through the builder API; expectations come from the rows added.
#include <gtest/gtest.h>

#include <tuple>
#include <vector>

#include "analyzers/step_graph.h"
#include "core/capture_builder.h"
#include "core/device_cursor.h"
#include "core/partition_inputs.h"

namespace tfdiag {
namespace {

namespace cf = capture_finish;

uint32_t Dev(CaptureBuilder& b, const std::string& job, int task) {
  StatusOr<DeviceName> d =
      ParseDeviceName("/job:" + job + "/replica:0/task:" + std::to_string(task) + "/device:CPU:0");
  EXPECT_TRUE(d.ok()) << job << task;
  return b.AddDevice(*d);
}

void Op(CaptureBuilder& b, uint32_t dev, TimeNs start, TimeNs dur, const std::string& name,
        const std::string& type, const std::vector<std::string>& inputs = {}) {
  std::vector<StrId> ids;
  for (const std::string& in : inputs) ids.push_back(b.Intern(in));
  b.AddOp(start, dur, dev, 0, b.Intern(name), b.Intern(type), ids.data(), ids.size());
}

// A variable partitioned over two PS (fixed_size_partitioner(2)): ps:0 reads emb/part_0 (done at
// 40 ns), ps:1 reads emb/part_1 (done at 70 ns). worker:0's one step (its _SOURCE at 0) gathers
// both through partition Recvs, `emb/part_0/read_S1` and `emb/part_1/read_S3`, at 100 ns, and a
// second op of the step names `emb/part_1/read_S3` again (the same Recv: one transfer).
Capture PartitionedJob() {
  CaptureBuilder b;
  const uint32_t ps0 = Dev(b, "ps", 0), ps1 = Dev(b, "ps", 1), w0 = Dev(b, "worker", 0);
  Op(b, ps0, 30, 10, "emb/part_0/read", "Identity");
  Op(b, ps1, 50, 20, "emb/part_1/read", "Identity");
  Op(b, w0, 0, 1, "_SOURCE", "NoOp");
  Op(b, w0, 100, 10, "emb/lookup", "GatherV2", {"emb/part_0/read_S1", "emb/part_1/read_S3", "ids"});
  Op(b, w0, 110, 10, "emb/grad", "UnsortedSegmentSum", {"emb/part_1/read_S3"});
  return b.Finish();
}

// One resolution of an op's inputs: (input, slot's node, kind, src task label, sent).
using Resolved = std::tuple<std::string, std::string, int, std::string, TimeNs>;

std::vector<Resolved> ResolveAll(const Capture& c, const cf::InputIndex& x) {
  std::vector<Resolved> out;
  for (uint32_t d = 0; d < c.devices.size(); ++d) {
    const uint32_t t = c.devices[d].task;
    cf::StepInputs seen;
    c.ops.ForEach(c.device_ops[d].first, c.device_ops[d].second, [&](const OpRow& op) {
      cf::ResolveOpInputs(
          c, x, t, op, &seen, [&](StrId in, uint32_t slot, const cf::ProducerEnds::Match& m) {
            const bool named = slot < x.refs.nodes.size();
            out.emplace_back(
                std::string(c.Str(in)), named ? std::string(c.Str(x.refs.nodes[slot])) : "",
                static_cast<int>(m.kind),
                m.kind == cf::ProducerEnds::Match::kEdge ? std::string(c.TaskLabelOf(m.src)) : "",
                m.sent);
          });
    });
  }
  return out;
}

// `emb/part_1/read_S3` is the part ps:1 read (sent when it ended, 70 ns), never ps:0's part; the
// repeat in the step is not a second transfer. The capture's edges table, its kept index, an
// index built from the finished capture and the step graph all say so.
TEST(CaptureInputIndex, PartitionedVariableReadThroughS3IsThePartItsPsRead) {
  const Capture c = PartitionedJob();
  ASSERT_NE(c.input_index, nullptr);
  const std::vector<Resolved> want = {
      {"emb/part_0/read_S1", "emb/part_0/read", cf::ProducerEnds::Match::kEdge, "ps:0", 40},
      {"emb/part_1/read_S3", "emb/part_1/read", cf::ProducerEnds::Match::kEdge, "ps:1", 70},
  };
  EXPECT_EQ(ResolveAll(c, *c.input_index), want);
  EXPECT_EQ(ResolveAll(c, cf::IndexInputs(c)), want);

  // The edges table: one row per part, from the PS that holds it, counted once.
  ASSERT_EQ(c.edges.size(), 2u);
  for (const EdgeRow& e : c.edges) {
    const std::string tensor(c.Str(e.tensor));
    EXPECT_EQ(c.TaskLabelOf(e.src_task), tensor == "emb/part_1/read" ? "ps:1" : "ps:0") << tensor;
    EXPECT_EQ(c.TaskLabelOf(e.dst_task), "worker:0");
    EXPECT_EQ(e.count, 1) << tensor;
    EXPECT_EQ(e.kind, EdgeKind::kPartitionInput);
  }
  EXPECT_EQ(c.stats.unresolved_inputs, 0);
  EXPECT_EQ(c.stats.ambiguous_inputs, 0);

  // The step graph: worker:0's wait from 1 to 100 ns ended with the part that arrived last
  // (ps:1's, sent at 70 ns); its transfer counts are the edges table's.
  for (const bool own_index : {true, false}) {
    Capture copy = PartitionedJob();
    if (!own_index) copy.input_index = nullptr;  // built by the step graph instead
    const StepGraph g = StepGraph::Build(copy);
    const uint32_t w0 = copy.FindTask("worker:0");
    const std::vector<WaitCause> causes = g.WaitCausesOf(w0, 1);
    ASSERT_EQ(causes.size(), 1u) << own_index;
    EXPECT_EQ(copy.Str(causes[0].tensor), "emb/part_1/read") << own_index;
    EXPECT_EQ(copy.TaskLabelOf(causes[0].src_task), "ps:1") << own_index;
    EXPECT_EQ(causes[0].wait_ns, 99) << own_index;
    EXPECT_EQ(causes[0].sent_offset_ns, 70) << own_index;
    using Row = std::tuple<uint32_t, uint32_t, int64_t>;
    const std::vector<Row> counts = {{copy.FindTask("ps:0"), w0, 1},
                                     {copy.FindTask("ps:1"), w0, 1}};
    EXPECT_EQ(g.TransferCounts(), counts) << own_index;
  }
}

// Without the step walk's dedup (no StepInputs), every naming of an input resolves; an input whose
// node never ran has no producer (kNoProducer, kUnresolved); a control input and one without a
// partition suffix are not partition inputs.
TEST(CaptureInputIndex, UnseenRepeatsAndMissingProducers) {
  CaptureBuilder b;
  const uint32_t ps0 = Dev(b, "ps", 0), w0 = Dev(b, "worker", 0);
  Op(b, ps0, 10, 10, "v/read", "Identity");
  Op(b, w0, 0, 1, "_SOURCE", "NoOp");
  Op(b, w0, 50, 5, "a", "MatMul", {"v/read_S2", "^v/read", "v/read"});
  Op(b, w0, 60, 5, "b", "MatMul", {"v/read_S2", "gone/read_S9"});
  const Capture c = b.Finish();
  ASSERT_NE(c.input_index, nullptr);
  EXPECT_EQ(c.stats.unresolved_inputs, 1);  // gone/read
  int edges = 0, unresolved = 0, calls = 0;
  const uint32_t w = c.FindTask("worker:0");
  uint32_t d = 0;
  while (d < c.devices.size() && c.devices[d].task != w) ++d;
  ASSERT_LT(d, c.devices.size());
  c.ops.ForEach(c.device_ops[d].first, c.device_ops[d].second, [&](const OpRow& op) {
    cf::ResolveOpInputs(c, *c.input_index, w, op, nullptr,
                        [&](StrId, uint32_t slot, const cf::ProducerEnds::Match& m) {
                          ++calls;
                          edges += m.kind == cf::ProducerEnds::Match::kEdge;
                          if (slot == cf::PartitionInputs::kNoProducer) {
                            EXPECT_EQ(m.kind, cf::ProducerEnds::Match::kUnresolved);
                            ++unresolved;
                          }
                        });
  });
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(edges, 2);
  EXPECT_EQ(unresolved, 1);
}

// The cursor gives a device's rows and indexes as ForEach does, plain or packed, across block
// boundaries, after a Seek too.
TEST(DeviceCursor, WalksPlainAndPackedRowsLikeForEach) {
  std::vector<OpRow> rows;
  for (uint32_t i = 0; i < 3 * kPackBlock + 17; ++i) {
    OpRow r{};
    r.start = 1000 + 7 * i;
    r.node = i % 5;
    r.set_dur(i % 3);
    r.device = 0;
    r.lane = static_cast<uint16_t>(i % 2);
    rows.push_back(r);
  }
  const uint32_t split = kPackBlock + 40;  // device 0: [0, split), device 1: the rest
  for (size_t i = split; i < rows.size(); ++i) rows[i].device = 1;
  for (const bool packed : {false, true}) {
    OpStore store;
    if (packed) {
      std::vector<PackedOps> devices(2);
      devices[0].Append(rows.data(), split);
      devices[1].Append(rows.data() + split, rows.size() - split);
      for (PackedOps& p : devices) p.nodes_mapped = true;
      store.SetPacked(std::move(devices), {});
    } else {
      store.mutable_plain().assign(rows.begin(), rows.end());
    }
    ASSERT_EQ(store.packed(), packed);
    const std::pair<uint32_t, uint32_t> ranges[2] = {{0, split},
                                                     {split, static_cast<uint32_t>(rows.size())}};
    for (const auto& range : ranges) {
      DeviceCursor cur(store, range);
      uint32_t want = range.first;
      const OpRow* row;
      uint32_t idx;
      while (cur.Peek(&row, &idx)) {
        ASSERT_EQ(idx, want) << packed;
        ASSERT_EQ(cur.Index(), want);
        EXPECT_EQ(std::tie(row->start, row->node, row->lane),
                  std::tie(rows[want].start, rows[want].node, rows[want].lane));
        EXPECT_EQ(row->dur(), rows[want].dur());
        cur.Pop();
        ++want;
      }
      EXPECT_EQ(want, range.second) << packed;
      EXPECT_EQ(cur.Peek(), nullptr);
      const uint32_t mid = range.first + (range.second - range.first) / 2 + 1;
      cur.Seek(mid);
      ASSERT_NE(cur.Peek(), nullptr);
      EXPECT_EQ(cur.Peek()->start, rows[mid].start) << packed;
      EXPECT_EQ(cur.Index(), mid);
    }
  }
}

}  // namespace
}  // namespace tfdiag
