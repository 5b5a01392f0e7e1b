// Issue 38, item 4: TF2 trace-viewer JSON kernels are typed as the XSpace types them (tf_op, then
// the launch, then `args.annotation`, then the TensorFlow Ops row), and a GPU plane without events
// is no device. Fixtures: TF2 trace JSON written here in the shape TF 2.4's converter writes
// (xplane_to_trace_events.cc: one process per plane, one thread per line, every stat an args
// string; the kernels' `annotation` as in the real log directory of ../shared/traces).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "collectors/load_inputs.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

std::string Meta(const char* what, int pid, int tid, const std::string& name) {
  return fmt::format(R"({{"ph":"M","name":"{}","pid":{},"tid":{},"args":{{"name":"{}"}}}})", what,
                     pid, tid, name);
}

std::string X(int pid, int tid, double ts, double dur, const std::string& name,
              const std::string& args) {
  return fmt::format(R"({{"ph":"X","pid":{},"tid":{},"ts":{},"dur":{},"name":"{}","args":{{{}}}}})",
                     pid, tid, ts, dur, name, args);
}

// A host with one TF op and a GPU:0 plane whose stream holds one kernel known by its annotation
// alone (no correlation_id, no TensorFlow Ops row); `gpus` more GPU planes without events.
std::string Trace(int empty_gpus) {
  std::string ev = Meta("process_name", 1, 0, "/host:CPU") + "," +
                   Meta("thread_name", 1, 7, "tf_Compute") + "," +
                   Meta("process_name", 2, 0, "/device:GPU:0") + "," +
                   Meta("thread_name", 2, 14, "Stream #14(Compute)") + ",";
  for (int g = 0; g < empty_gpus; ++g) {
    ev += Meta("process_name", 3 + g, 0, fmt::format("/device:GPU:{}", g + 1)) + ",";
  }
  ev += X(1, 7, 1000.5, 20.25, "model/dense/MatMul", R"("long_name":"model/dense/MatMul:MatMul")") +
        ",";
  ev += X(2, 14, 1010.0, 50.0, "volta_sgemm_128x64_nn",
          R"("annotation":"train_function::model/conv2d/Conv2D:Conv2D#id=3#","group_id":"0")") +
        ",";
  return R"({"displayTimeUnit":"ns","metadata":{"highres-ticks":true},"traceEvents":[)" + ev +
         "{}]}";
}

TEST(Tf2KernelTypes, AnnotationTypesAKernelAndEmptyGpuPlanesAreNoDevices) {
  TempDir dir;
  const std::string path = dir.File("hosta.trace.json");
  WriteFile(path, Trace(7));
  StatusOr<Capture> c = LoadInputs({path}, {});
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_EQ(c->stats.files.size(), 1u);
  EXPECT_EQ(c->stats.files[0].kernels, 1);
  EXPECT_EQ(c->stats.files[0].kernels_untied, 0);
  bool conv = false;
  for (const NodeRow& n : c->nodes) {
    conv |= c->Str(n.type) == "Conv2D" && c->Str(n.name) == "model/conv2d/Conv2D";
  }
  EXPECT_TRUE(conv);
  // The host's CPU and GPU:0's stream: two devices, not nine (7 GPU planes hold nothing, and a
  // GPU plane's events sit on its streams).
  std::string names;
  for (const DeviceRow& d : c->devices) names += std::string(c->Str(d.name)) + " ";
  EXPECT_EQ(c->devices.size(), 2u) << names;
}

}  // namespace
}  // namespace tfdiag::test
