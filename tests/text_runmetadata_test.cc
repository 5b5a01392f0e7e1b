// Text RunMetadata (`str(run_metadata)`) read one dev_stats block at a time
// (collectors/runmetadata/text_blocks.h): the same rows as the binary file it was printed from,
// the text format's lexical corners, and errors at the file's own line numbers.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "collectors/load_inputs.h"
#include "collectors/runmetadata/run_metadata_reader.h"
#include "collectors/runmetadata/text_blocks.h"
#include "core/capture_builder.h"
#include "samples/simulator.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

StatusOr<Capture> Load(const std::string& path) { return LoadInputs({path}, {}); }

TEST(TextRunMetadata, PrintedFromTheBinaryReadsTheSame) {
  if (RunShell("command -v protoc").exit_code != 0) GTEST_SKIP() << "protoc is not installed";
  TempDir dir;
  sim::ScenarioParams p;
  p.scenario = "hot-ps";
  p.steps = 3;
  p.format = sim::TraceFormat::kRunMetadata;
  ASSERT_TRUE(sim::WriteScenario(p, dir.File("md.pb")).ok());
  // protoc prints it as text format, as Python's str(run_metadata) does (an independent printer).
  const std::string src = TFDIAG_SOURCE_DIR;
  // (In a { } group: RunShell's own redirections apply to the group, these to protoc.)
  RunResult r = RunShell("{ protoc -I '" + src + "' --decode=tensorflow.RunMetadata '" + src +
                         "/collectors/runmetadata/run_metadata.proto' < '" + dir.File("md.pb") +
                         "' > '" + dir.File("md.pbtxt") + "'; }");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  StatusOr<Capture> bin = Load(dir.File("md.pb"));
  StatusOr<Capture> text = Load(dir.File("md.pbtxt"));
  ASSERT_TRUE(bin.ok()) << bin.status().message();
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_EQ(text->stats.files[0].format, "runmetadata-text");
  ASSERT_EQ(text->ops.size(), bin->ops.size());
  ASSERT_GT(bin->ops.size(), 100u);
  for (size_t i = 0; i < bin->ops.size(); ++i) {
    const OpRow &a = bin->ops[i], &b = text->ops[i];
    ASSERT_EQ(a.start, b.start) << i;
    ASSERT_EQ(a.dur(), b.dur()) << i;
    ASSERT_EQ(bin->Str(bin->OpName(a)), text->Str(text->OpName(b))) << i;
    ASSERT_EQ(bin->Str(bin->OpType(a)), text->Str(text->OpType(b))) << i;
  }
  ASSERT_EQ(text->edges.size(), bin->edges.size());
  for (size_t i = 0; i < bin->edges.size(); ++i)
    EXPECT_EQ(text->edges[i].bytes, bin->edges[i].bytes);
  EXPECT_EQ(text->devices.size(), bin->devices.size());
  EXPECT_EQ(text->steps.size(), bin->steps.size());
}

TEST(TextRunMetadata, LexicalCornersOfTheTextFormat) {
  TempDir dir;
  // `step_stats: {`, `<...>` blocks, comments and strings holding brackets and quotes, fields
  // after the step stats that are not read, ';' and ',' separators.
  WriteFile(dir.File("md.pbtxt"),
            R"pb(# printed by hand } {
                 step_stats: {
                   dev_stats <
                   device: '/job:ps/replica:0/task:0/device:CPU:0'  # a comment with } and "
                   node_stats { node_name: "v" all_start_micros: 1000 all_end_rel_micros: 5
                 ;
                 timeline_label: "v = VariableV2()", thread_id: 2 }
  >
  dev_stats {
    device: "/job:worker/replica:0/task:0/device:CPU:0"
    node_stats { node_name: "m\"}" all_start_micros: 1010 all_end_rel_micros: 3
                 timeline_label: "m = MatMul(x, v_S1)" }
  }
}
partition_graphs { node { name: "a}b" attr { key: "x" value { s: "{<" } } } }
cost_graph { node { name: "x" cost_ids: [1, 2, 3] } }
)pb");
  StatusOr<Capture> c = Load(dir.File("md.pbtxt"));
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_EQ(c->ops.size(), 2u);
  EXPECT_EQ(c->tasks.size(), 2u);
  std::set<std::string> types;
  for (const OpRow& op : c->ops.Rows()) types.insert(std::string(c->Str(c->OpType(op))));
  EXPECT_EQ(types, (std::set<std::string>{"VariableV2", "MatMul"}));
}

