// Issue 15 on manifests: hostile and broken YAML never crashes, hangs or grows without bound in
// `analyze` and `fix` (exit 2 with the file, line or field), quantities and replica counts are
// read as the Kubernetes API server reads them, and CR-only line endings are accepted. Inputs are
// generated here (the shapes the fuzzer and hand-made cases found) next to ../shared manifests.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <chrono>

#include "actions/k8s_fix.h"
#include "collectors/k8s/k8s_reader.h"
#include "collectors/k8s/yaml_tree.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

Status Parse(const std::string& text, K8sDeployment* d = nullptr) {
  K8sDeployment local;
  return ParseK8sText(text, "h.yaml", d != nullptr ? d : &local);
}

// A TFJob whose PS container has `resources` (a YAML flow mapping) and PS `replicas`.
std::string Job(const std::string& resources, const std::string& replicas = "2") {
  return "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: j}\nspec:\n"
         "  tfReplicaSpecs:\n    PS:\n      replicas: " +
         replicas +
         "\n      template:\n        spec:\n          containers:\n"
         "          - name: tensorflow\n            resources: " +
         resources + "\n";
}

TEST(K8sQuantity, KubernetesGrammarAndRounding) {
  EXPECT_EQ(ParseCpuMillis("2"), 2000);
  EXPECT_EQ(ParseCpuMillis("+2"), 2000);
  EXPECT_EQ(ParseCpuMillis("1500m"), 1500);
  EXPECT_EQ(ParseCpuMillis(".5"), 500);
  EXPECT_EQ(ParseCpuMillis("5."), 5000);
  EXPECT_EQ(ParseCpuMillis("0.1m"), 1);  // sub-millicore rounds up, as the API server does
  EXPECT_EQ(ParseCpuMillis("1e-3"), 1);
  EXPECT_EQ(ParseCpuMillis("1e3m"), -1);   // an exponent or an SI suffix, not both
  EXPECT_EQ(ParseCpuMillis("2E0"), 2000);  // "E" followed by digits is an exponent
  EXPECT_EQ(ParseCpuMillis("1k"), 1000000);
  EXPECT_EQ(ParseCpuMillis("-0"), 0);
  EXPECT_EQ(ParseCpuMillis("0.000000000000000000000000000001"), 1);
  EXPECT_EQ(ParseMemoryBytes("1Ki"), 1024);
  EXPECT_EQ(ParseMemoryBytes("1.5Gi"), 1610612736);
  EXPECT_EQ(ParseMemoryBytes("0.5Ki"), 512);
  EXPECT_EQ(ParseMemoryBytes("1E"), 1000000000000000000LL);
  EXPECT_EQ(ParseMemoryBytes("7Ei"), 7LL << 60);
  EXPECT_EQ(ParseMemoryBytes("1m"), 1);  // 0.001 bytes, rounded up
  EXPECT_EQ(ParseMemoryBytes("123456789"), 123456789);
}

TEST(K8sQuantity, NonsenseIsRejectedWithAReason) {
  std::string e;
  // The values.
  EXPECT_EQ(ParseCpuMillis("99999999999999999999999m", &e), -1);
  EXPECT_NE(e.find("exceeds 2^63-1"), std::string::npos) << e;
  EXPECT_EQ(ParseCpuMillis("9223372036854775", &e), -1);
  EXPECT_NE(e.find("8192"), std::string::npos) << e;
  EXPECT_EQ(ParseMemoryBytes("abc", &e), -1);
  EXPECT_NE(e.find("not a Kubernetes quantity"), std::string::npos) << e;
  EXPECT_EQ(ParseMemoryBytes("-1Gi", &e), -1);
  EXPECT_NE(e.find("negative"), std::string::npos) << e;
  EXPECT_EQ(ParseMemoryBytes("9999999999999Ei", &e), -1);
  EXPECT_NE(e.find("exceeds 2^63-1 bytes"), std::string::npos) << e;
  EXPECT_EQ(ParseMemoryBytes("8Ei", &e), -1);  // 2^63: one past the bound
  for (const char* bad : {"", "m", ".", "1K", "1Mb", "1 Gi", "1e", "1e+", "0x10", "1..2", "--1",
                          "1Gi ", "\xff", "1.2.3", "Ki"}) {
    EXPECT_EQ(ParseMemoryBytes(bad), -1) << bad;
    EXPECT_EQ(ParseCpuMillis(bad), -1) << bad;
  }
  // The use-after-free of issue 15: a 300,000-letter value (ASan reported it with 25).
  EXPECT_EQ(ParseCpuMillis(std::string(300000, 'a'), &e), -1);
  EXPECT_LT(e.size(), 200u) << "the error quotes the value cut short";
  EXPECT_EQ(ParseCpuMillis(std::string(25, 'x')), -1);
  EXPECT_EQ(ParseCpuMillis("1" + std::string(300000, '0')), -1);
  EXPECT_EQ(ParseCpuMillis("0." + std::string(300000, '0') + "1"), 1);
}

