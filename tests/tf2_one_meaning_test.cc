// Issue 38, "the house": one meaning of a TF2 event for both readers. Each fixture is an XSpace
// written here and its trace-viewer JSON converted from it by the simulator's converter
// (samples/trace_json_writer.cc, TF's xplane_to_trace_events.cc shape: one process per plane, one
// thread per line, every stat an args string), so both files hold one capture; both are read as
// a user gives them (LoadInputs) and must give the same steps and the same kernel types, equal
// to what the fixture was built to hold.
//   - One plane to device rule (ClassifyTf2Plane): "/host:python-tracer" and "/device:CUSTOM:*"
//     planes are no devices; their events never make or stretch steps.
//   - Kernels typed in one order: tf_op, then annotation, then the launch's correlation_id, then
//     the device's TensorFlow Ops row.
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "collectors/load_inputs.h"
#include "collectors/xplane/xplane.pb.h"
#include "samples/sim_internal.h"
#include "tests/test_util.h"
#include "tests/xplane_build.h"

namespace tfdiag::test {
namespace {

// 2020-09-13 12:26:40 UTC: on the epoch, so no session clock is applied to either file.
constexpr int64_t kT0 = 1'600'000'000'000'000'000;

xplane::XPlane* AddPlane(xplane::XSpace* s, int64_t id, const std::string& name) {
  xplane::XPlane* p = s->add_planes();
  p->set_id(id);
  p->set_name(name);
  return p;
}

// Line `i` of `p` starts at kT0 + `offset_ms`.
void At(xplane::XPlane* p, int i, int64_t offset_ms) {
  p->mutable_lines(i)->set_timestamp_ns(kT0 + offset_ms * 1'000'000);
}

// Adds a string stat `name` = `value` to event `e` of line `line` of `p`: a str_value, or, with
// `ref`, a ref_value naming a stat metadata whose name is the value (as TF's XPlaneBuilder keeps
// repeated strings).
void AddStrStat(xplane::XPlane* p, int line, int e, const std::string& name,
                const std::string& value, bool ref) {
  auto id_of = [&](const std::string& n) {
    for (const auto& [k, md] : p->stat_metadata()) {
      if (md.name() == n) return k;
    }
    const int64_t k = static_cast<int64_t>(p->stat_metadata().size()) + 100;
    (*p->mutable_stat_metadata())[k].set_id(k);
    (*p->mutable_stat_metadata())[k].set_name(n);
    return k;
  };
  xplane::XStat* s = p->mutable_lines(line)->mutable_events(e)->add_stats();
  s->set_metadata_id(id_of(name));
  if (ref) {
    s->set_ref_value(static_cast<uint64_t>(id_of(value)));
  } else {
    s->set_str_value(value);
  }
}

// The capture read from `space` written as `<dir>/hosta.xplane.pb` (json: its trace JSON,
// `<dir>/hosta.trace.json.gz`, converted from that XSpace).
Capture Load(const xplane::XSpace& space, const TempDir& dir, bool json) {
  const std::string pb = dir.File("hosta.xplane.pb");
  std::string bytes;
  EXPECT_TRUE(space.SerializeToString(&bytes));
  WriteFile(pb, bytes);
  std::string path = pb;
  if (json) {
    path = dir.File("hosta.trace.json.gz");
    const Status st = sim::internal::XSpaceToTraceJson(pb, path);
    EXPECT_TRUE(st.ok()) << st.message();
    std::remove(pb.c_str());
  }
  StatusOr<Capture> c = LoadInputs({path}, {});
  EXPECT_TRUE(c.ok()) << path << ": " << c.status().message();
  return c.ok() ? std::move(*c) : Capture{};
}

std::vector<std::pair<TimeNs, TimeNs>> Steps(const Capture& c) {
  std::vector<std::pair<TimeNs, TimeNs>> out;
  for (const StepRow& s : c.steps) out.emplace_back(s.start, s.end);
  return out;
}

// A host whose one step is marked by a Keras `train_function` TraceMe (group 1, 10 ms from
// kT0 + 5 ms), and one plane that is no device: a Python tracer plane whose events carry group
// ids (a longer `train_function` in group 1, one in group 2), or a CUSTOM device plane with a
// derived Steps row naming group 3.
xplane::XSpace NoDeviceFixture(const std::string& other) {
  xplane::XSpace space;
  xplane::XPlane* host = AddPlane(&space, 1, "/host:CPU");
  AddXLine(host, 1, "tf_Compute/1",
           {{"train_function", 0, 10'000, {{"group_id", 1}}},
            {"model/dense/MatMul:MatMul", 1'000, 2'000, {{"group_id", 1}}}});
  At(host, 0, 5);
  xplane::XPlane* p = AddPlane(&space, 2, other);
  if (other == "/device:CUSTOM:0") {
    AddXLine(p, -1, "Steps", {{"step", 0, 30'000, {{"group_id", 3}}}});
    AddXLine(p, 1, "Stream #1(Compute)", {{"custom_kernel", 0, 30'000, {{"group_id", 3}}}});
  } else {
    AddXLine(p, 1, "python3",
             {{"train_function", 0, 30'000, {{"group_id", 1}}},
              {"train_function", 40'000, 5'000, {{"group_id", 2}}}});
  }
  At(p, 0, 0);
  if (p->lines_size() > 1) At(p, 1, 0);
  return space;
}

TEST(Tf2OneMeaning, PlanesThatAreNoDevicesMakeNoStepsInEitherReader) {
  const std::vector<std::pair<TimeNs, TimeNs>> want = {{kT0 + 5'000'000, kT0 + 15'000'000}};
  for (const std::string other : {"/host:python-tracer", "/device:CUSTOM:0", "/host:metadata"}) {
    SCOPED_TRACE(other);
    const xplane::XSpace space = NoDeviceFixture(other);
    TempDir a, b;
    const Capture x = Load(space, a, false), j = Load(space, b, true);
    EXPECT_EQ(Steps(x), want);
    EXPECT_EQ(Steps(j), want);  // before: 30 ms from the tracer's marker, or group 3's CUSTOM row
    // One device (the host's CPU) with its one TF op, in both.
    EXPECT_EQ(x.devices.size(), 1u);
    EXPECT_EQ(j.devices.size(), 1u);
    EXPECT_EQ(x.ops.size(), 1u);
    EXPECT_EQ(j.ops.size(), 1u);
  }
}

// A plane that is no device is counted under one reason in both readers, its name (the
// workload's bytes) with control characters escaped: before, the XSpace reader kept the raw name
// and the trace JSON reader an escaped one, so one capture gave two reasons.
TEST(Tf2OneMeaning, PlanesThatAreNoDevicesAreCountedUnderOneEscapedReason) {
  const std::string name = "/host:python-tracer\x1b[2J";
  const xplane::XSpace space = NoDeviceFixture(name);
  TempDir a, b;
  const Capture x = Load(space, a, false), j = Load(space, b, true);
  const std::string want = "TF2 plane that is not a device (/host:python-tracer\\x1b[2J)";
  ASSERT_EQ(x.stats.ignored.count(want), 1u);
  ASSERT_EQ(j.stats.ignored.count(want), 1u);
  EXPECT_EQ(x.stats.ignored.at(want), 2);  // the tracer's two train_function events
  EXPECT_EQ(j.stats.ignored.at(want), 2);
  EXPECT_EQ(Steps(x), Steps(j));
}

// A GPU host: a TF op on the host, and on GPU:0's stream five kernels, each typed by a different
// rule of the order, plus a TensorFlow Ops row that spans every kernel with another op:
//   k_tfop:  tf_op "model/bias/BiasAdd:BiasAdd" and an annotation of Conv2D  -> BiasAdd
//   k_ann:   annotation only (str_value)                                    -> Conv2D
//   k_ref:   annotation as a ref_value, and a correlation_id of a launch     -> MatMul
//   k_corr:  a correlation_id of a launch inside the host's Relu op          -> Relu
//   k_row:   nothing but the TensorFlow Ops row                             -> AddV2
xplane::XSpace KernelFixture() {
  xplane::XSpace space;
  xplane::XPlane* host = AddPlane(&space, 1, "/host:CPU");
  AddXLine(host, 1, "tf_Compute/1",
           {{"model/relu/Relu:Relu", 0, 1'000, {{"group_id", 1}}},
            {"cudaLaunchKernel", 100, 10, {{"group_id", 1}, {"correlation_id", 7}}},
            {"model/other/Mul:Mul", 2'000, 1'000, {{"group_id", 1}}},
            {"cudaLaunchKernel", 2'100, 10, {{"group_id", 1}, {"correlation_id", 8}}}});
  At(host, 0, 0);
  xplane::XPlane* gpu = AddPlane(&space, 2, "/device:GPU:0");
  AddXLine(gpu, 1, "Stream #1(Compute)",
           {{"k_tfop", 5'000, 100, {{"group_id", 1}}},
            {"k_ann", 5'200, 100, {{"group_id", 1}}},
            {"k_ref", 5'400, 100, {{"group_id", 1}, {"correlation_id", 8}}},
            {"k_corr", 5'600, 100, {{"group_id", 1}, {"correlation_id", 7}}},
            {"k_row", 5'800, 100, {{"group_id", 1}}}});
  AddXLine(gpu, -2, "TensorFlow Ops", {{"model/add/AddV2:AddV2", 5'000, 1'000, {}}});
  At(gpu, 0, 0);
  At(gpu, 1, 0);
  AddStrStat(gpu, 0, 0, "tf_op", "model/bias/BiasAdd:BiasAdd", false);
  AddStrStat(gpu, 0, 0, "annotation", "train_function::model/conv2d/Conv2D:Conv2D#id=3#", false);
  AddStrStat(gpu, 0, 1, "annotation", "train_function::model/conv2d/Conv2D:Conv2D#id=3#", false);
  AddStrStat(gpu, 0, 2, "annotation", "train_function::model/dense/MatMul:MatMul#id=4#", true);
  return space;
}

// The kernels' (node, type) by start time, from the capture's stream device.
std::map<TimeNs, std::pair<std::string, std::string>> Kernels(const Capture& c) {
  std::map<TimeNs, std::pair<std::string, std::string>> out;
  c.ops.ForEach([&](const OpRow& op) {
    if (c.Str(c.devices[op.device].sub).rfind("stream:", 0) != 0) return;
    out[op.start - kT0] = {std::string(c.Str(c.OpName(op))), std::string(c.Str(c.OpType(op)))};
  });
  return out;
}

TEST(Tf2OneMeaning, KernelsAreTypedInOneOrderFromXSpaceAndTraceJson) {
  const xplane::XSpace space = KernelFixture();
  TempDir a, b;
  const Capture x = Load(space, a, false), j = Load(space, b, true);
  const std::map<TimeNs, std::pair<std::string, std::string>> want = {
      {5'000'000, {"model/bias/BiasAdd", "BiasAdd"}},
      {5'200'000, {"model/conv2d/Conv2D", "Conv2D"}},
      {5'400'000, {"model/dense/MatMul", "MatMul"}},
      {5'600'000, {"model/relu/Relu", "Relu"}},
      {5'800'000, {"model/add/AddV2", "AddV2"}}};
  EXPECT_EQ(Kernels(x), want);  // before: k_ann, k_ref typed by the row (AddV2) and the launch
  EXPECT_EQ(Kernels(j), want);
  for (const Capture* c : {&x, &j}) {
    ASSERT_EQ(c->stats.files.size(), 1u);
    EXPECT_EQ(c->stats.files[0].kernels, 5);
    EXPECT_EQ(c->stats.files[0].kernels_untied, 0);
  }
}

// A capture of a MirroredStrategy host (8 GPU planes) that recorded only the host's TraceMe
// markers (train_function, EagerExecute, ...) and no kernel, as a real TF 2.3 trace JSON of
// awslabs/sagemaker-debugger holds: analyze exits 2 saying so, in the same words from the XSpace
// and from its trace JSON. Before, the JSON's note called the GPU planes "not TensorFlow devices
// (expected process names like /job:worker/...)" while listing them by such names, and the
// XSpace's said only "no TensorFlow ops in it".
TEST(Tf2OneMeaning, CaptureWithoutOpsSaysSoInBothFormats) {
  xplane::XSpace space;
  xplane::XPlane* host = AddPlane(&space, 49, "/host:CPU");
  AddXLine(host, 7, "python3",
           {{"train_function", 116, 63'929, {}},
            {"EagerExecute: __inference_train_function_7724", 471, 63'399, {}}});
  At(host, 0, 0);
  for (int g = 0; g < 8; ++g) AddPlane(&space, g, "/device:GPU:" + std::to_string(g));
  for (const bool json : {false, true}) {
    SCOPED_TRACE(json ? "trace JSON" : "XSpace");
    TempDir dir;
    const Capture c = Load(space, dir, json);
    EXPECT_EQ(c.ops.size(), 0u);
    ASSERT_EQ(c.stats.files.size(), 1u);
    const std::string m = c.stats.files[0].note;  // analyze's exit-2 line (pipeline.cc)
    EXPECT_NE(m.find(json ? "a TF2 trace-viewer JSON of" : "a TF2 XSpace of"), std::string::npos)
        << m;
    EXPECT_NE(m.find("events with no TF op and no GPU kernel: its host's 2 event(s) are TraceMe "
                     "markers, not ops, and its 8 GPU plane(s) hold no kernels"),
              std::string::npos)
        << m;
    EXPECT_EQ(m.find("not TensorFlow devices"), std::string::npos) << m;
  }
}

// Every op of `c` as "start device node type", in order.
std::vector<std::string> OpList(const Capture& c) {
  std::vector<std::string> out;
  c.ops.ForEach([&](const OpRow& op) {
    out.push_back(std::to_string(op.start) + " " + std::string(c.Str(c.devices[op.device].name)) +
                  " " + std::string(c.Str(c.OpName(op))) + " " + std::string(c.Str(c.OpType(op))));
  });
  return out;
}

// The trace JSON finish orders its records per thread run (TF writes a line's events together
// and in order) and falls back to a sort per record otherwise: the JSON of KernelFixture with its
// X events reversed (each thread's out of order) or with its first event moved to the end (a
// thread in two runs) reads as the JSON in TF's order does.
TEST(Tf2OneMeaning, TraceJsonEventsInAnyOrderReadAsInTfsOrder) {
  TempDir dir;
  const std::string pb = dir.File("w.xplane.pb"), json = dir.File("hosta.trace.json");
  std::string bytes;
  ASSERT_TRUE(KernelFixture().SerializeToString(&bytes));
  WriteFile(pb, bytes);
  ASSERT_TRUE(sim::internal::XSpaceToTraceJson(pb, json).ok());
  std::ifstream in(json);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  StatusOr<Capture> want = LoadInputs({json}, {});
  ASSERT_TRUE(want.ok()) << want.status().message();
  ASSERT_EQ(Kernels(*want).size(), 5u);
  for (const bool reverse : {true, false}) {
    SCOPED_TRACE(reverse ? "reversed" : "first event last");
    rapidjson::Document d;
    d.Parse(text.c_str());
    ASSERT_FALSE(d.HasParseError());
    rapidjson::Value& evs = d["traceEvents"];
    std::vector<rapidjson::Value> meta, x;
    for (auto& e : evs.GetArray()) {
      const bool is_x =
          e.IsObject() && e.HasMember("ph") && std::string(e["ph"].GetString()) == "X";
      (is_x ? x : meta).emplace_back(std::move(e));
    }
    if (reverse) {
      std::reverse(x.begin(), x.end());
    } else {
      std::rotate(x.begin(), x.begin() + 1, x.end());
    }
    evs.SetArray();
    for (auto* part : {&meta, &x}) {
      for (auto& e : *part) evs.PushBack(std::move(e), d.GetAllocator());
    }
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    d.Accept(w);
    TempDir other;
    const std::string path = other.File("hosta.trace.json");
    WriteFile(path, buf.GetString());
    StatusOr<Capture> got = LoadInputs({path}, {});
    ASSERT_TRUE(got.ok()) << got.status().message();
    EXPECT_EQ(OpList(*got), OpList(*want));
    EXPECT_EQ(Steps(*got), Steps(*want));
  }
}

}  // namespace
}  // namespace tfdiag::test
