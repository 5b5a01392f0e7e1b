// TF2 transfers from rendezvous keys (issue 35 item 7): the distributed runtime names each
// cross-device transfer "<src_device>;<src_incarnation>;<dst_device>;<tensor_name>;<frame>:<iter>"
// (tensorflow/core/kernels/sendrecv_ops.cc GetRendezvousKey, split so by grpc_remote_worker.cc).
// An XSpace's (or its trace JSON's) RecvTensor / _Recv events that carry one (a `rendezvous_key`
// or `key` stat, or the gRPC worker's "RecvTensor: <step_id> <key>" text) tie the transfer to the
// task that sent it, so the same job read from a TF2 log directory names the same waits and
// transfers as its TF1 timeline.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <set>
#include <string>
#include <tuple>

#include "collectors/xplane/tf2_events.h"
#include "tests/test_util.h"
#include "tests/xplane_build.h"

namespace tfdiag::test {
namespace {

constexpr char kKey[] =
    "/job:ps/replica:0/task:0/device:CPU:0;5eed00001a2b3c4d;"
    "/job:worker/replica:0/task:3/device:CPU:0;edge_12_embedding/embedding_lookup;0:0";

TEST(Tf2Rendezvous, ParsesKeysAndRejectsOtherText) {
  RendezvousKey k;
  ASSERT_TRUE(ParseRendezvousKey(kKey, &k));
  EXPECT_EQ(k.src_device, "/job:ps/replica:0/task:0/device:CPU:0");
  EXPECT_EQ(k.dst_device, "/job:worker/replica:0/task:3/device:CPU:0");
  EXPECT_EQ(k.tensor, "edge_12_embedding/embedding_lookup");
  EXPECT_EQ(ProducerOfEdge(k.tensor), "embedding/embedding_lookup");
  // The stat first, else the gRPC worker's trace text.
  EXPECT_TRUE(RendezvousKeyOfEvent("RecvTensor", kKey, &k));
  EXPECT_TRUE(RendezvousKeyOfEvent(std::string("RecvTensor: 17 ") + kKey, "", &k));
  EXPECT_EQ(k.dst_device, "/job:worker/replica:0/task:3/device:CPU:0");
  EXPECT_FALSE(RendezvousKeyOfEvent("RecvTensor", "", &k));
  EXPECT_FALSE(RendezvousKeyOfEvent(std::string("RecvTensor ") + kKey, "", &k));
  for (const char* bad : {
           "",
           "/job:ps/replica:0/task:0/device:CPU:0;1;/job:worker/replica:0/task:0/device:CPU:0;t",
           "/job:ps/replica:0/task:0/device:CPU:0;xyz;/job:worker/replica:0/task:0;t;0:0",
           "/job:ps/replica:0/task:0/device:CPU:0;1;/job:worker/replica:0/task:0;t;0",
           "/job:ps/replica:0/task:0/device:CPU:0;1;/job:worker/replica:0/task:0;;0:0",
           "ps:0;1;/job:worker/replica:0/task:0;t;0:0",
           "/job:ps/replica:0/task:0;1;/job:worker/replica:0/task:0;t;0:0;extra",
       }) {
    EXPECT_FALSE(ParseRendezvousKey(bad, &k)) << bad;
  }
}

// A hand-built XSpace: ps:0 runs the gather, worker:0's RecvTensor names it by its key in the
// gRPC worker's text. The capture gets one transfer ps:0 -> worker:0 of the gather's output.
TEST(Tf2Rendezvous, XSpaceRecvTensorKeyIsATransferFromTheSender) {
  TempDir dir;
  xplane::XSpace space;
  xplane::XPlane* ps = space.add_planes();
  ps->set_name("/job:ps/replica:0/task:0/device:CPU:0");
  AddXLine(ps, 1, "tf_Compute", {{"emb/lookup:GatherV2", 100, 400, {}}});
  xplane::XPlane* w = space.add_planes();
  w->set_name("/job:worker/replica:0/task:0/device:CPU:0");
  const std::string key =
      "/job:ps/replica:0/task:0/device:CPU:0;00000000000000ab;"
      "/job:worker/replica:0/task:0/device:CPU:0;edge_7_emb/lookup;0:0";
  AddXLine(w, 1, "tf_Compute",
           {{"RecvTensor: 3 " + key, 510, 40, {}}, {"dense/MatMul:MatMul", 560, 300, {}}});
  const Capture c = ReadXSpaceFile(space, dir.File("job.xplane.pb"));
  ASSERT_EQ(c.flows.size(), 1u);
  const FlowRow& f = c.flows[0];
  EXPECT_EQ(c.TaskLabelOf(c.devices[f.src_device].task), "ps:0");
  EXPECT_EQ(c.TaskLabelOf(c.devices[f.dst_device].task), "worker:0");
  EXPECT_EQ(c.Str(f.name), "emb/lookup");
  EXPECT_EQ(f.dst_ts, f.src_ts);  // at the receive's start: the gap before it waits for this
}

// (task, from, tensor) of every wait a finding names.
std::set<std::tuple<std::string, std::string, std::string>> NamedWaits(const std::string& path,
                                                                       std::string* severity,
                                                                       int* edges) {
  const RunResult r = RunTfdiag("analyze -f json " + path);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  rapidjson::Document d;
  d.Parse(r.out.c_str());
  std::set<std::tuple<std::string, std::string, std::string>> out;
  if (d.HasParseError()) {
    ADD_FAILURE() << path << ": no JSON";
    return out;
  }
  *edges = static_cast<int>(d["edges"].GetArray().Size());
  for (const auto& f : d["findings"].GetArray()) {
    if (std::string(f["rule"].GetString()) != "hot-ps") continue;
    *severity = f["severity"].GetString();
    for (const auto& w : f["waits"].GetArray()) {
      if (!w["from"].IsString() || !w["tensor"].IsString()) continue;
      out.insert({w["task"].GetString(), w["from"].GetString(), w["tensor"].GetString()});
    }
  }
  return out;
}

// The simulator's hot-ps job as a TF1 timeline and as TF2 log directories (XSpaces, trace JSON)
// whose RecvTensor events carry their rendezvous keys: the same hot-ps waits, named by tensor and
// sending task. Before the keys were read the log directories had no cross-task edge and no named
// wait.
TEST(Tf2Rendezvous, LogDirectoryNamesTheTimelinesWaits) {
  TempDir dir;
  const std::string common = "simulate hot-ps --steps 4 --seed 5 ";
  ASSERT_EQ(RunTfdiag(common + "-o " + dir.File("t.json")).exit_code, 0);
  const std::string keys = common + "--rendezvous-keys --format ";
  ASSERT_EQ(RunTfdiag(keys + "xplane -o " + dir.File("logs")).exit_code, 0);
  ASSERT_EQ(RunTfdiag(keys + "trace-json -o " + dir.File("json")).exit_code, 0);
  // Without the keys the log directory says its waits are not named.
  ASSERT_EQ(RunTfdiag(common + "--format xplane -o " + dir.File("nokeys")).exit_code, 0);
  const RunResult plain = RunTfdiag("analyze " + dir.File("nokeys"));
  EXPECT_NE(plain.out.find("this profile records no cross-task transfers"), std::string::npos);
  EXPECT_EQ(RunTfdiag(common + "--rendezvous-keys -o " + dir.File("k.json")).exit_code, 2)
      << "a TF1 timeline has no rendezvous keys";
  std::string sev_tf1;
  int edges_tf1 = 0;
  const auto tf1 = NamedWaits(dir.File("t.json"), &sev_tf1, &edges_tf1);
  EXPECT_EQ(sev_tf1, "high");
  ASSERT_FALSE(tf1.empty());
  for (const char* logs : {"logs", "json"}) {  // the XSpaces, then their trace JSON
    SCOPED_TRACE(logs);
    std::string sev_tf2;
    int edges_tf2 = 0;
    const auto tf2 = NamedWaits(dir.File(logs), &sev_tf2, &edges_tf2);
    EXPECT_EQ(sev_tf2, sev_tf1);
    EXPECT_EQ(tf2, tf1);
    EXPECT_GT(edges_tf2, 0);
    bool lookup = false;
    for (const auto& [task, from, tensor] : tf2) {
      lookup |= from == "ps:0" && tensor == "embedding/embedding_lookup";
    }
    EXPECT_TRUE(lookup) << "the workers wait for the hot PS's gather";
  }
}

}  // namespace
}  // namespace tfdiag::test