TEST(K8sQuantity, BadFieldsNameTheirPath) {
  struct Case {
    std::string text, field, what;
  };
  const Case cases[] = {
      {Job("{limits: {cpu: 99999999999999999999999m}}"),
       "spec.tfReplicaSpecs.PS.template.spec.containers[0].resources.limits.cpu", "2^63-1"},
      {Job("{requests: {memory: abc}}"),
       "spec.tfReplicaSpecs.PS.template.spec.containers[0].resources.requests.memory",
       "not a Kubernetes quantity"},
      {Job("{limits: {memory: -1Gi}}"), "resources.limits.memory", "negative"},
      {Job("{limits: {memory: 9999999999999Ei}}"), "resources.limits.memory", "2^63-1"},
      {Job("{limits: {nvidia.com/gpu: 0.5}}"), "resources.limits.nvidia.com/gpu", "whole"},
      {Job("{limits: {cpu: ''}}"), "resources.limits.cpu", "bad cpu quantity: empty; expected"},
      {Job("{limits: [1]}"), "resources.limits", "found a list"},
      {Job("{}", "\"abc\""), "spec.tfReplicaSpecs.PS.replicas", "write it without quotes"},
      {Job("{}", "abc"), "spec.tfReplicaSpecs.PS.replicas", "expected an integer"},
      {Job("{}", "2147483648"), "spec.tfReplicaSpecs.PS.replicas", "0 to 2147483647"},
      {Job("{}", "-5"), "spec.tfReplicaSpecs.PS.replicas", "0 to 2147483647"},
      {Job("{}", "2.5"), "spec.tfReplicaSpecs.PS.replicas", "expected an integer"},
  };
  for (const Case& c : cases) {
    Status s = Parse(c.text);
    ASSERT_FALSE(s.ok()) << c.text;
    EXPECT_EQ(s.code(), StatusCode::kInvalidInput);
    EXPECT_EQ(s.message().rfind("h.yaml (doc 1): ", 0), 0u) << s.message();
    EXPECT_NE(s.message().find(c.field), std::string::npos) << s.message();
    EXPECT_NE(s.message().find(c.what), std::string::npos) << s.message();
  }
  K8sDeployment d;
  ASSERT_TRUE(Parse(Job("{limits: {cpu: 1500m}}", "2147483647"), &d).ok());
  EXPECT_EQ(d.replicas[0].replicas, 2147483647);
  EXPECT_EQ(d.replicas[0].containers[0].res.cpu_limit_m, 1500);
  ASSERT_TRUE(Parse(Job("{}", "0"), &d).ok());
}