// A node's outputs as TF prints them (step_stats.proto NodeOutput: slot, a TensorDescription with
// dtype, shape and allocation_description): each output's requested_bytes is the size of the
// tensor "<node>" (slot 0) or "<node>:<slot>", as timeline.py's show_memory names them.
TEST(TextRunMetadata, NodeOutputsGiveTheTensorsSizes) {
  TempDir dir;
  WriteFile(dir.File("md.pbtxt"),
            R"pb(step_stats {
                   dev_stats {
                     device: "/job:ps/replica:0/task:0/device:CPU:0"
                     node_stats {
                       node_name: "emb/part_0"
                       all_start_micros: 1000
                       all_end_rel_micros: 5
                       output {
                         tensor_description {
                           dtype: DT_FLOAT
                           shape {
                             dim { size: 1000 }
                             dim { size: 64 }
                           }
                           allocation_description {
                             requested_bytes: 256000
                             allocated_bytes: 256000
                             allocator_name: "cpu"
                             ptr: 140
                           }
                         }
                       }
                       timeline_label: "emb/part_0 = VariableV2()"
                     }
                     node_stats {
                       node_name: "split"
                       all_start_micros: 1010
                       all_end_rel_micros: 3
                       output {
                         slot: 1
                         tensor_description { allocation_description { requested_bytes: 12 } }
                       }
                       output {
                         slot: 2
                         tensor_description { allocation_description { requested_bytes: 0 } }
                       }
                       timeline_label: "split = Split(dim, x)"
                     }
                   }
                 })pb");
  StatusOr<Capture> c = Load(dir.File("md.pbtxt"));
  ASSERT_TRUE(c.ok()) << c.status().message();
  std::map<std::string, int64_t> sizes;
  for (const TensorRow& t : c->tensors) sizes[std::string(c->Str(t.name))] = t.bytes;
  // No size for an output of 0 bytes (none recorded).
  EXPECT_EQ(sizes, (std::map<std::string, int64_t>{{"emb/part_0", 256000}, {"split:1", 12}}));
}

TEST(TextRunMetadata, ErrorsNameTheFilesLine) {
  TempDir dir;
  std::string ok_block =
      "  dev_stats {\n    device: \"/job:ps/replica:0/task:0/device:CPU:0\"\n"
      "    node_stats { node_name: \"v\" all_start_micros: 1 }\n  }\n";
  // A bad value in the second block, on line 8 of the file.
  WriteFile(dir.File("bad.pbtxt"), "step_stats {\n" + ok_block +
                                       "  dev_stats {\n    device: \"/job:worker/task:0\"\n"
                                       "    node_stats { all_start_micros: \"soon\" }\n  }\n}\n");
  RunResult r = RunTfdiag("analyze '" + dir.File("bad.pbtxt") + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("bad.pbtxt: line 8 column"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("RunMetadata"), std::string::npos) << r.err;
  // A block that never closes: the line where the file ends and where the block opened.
  WriteFile(dir.File("cut.pbtxt"),
            "step_stats {\n" + ok_block + "  dev_stats {\n    device: \"x\"\n");
  r = RunTfdiag("analyze '" + dir.File("cut.pbtxt") + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("cut.pbtxt: line 8 column 1: expected '}' closing the block opened at "
                       "line 6"),
            std::string::npos)
      << r.err;
  // A string that does not end.
  WriteFile(dir.File("str.pbtxt"), "step_stats {\n  dev_stats {\n    device: \"/job:ps\n  }\n}\n");
  r = RunTfdiag("analyze '" + dir.File("str.pbtxt") + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("str.pbtxt: line 3"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("quoted string"), std::string::npos) << r.err;
}

// Every prefix and byte-flipped copies of a small text RunMetadata: ok or one kInvalidInput
// naming a line, never a crash or a hang.
TEST(TextRunMetadata, SurvivesTruncationAndFlippedBytes) {
  TempDir dir;
  const std::string text =
      "step_stats {\n  dev_stats {\n    device: \"/job:ps/replica:0/task:0/device:CPU:0\"\n"
      "    node_stats { node_name: \"v\" all_start_micros: 1000 all_end_rel_micros: 5 "
      "timeline_label: \"v = VariableV2()\" }\n  }\n  dev_stats <\n    device: "
      "'/job:worker/replica:0/task:0/device:CPU:0' # c\n    node_stats { node_name: \"m\" "
      "all_start_micros: 1010 timeline_label: \"m = MatMul(x, v_S1)\" }\n  >\n}\n";
  std::vector<std::string> inputs;
  for (size_t n = 12; n <= text.size(); ++n) inputs.push_back(text.substr(0, n));
  uint64_t rng = 7;
  for (int k = 0; k < 200; ++k) {
    std::string b = text;
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    b[12 + (rng >> 33) % (b.size() - 12)] = "{}<>\"'#:\\x\n"[(rng >> 20) % 11];
    inputs.push_back(b);
  }
  int ok = 0, invalid = 0;
  for (const std::string& in : inputs) {
    WriteFile(dir.File("in.pbtxt"), in);
    CaptureBuilder b;
    Status s = ReadRunMetadata(dir.File("in.pbtxt"), ProfileFormat::kRunMetadataText, &b);
    if (s.ok()) {
      ++ok;
      Capture c = b.Finish();
      for (const OpRow& op : c.ops.Rows()) ASSERT_LT(op.device, c.devices.size());
    } else {
      ASSERT_EQ(s.code(), StatusCode::kInvalidInput) << s.message();
      ASSERT_NE(s.message().find("line "), std::string::npos) << s.message();
      ++invalid;
    }
  }
  EXPECT_GT(ok, 10);
  EXPECT_GT(invalid, 100);
}

}  // namespace
}  // namespace tfdiag::test
