// TF2 variables (issue 38 item 5): a TF2 profile records no op inputs, so the variables a graph
// reads, gathers, assigns and updates are named by the ops' scopes (Tf2VariableOfOp), never by
// a grappler temporary. Checked on the real BERT XSpace against an independent count of the
// resource handles the function takes (its `_Arg` events "<flattened reader>_resource", read
// with the wire reader), on XSpaces written here, and across the XSpace and the trace JSON of one
// real capture.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "analyzers/op_names.h"
#include "analyzers/task_stats.h"
#include "tests/test_util.h"
#include "tests/wire_reader.h"
#include "tests/xplane_build.h"

namespace tfdiag::test {
namespace {

const char* kBert = "tfprof_d6853e0_GPU-multi-worker_34.83.195.179_6003.xplane.pb";

std::set<std::string> VariablesOf(const Capture& c) {
  const TaskStatsTable t = ComputeTaskStats(c);
  std::set<std::string> out;
  for (const TaskStats& s : t.tasks) {
    for (const VariableLoad& v : s.variables) out.insert(v.name);
  }
  return out;
}

TEST(Tf2Variables, NamedByTheScopesOfTheirOps) {
  bool numbered = false;
  EXPECT_EQ(
      Tf2VariableOfOp("replica_6/bert/layer_9/key/add/ReadVariableOp", "ReadVariableOp", &numbered),
      "bert/layer_9/key/add");
  EXPECT_FALSE(numbered);
  EXPECT_EQ(Tf2VariableOfOp("dense/ReadVariableOp_1", "ReadVariableOp", &numbered), "dense");
  EXPECT_EQ(Tf2VariableOfOp("replica_4/ReadVariableOp_1", "ReadVariableOp", &numbered),
            "ReadVariableOp");
  EXPECT_EQ(Tf2VariableOfOp("m/AssignAddVariableOp_1", "AssignAddVariableOp", &numbered),
            "m/AssignAddVariableOp_1");
  EXPECT_EQ(Tf2VariableOfOp("AssignAddVariableOp_3", "AssignAddVariableOp", &numbered),
            "AssignAddVariableOp_3");
  EXPECT_EQ(Tf2VariableOfOp("ReadVariableOp", "ReadVariableOp", &numbered), "ReadVariableOp");
  EXPECT_EQ(Tf2VariableOfOp("model/embedding/embedding_lookup", "ResourceGather", &numbered),
            "model/embedding");
  EXPECT_EQ(Tf2VariableOfOp("dense/kernel", "VarHandleOp", &numbered), "dense/kernel");
  EXPECT_EQ(
      Tf2VariableOfOp("Adam/update_dense/kernel/ResourceApplyAdam", "ResourceApplyAdam", &numbered),
      "dense/kernel");
  EXPECT_FALSE(numbered);
  EXPECT_EQ(Tf2VariableOfOp("Adam/Adam/update_9/ResourceApplyAdam", "ResourceApplyAdam", &numbered),
            "Adam/Adam/update_9");
  EXPECT_TRUE(numbered);
  EXPECT_EQ(Tf2VariableOfOp("Adam/Adam/update/ResourceSparseApplyAdam", "ResourceSparseApplyAdam",
                            &numbered),
            "Adam/Adam/update");
  EXPECT_TRUE(numbered);
  EXPECT_EQ(Tf2VariableOfOp("model/dense/MatMul", "MatMul", &numbered), "");
  // The scope of the op a read feeds is no variable (issue 48): TF names it by the op's type.
  const std::pair<const char*, const char*> reads[] = {
      {"replica_4/bert/word_embeddings/GatherV2/ReadVariableOp", "bert/word_embeddings"},
      {"dense/MatMul_1/ReadVariableOp", "dense"},
      {"l/attention/Einsum/ReadVariableOp", "l/attention"},
      {"l/attention/add/ReadVariableOp", "l/attention/add"},  // snake_case: a scope of its own
      {"GatherV2/ReadVariableOp", "GatherV2"},                // never down to nothing
  };
  for (const auto& [op, var] : reads) {
    EXPECT_EQ(Tf2VariableOfOp(op, "ReadVariableOp", &numbered), var) << op;
  }
  // Keras optimizers' CamelCase scopes hold variables (their iterations, slots).
  EXPECT_EQ(Tf2VariableOfOp("Adam/Adam/AssignAddVariableOp", "AssignAddVariableOp", &numbered),
            "Adam/Adam");
  EXPECT_EQ(StripReplicaScope("replica_x/a"), "replica_x/a");
}

// The BERT run's host plane reads every variable of one replica through a ReadVariableOp; its
// function takes each as a resource `_Arg` named "<reader, lower case, '/' -> '_'>_resource"
// ("replica_4_" prefixed on replica 4). tfdiag's variables (from the ReadVariableOp events) are
// exactly the handles of the reads, counted here from the `_Arg` events alone.
TEST(Tf2Variables, RealBertVariablesAreTheFunctionsResourceHandles) {
  if (!SharedAvailable()) GTEST_SKIP() << "../shared/traces not found beside the repository";
  const std::string path = SharedTrace(kBert);
  std::set<std::string> handles, other_handles;
  for (const WPlane& p : WalkPlanes(ReadFile(path))) {
    if (p.name != "/host:CPU") continue;
    for (const WEvent& e : p.events) {
      constexpr std::string_view kArg = ":_Arg", kRes = "_resource";
      std::string_view n = e.name;
      if (n.size() < kArg.size() || n.substr(n.size() - kArg.size()) != kArg) continue;
      n.remove_suffix(kArg.size());
      if (n.size() < kRes.size() || n.substr(n.size() - kRes.size()) != kRes) continue;
      if (n.rfind("replica_", 0) == 0) n.remove_prefix(n.find('_', 8) + 1);  // "replica_4_"
      std::string h(n);
      (h.find("readvariableop") != std::string::npos ? handles : other_handles).insert(h);
    }
  }
  // 24 transformer layers x 16 variables, the embeddings and the span labeler: 392 read
  // variables, and 2 assigned ones (metric counters) whose assigns did not run in the capture.
  ASSERT_EQ(handles.size(), 392u);
  EXPECT_EQ(other_handles.size(), 2u);

  const std::set<std::string> vars = VariablesOf(LoadOrDie({path}));
  // Each handle is "<reader>_resource", the reader "<variable>[/<op scope>]/ReadVariableOp" with
  // '/' -> '_' and lower case: a listed variable covers the handles whose reader is itself plus
  // "readvariableop" or plus one more scope, the op's (TF names the op's scope by its type:
  // "gatherv2", "matmul", "einsum", "biasadd"; issue 48: such a scope is never the variable).
  auto flat = [](std::string v) {
    for (char& ch : v) ch = ch == '/' ? '_' : static_cast<char>(std::tolower(ch));
    return v;
  };
  std::set<std::string> covered;
  std::vector<std::string> extra;
  for (const std::string& v : vars) {
    const std::string f = v == "ReadVariableOp" ? "" : flat(v) + "_";
    bool any = false;
    for (const std::string& h : handles) {
      if (h.rfind(f, 0) != 0) continue;
      const std::string rest = h.substr(f.size());
      const size_t us = rest.find('_');
      // "readvariableop_resource" or "<one scope of no '_'>_readvariableop_resource".
      if (rest == "readvariableop_resource" ||
          (us != std::string::npos && rest.substr(us + 1) == "readvariableop_resource" &&
           handles.count(f + "readvariableop_resource") == 0 &&
           vars.count(v + "/" + rest.substr(0, us)) == 0)) {
        covered.insert(h);
        any = true;
      }
    }
    if (!any) extra.push_back(v);
    const std::string last = v.substr(v.rfind('/') + 1);
    for (const char* op : {"GatherV2", "MatMul", "Einsum", "BiasAdd"}) {
      EXPECT_NE(last, op) << v << ": an op's scope listed as a variable";
    }
  }
  std::vector<std::string> missing;
  std::set_difference(handles.begin(), handles.end(), covered.begin(), covered.end(),
                      std::back_inserter(missing));
  EXPECT_TRUE(missing.empty()) << missing.size() << " handles not listed, e.g. " << missing[0];
  EXPECT_TRUE(extra.empty()) << extra.size() << " listed without a handle, e.g. " << extra[0];
  // A dense layer's kernel and bias (read under its MatMul and BiasAdd scopes) are one entry,
  // the layer's: one fewer than the handles.
  EXPECT_EQ(vars.size(), handles.size() - 1);
  EXPECT_EQ(vars.count("bert_span_labeler/bert_encoder_1/word_embeddings"), 1u);
}

// An XSpace written here: reads, a gather, a TF1-style named update, numbered updates, a
// grappler temporary, and a variable held by a VarHandleOp whose read is not listed apart.
TEST(Tf2Variables, XSpaceFixture) {
  const std::string dir = ::testing::TempDir() + "tf2_variables";
  std::filesystem::create_directories(dir);
  xplane::XSpace space;
  xplane::XPlane* host = space.add_planes();
  host->set_id(1);
  host->set_name("/host:CPU");
  AddXLine(host, 1, "tf_Compute",
           {{"model/dense/MatMul/ReadVariableOp:ReadVariableOp", 0, 5, {{"group_id", 1}}},
            {"model/dense/MatMul:MatMul", 5, 40, {{"group_id", 1}}},
            {"model/dense/BiasAdd/ReadVariableOp:ReadVariableOp", 50, 5, {{"group_id", 1}}},
            {"model/norm/batchnorm/ReadVariableOp:ReadVariableOp", 60, 5, {{"group_id", 1}}},
            {"model/norm/batchnorm/mul/ReadVariableOp:ReadVariableOp", 70, 5, {{"group_id", 1}}},
            {"model/embedding/embedding_lookup:ResourceGather", 80, 30, {{"group_id", 1}}},
            {"model/table/weights:VarHandleOp", 120, 1, {{"group_id", 1}}},
            {"model/table/weights/Read/ReadVariableOp:ReadVariableOp", 125, 2, {{"group_id", 1}}},
            {"Adam/Adam/update_3/ResourceApplyAdam:ResourceApplyAdam", 130, 9, {{"group_id", 1}}},
            {"model/gradients/tmp_var:TemporaryVariable", 140, 1, {{"group_id", 1}}},
            {"Adam/Adam/AssignAddVariableOp:AssignAddVariableOp", 150, 1, {{"group_id", 1}}}});
  const Capture c = ReadXSpaceFile(space, dir + "/host.xplane.pb");
  const std::set<std::string> want = {"Adam/Adam",
                                      "model/dense",
                                      "model/embedding",
                                      "model/norm/batchnorm",
                                      "model/norm/batchnorm/mul",
                                      "model/table/weights"};
  EXPECT_EQ(VariablesOf(c), want) << "reads by scope; no tmp_var; numbered updates left out "
                                     "when reads name the variables";
  // The MatMul reading the kernel counts for it, as a TF1 op taking "<var>/read" does.
  const TaskStatsTable t = ComputeTaskStats(c);
  ASSERT_EQ(t.tasks.size(), 1u);
  for (const VariableLoad& v : t.tasks[0].variables) {
    if (v.name == "model/dense") {
      EXPECT_EQ(v.ops, 3) << "the kernel's and bias's reads and the MatMul";
    }
    if (v.name == "model/norm/batchnorm") {
      EXPECT_EQ(v.ops, 1) << "not merged with .../mul";
    }
  }

  // Only optimizer updates recorded (a GPU's rows; the reads ran unrecorded): they are listed.
  xplane::XSpace gpu_only;
  xplane::XPlane* h2 = gpu_only.add_planes();
  h2->set_id(1);
  h2->set_name("/host:CPU");
  AddXLine(h2, 1, "tf_Compute",
           {{"Adam/Adam/update/ResourceApplyAdam:ResourceApplyAdam", 0, 5, {{"group_id", 1}}},
            {"Adam/Adam/update_1/ResourceApplyAdam:ResourceApplyAdam", 10, 5, {{"group_id", 1}}}});
  EXPECT_EQ(VariablesOf(ReadXSpaceFile(gpu_only, dir + "/gpu.xplane.pb")),
            (std::set<std::string>{"Adam/Adam/update", "Adam/Adam/update_1"}));
}

// One real capture in two formats lists the same variables, and as many as the optimizer updates
// and assigns the wire reader counts in the XSpace (the reads of this GPU run are not recorded).
TEST(Tf2Variables, RealKerasRunEqualAcrossXSpaceAndTraceJson) {
  const std::string run = SharedTrace(
      "mholmeslinder_9a8988e_scalars8_logdir/train/plugins/profile/2020_12_22_03_43_39/");
  if (!std::filesystem::exists(run)) GTEST_SKIP() << "no " << run;
  std::set<std::string> touched;  // distinct ops that update or assign a variable
  for (const WPlane& p : WalkPlanes(ReadFile(run + "d1792a5a2842.xplane.pb"))) {
    for (const WEvent& e : p.events) {
      const size_t colon = e.name.rfind(':');
      if (colon == std::string::npos) continue;
      const std::string type = e.name.substr(colon + 1);
      if (type.rfind("ResourceApply", 0) == 0 || type.rfind("Assign", 0) == 0) {
        touched.insert(e.name.substr(0, colon));
      }
    }
  }
  ASSERT_EQ(touched.size(), 28u) << "22 Adam updates, 6 AssignAddVariableOps";
  const std::set<std::string> from_xspace =
      VariablesOf(LoadOrDie({run + "d1792a5a2842.xplane.pb"}));
  const std::set<std::string> from_json =
      VariablesOf(LoadOrDie({run + "d1792a5a2842.trace.json.gz"}));
  EXPECT_EQ(from_xspace, from_json);
  EXPECT_EQ(from_xspace.size(), touched.size());
}

}  // namespace
}  // namespace tfdiag::test