// Each shape from the issue, through the built binary: exit 2, file named, no crash or hang.
TEST(K8sHostileE2e, AnalyzeAndFixFailCleanly) {
  TempDir dir;
  struct Case {
    const char* file;
    std::string text;
    const char* expect;  // in stderr
  };
  const Case cases[] = {
      {"comma.yaml", ",", "comma.yaml: line 1, column 1"},  // yaml-cpp 0.7 looped forever
      // A .json that names apiVersion and kind goes to the YAML reader.
      {"short.json", "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",", "short.json: line "},
      {"short2.json", "{\"apiVersion\": [, \"kind\": 1}", "short2.json: line 1"},
      {"noapi.yaml",
       "kind: TFJob\nmetadata: {name: x}\nspec:\n  tfReplicaSpecs:\n    PS:\n      template: {}\n",
       "noapi.yaml (doc 1): spec.tfReplicaSpecs.PS.template.spec: expected a pod spec"},
      {"md.yaml", "apiVersion: v1\nkind: Pod\nmetadata: ''\n",
       "md.yaml (doc 1): metadata: expected a mapping"},
      {"uaf.yaml", Job("{limits: {cpu: " + std::string(300000, 'a') + "}}"),
       "resources.limits.cpu: bad cpu quantity"},
      {"deep.yaml", "apiVersion: v1\nkind: Pod\nspec: " + std::string(100000, '[') + "\n",
       "nesting deeper than 256 levels"},
      {"kind.yaml", "apiVersion: v1\nkind: {a: b}\n", "kind: expected a string, found a mapping"},
      {"bin.yaml", std::string("apiVersion: v1\nkind: Pod\n\xff\xfe\x00", 28), "bin.yaml: line "},
  };
  for (const Case& c : cases) {
    WriteFile(dir.File(c.file), c.text);
    for (const char* cmd : {"analyze", "fix"}) {
      RunResult r = RunTfdiag(std::string(cmd) + " '" + dir.File(c.file) + "'");
      EXPECT_EQ(r.exit_code, 2) << cmd << " " << c.file << "\n" << r.err;
      EXPECT_NE(r.err.find(c.expect), std::string::npos) << cmd << " " << c.file << "\n" << r.err;
      EXPECT_EQ(r.err.find("operator[]"), std::string::npos) << r.err;
    }
  }
}

// Billion laughs: 9 levels of 10 aliases (10^9 nodes if expanded) stop at kMaxAliasNodes with
// an error saying so, quickly and in bounded memory.
TEST(K8sHostileE2e, AliasExpansionIsBounded) {
  std::string t = "apiVersion: v1\nkind: Pod\nmetadata:\n  a0: &a0 [lol]\n";
  for (int i = 1; i <= 9; ++i) {
    t += "  a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) t += (k ? ", *a" : "*a") + std::to_string(i - 1);
    t += "]\n";
  }
  t += "spec: {containers: []}\n";
  Status s = Parse(t);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("aliases expand to more than 100000 nodes"), std::string::npos)
      << s.message();
  TempDir dir;
  WriteFile(dir.File("laughs.yaml"), t);
  for (const char* cmd : {"analyze", "fix"}) {
    // Under a 512 MB address-space-independent check: the time and the exit code.
    auto start = std::chrono::steady_clock::now();
    RunResult r = RunTfdiag(std::string(cmd) + " '" + dir.File("laughs.yaml") + "'");
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("billion laughs"), std::string::npos) << r.err;
    EXPECT_LT(secs, 10.0);
  }
  // Anchors used a few times, as real manifests do, are expanded.
  K8sDeployment d;
  ASSERT_TRUE(Parse("apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: a}\nspec:\n"
                    "  tfReplicaSpecs:\n    PS:\n      replicas: 1\n      template: &t\n"
                    "        spec: {containers: [{name: c, resources: {limits: {cpu: 2}}}]}\n"
                    "    Worker: {replicas: 3, template: *t}\n",
                    &d)
                  .ok());
  ASSERT_EQ(d.replicas.size(), 2u);
  EXPECT_EQ(d.replicas[1].containers[0].res.cpu_limit_m, 2000);
  // An alias to an anchor not yet closed (a cycle) is an error, not a loop.
  EXPECT_FALSE(Parse("apiVersion: v1\nkind: Pod\nmetadata: &m {x: *m}\n").ok());
}

