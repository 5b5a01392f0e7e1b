// Issue 47: `tfdiag fix` on one mapping of many keys. Its edits compared mappings key by key
// with a scan each (YamlNode::Find), quadratic in the keys: 40,000 took 20-60 s. Here a TFJob
// whose annotations (left alone) and whose container's resources.limits (edited: the fix adds
// cpu and memory there) hold 50,000 keys each: the fix is placed in the text as it is, every key
// is kept in order, only the fixed lines change, and the merge patch leaves the annotations out.
// (The time, against analyze's on the same file, is bench/fix_bench.sh's.)
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "actions/k8s_fix.h"
#include "collectors/k8s/k8s_reader.h"

namespace tfdiag::test {
namespace {

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

TEST(FixLarge, AMappingOf50000KeysIsEditedInPlaceAndKeptWhole) {
  constexpr int kKeys = 50000;
  std::string text = "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata:\n  name: big\n";
  text += "  annotations:\n";
  for (int i = 0; i < kKeys; ++i) text += fmt::format("    note-{:06d}: v{}\n", i, i);
  text +=
      "spec:\n  tfReplicaSpecs:\n    Worker:\n      replicas: 2\n      template:\n        spec:\n"
      "          containers:\n          - name: tensorflow\n"
      "            image: tensorflow/tensorflow:2.13.0\n            resources:\n"
      "              limits:\n";
  for (int i = 0; i < kKeys; ++i)
    text += fmt::format("                example.com/r-{:06d}: 1\n", i);
  text += "              requests:\n                cpu: \"2\"\n                memory: 4Gi\n";

  FixOptions options;
  options.default_cpus = 4;
  StatusOr<FixResult> r = FixManifest(text, "big.yaml", options);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(r->changed);
  EXPECT_TRUE(r->notes.empty()) << "written anew instead of edited in place: " << r->notes[0];

  // Every input line is in the output, in order, but the request the fix raised.
  const std::vector<std::string> in = Lines(text), out = Lines(r->yaml);
  size_t at = 0, kept = 0;
  for (const std::string& l : in) {
    if (l == "                cpu: \"2\"") continue;
    while (at < out.size() && out[at] != l) ++at;
    ASSERT_LT(at, out.size()) << "input line lost or moved: " << l;
    ++at, ++kept;
  }
  EXPECT_EQ(kept, in.size() - 1);
  // The fix's lines: limits' cpu and memory, the thread variables.
  EXPECT_LT(out.size() - in.size(), 40u);
  const std::string limits_cpu = "                cpu: \"4\"";
  EXPECT_NE(r->yaml.find(limits_cpu), std::string::npos) << "no cpu limit added";

  // The output reads as a manifest with both mappings whole.
  K8sDeployment model;
  ASSERT_TRUE(ParseK8sText(r->yaml, "fixed.yaml", &model).ok());
  ASSERT_EQ(r->patches.size(), 1u);
  EXPECT_EQ(r->patches[0].find("note-"), std::string::npos) << "the unchanged annotations patched";
  EXPECT_NE(r->patches[0].find("\"cpu\":\"4\""), std::string::npos);
}

}  // namespace
}  // namespace tfdiag::test