TEST(K8sHostile, CrOnlyLineEndingsAreAccepted) {
  if (!SharedAvailable()) GTEST_SKIP() << "../shared not found";
  for (const char* f : {"kueue_sample-tfjob.yaml", "volcano_kubecon-2019_tf-example.yaml"}) {
    std::string text = ReadFile(SharedRealworld(std::string("manifests/") + f));
    K8sDeployment lf, cr, crlf;
    ASSERT_TRUE(ParseK8sText(text, f, &lf).ok());
    std::string cr_text = text, crlf_text;
    for (char& c : cr_text)
      if (c == '\n') c = '\r';
    for (char c : text) crlf_text += c == '\n' ? std::string("\r\n") : std::string(1, c);
    Status s = ParseK8sText(cr_text, f, &cr);
    ASSERT_TRUE(s.ok()) << s.message();
    ASSERT_TRUE(ParseK8sText(crlf_text, f, &crlf).ok());
    ASSERT_EQ(cr.replicas.size(), lf.replicas.size()) << f;
    ASSERT_EQ(crlf.replicas.size(), lf.replicas.size()) << f;
    for (size_t i = 0; i < lf.replicas.size(); ++i) {
      EXPECT_EQ(cr.replicas[i].replicas, lf.replicas[i].replicas);
      EXPECT_EQ(cr.replicas[i].containers[0].res.cpu_limit_m,
                lf.replicas[i].containers[0].res.cpu_limit_m);
      EXPECT_EQ(cr.replicas[i].containers[0].argv, lf.replicas[i].containers[0].argv);
    }
  }
}

// 10,000 documents: `fix` and `analyze` stay linear (the issue measured 1.15 GB and 18 s for
// `fix`). Peak RSS of the child is read with getrusage(RUSAGE_CHILDREN).
TEST(K8sHostileE2e, TenThousandDocumentsStayLinear) {
  TempDir dir;
  std::string t;
  for (int i = 0; i < 10000; ++i) {
    t += "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: tf-ps-" + std::to_string(i) +
         "}\nspec:\n  replicas: 1\n  template:\n    metadata: {labels: {role: ps}}\n    spec:\n"
         "      containers:\n      - name: ps\n        image: tf:1.15\n"
         "        resources: {requests: {cpu: 500m, memory: 1Gi}}\n";
  }
  WriteFile(dir.File("many.yaml"), t);
  auto start = std::chrono::steady_clock::now();
  RunResult r = RunTfdiag("fix -q --cpus 2 '" + dir.File("many.yaml") + "' > /dev/null");
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  struct rusage ru;
  getrusage(RUSAGE_CHILDREN, &ru);
  EXPECT_LT(ru.ru_maxrss, 400 * 1024) << "KiB peak RSS of a child";
  EXPECT_LT(secs, 60.0);
  std::printf("fix on %zu bytes, 10000 documents: %.2f s\n", t.size(), secs);
}

}  // namespace
}  // namespace tfdiag::test

namespace tfdiag::test {
namespace {

// Found by fuzz_manifest: an alias to a null put inside [..] was written as ! '' (a string), so
// fix's output no longer read as the input did.
TEST(K8sHostile, NullThroughAnAliasInFlowReadsBackAsNull) {
  YamlStream in("a: &n\nb: [*n, {c: *n}]\n", "n.yaml");
  std::unique_ptr<YamlNode> doc;
  ASSERT_TRUE(*in.Next(&doc));
  YamlWriter w;
  ASSERT_TRUE(w.Document(doc.get()).ok());
  StatusOr<std::string> text = w.Finish();
  ASSERT_TRUE(text.ok());
  YamlStream again(*text, "again.yaml");
  std::unique_ptr<YamlNode> back;
  ASSERT_TRUE(*again.Next(&back)) << *text;
  ASSERT_NE(back->Find("b"), nullptr) << *text;
  EXPECT_TRUE(back->Find("b")->Item(0).IsNull()) << *text;
  EXPECT_TRUE(back->Find("b")->Item(1).Find("c")->IsNull()) << *text;
}

}  // namespace
}  // namespace tfdiag::test
