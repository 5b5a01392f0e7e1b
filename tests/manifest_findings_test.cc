// Manifest findings in the job's own numbers and words (issue 31 items 2, 5, 6): group headers
// name the objects and the cause, fix snippets use each container's own CPU limit, nothing in a
// manifest is dropped without a note, and the CLI keeps inputs apart from rule ids.
#include <gtest/gtest.h>

#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

// `n` Deployments "tf-worker-<i>" in one file, each with one container of `cpu` CPUs (request =
// limit) and no memory limit.
std::string Deployments(int n, const std::string& cpu) {
  std::string s;
  for (int i = 0; i < n; ++i) {
    s += fmt::format(R"(---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: tf-worker-{}}}
spec:
  replicas: 1
  template:
    metadata: {{labels: {{role: worker}}}}
    spec:
      containers:
      - name: tf
        resources:
          requests: {{cpu: "{}"}}
          limits: {{cpu: "{}"}}
)",
                     i, cpu, cpu);
  }
  return s;
}

int Count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

TEST(ManifestFindings, HeadersNameTheObjectsAndTheCause) {
  TempDir dir;
  WriteFile(dir.File("tf-cluster.yaml"), Deployments(24, "4"));
  RunResult r = RunTfdiag("analyze --color never '" + dir.File("tf-cluster.yaml") + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("cpu-qos on 24 Deployments in " + dir.File("tf-cluster.yaml") +
                       ": no memory limit"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("thread-config on 24 Deployments in " + dir.File("tf-cluster.yaml") +
                       ": not set: TF_NUM_INTRAOP_THREADS"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("manifests"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("CPU request 4 CPUs"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("settings missing 3"), std::string::npos) << r.out;
}

// The snippet is the container's own: 1 thread for 0.5 CPU, 10 for 10 CPUs, never a fixed 4.
TEST(ManifestFindings, SnippetsUseEachContainersLimit) {
  TempDir dir;
  for (const auto& [cpu, want] : {std::pair<std::string, std::string>{"500m", "1"}, {"10", "10"}}) {
    const std::string f = dir.File("job-" + cpu + ".yaml");
    WriteFile(f, Deployments(2, cpu));
    RunResult r = RunTfdiag("analyze --color never '" + f + "'");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("For this container: TF_NUM_INTRAOP_THREADS and OMP_NUM_THREADS \"" +
                         want + "\""),
              std::string::npos)
        << cpu << "\n"
        << r.out;
    EXPECT_EQ(r.out.find("value: \"4\""), std::string::npos) << r.out;
    RunResult fixed = RunTfdiag("fix --memory 1Gi '" + f + "'");
    ASSERT_EQ(fixed.exit_code, 0) << fixed.err;
    EXPECT_EQ(Count(fixed.out, "name: OMP_NUM_THREADS\n          value: \"" + want + "\""), 2)
        << fixed.out;
  }
}

TEST(ManifestFindings, NothingDroppedWithoutANote) {
  TempDir dir;
  WriteFile(dir.File("old.yaml"), R"(apiVersion: kubeflow.org/v1alpha1
kind: TFJob
metadata: {name: old}
spec:
  replicaSpecs:
  - template:
      spec:
        containers: [{name: tensorflow, image: tf:1.4}]
  - replicas: 8
    tfReplicaType: PS
    template:
      spec:
        containers: [{name: tensorflow, image: tf:1.4}]
---
apiVersion: kubeflow.org/v1
kind: TFJob
metadata: {name: pai}
spec:
  tfReplicaSpecs:
    AIMaster:
      replicas: 1
      template:
        spec:
          containers: [{name: aimaster, image: pai/aimaster}]
    Worker:
      replicas: 2
      template:
        spec:
          containers: [{name: tensorflow, image: tf:1.15}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
)");
  RunResult r = RunTfdiag("analyze --color never -f json '" + dir.File("old.yaml") + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("no tfReplicaType: read as MASTER"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("replica type 'AIMaster' (1 replica) is not a TF role"), std::string::npos)
      << r.err;
  // The same notes in the JSON report.
  EXPECT_NE(r.out.find("no tfReplicaType: read as MASTER"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("AIMaster"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 object skipped (not a TF job or pod): ConfigMap"), std::string::npos)
      << r.out;
  // The master is counted (a cpu-qos finding on it).
  EXPECT_NE(r.out.find("replicaSpecs[0].template.spec.containers[0].resources"), std::string::npos)
      << r.out;
  RunResult text = RunTfdiag("analyze --color never '" + dir.File("old.yaml") + "'");
  EXPECT_NE(text.out.find("hot-ps, idle-ps: needs a timeline, profile or live data"),
            std::string::npos)
      << text.out;
  EXPECT_EQ(text.out.find("the capture has 0"), std::string::npos) << text.out;
}

TEST(ManifestFindings, DisableTakesOneRuleIdPerFlag) {
  TempDir dir;
  const std::string f = dir.File("tf-cluster.yaml");
  WriteFile(f, Deployments(2, "4"));
  RunResult r = RunTfdiag("analyze --color never --disable cpu-qos '" + f + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("[MEDIUM] cpu-qos"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("thread-config on 2 Deployments"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  cpu-qos: disabled"), std::string::npos) << r.out;
  r = RunTfdiag("analyze --color never --disable cpu-qos,thread-config '" + f + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("  cpu-qos, thread-config: disabled"), std::string::npos) << r.out;
  r = RunTfdiag("analyze --disable no-such-rule '" + f + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--disable no-such-rule: no such rule"), std::string::npos) << r.err;
}

TEST(ManifestFindings, KubectlTableOutputIsNamed) {
  TempDir dir;
  WriteFile(dir.File("pods.txt"),
            "NAME                 READY   STATUS    RESTARTS   AGE\n"
            "mnist-ps-0           1/1     Running   0          3d\n"
            "mnist-worker-0       1/1     Running   0          3d\n");
  RunResult r = RunTfdiag("analyze '" + dir.File("pods.txt") + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("pods.txt: line 1: this looks like kubectl's table output"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("kubectl get pods -o json"), std::string::npos) << r.err;
}

// SARIF 2.1.0 for code review (issue 31 item 7): each manifest finding points at the line of its
// container; rules[] lists the rules that ran; an object annotated tfdiag.io/ignore gets no
// finding of those rules and the report says it was ignored.
TEST(ManifestFindings, SarifPointsAtLinesAndIgnoreAnnotationIsListed) {
  TempDir dir;
  const std::string f = dir.File("job with space.yaml");
  WriteFile(f, R"(apiVersion: kubeflow.org/v1
kind: TFJob
metadata:
  name: mnist
  annotations:
    tfdiag.io/ignore: "thread-config, ps-colocation"
spec:
  tfReplicaSpecs:
    PS:
      replicas: 2
      template:
        spec:
          containers:
          - name: tensorflow
            resources:
              limits: {cpu: "2", memory: 4Gi}
    Worker:
      replicas: 2
      template:
        metadata:
          annotations: {tfdiag.io/ignore: cpu-qos}
        spec:
          containers:
          - name: tensorflow
)");
  RunResult r = RunTfdiag("analyze -f sarif '" + f + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  WriteFile(dir.File("out.sarif"), r.out);
  const char* kCheck = R"(
import json, sys
d = json.load(open(sys.argv[1]))
run = d["runs"][0]
ids = [x["id"] for x in run["tool"]["driver"]["rules"]]
out = [d["version"], str("cpu-qos" in ids)]
for x in run["results"]:
    loc = x["locations"][0]["physicalLocation"]
    assert ids[x["ruleIndex"]] == x["ruleId"]
    fix = "-"
    if "fixes" in x:
        rep = x["fixes"][0]["artifactChanges"][0]["replacements"][0]
        fix = "%d+%d:%s" % (rep["deletedRegion"]["startLine"],
                            rep["deletedRegion"]["endLine"] - rep["deletedRegion"]["startLine"],
                            rep["insertedContent"]["text"].split("\n")[0].strip())
    out.append("%s %s %s %d %s %s" % (x["ruleId"], x["level"], loc["artifactLocation"]["uri"].split("/")[-1],
                                  loc["region"]["startLine"], "Fix:" in x["message"]["text"], fix))
print("\n".join(out))
)";
  WriteFile(dir.File("check.py"), kCheck);
  RunResult check =
      RunShell("python3 '" + dir.File("check.py") + "' '" + dir.File("out.sarif") + "'");
  ASSERT_EQ(check.exit_code, 0) << check.err << r.out;
  // The PS container is Guaranteed (requests default to its limits), the worker ignores
  // cpu-qos, the job ignores thread-config and ps-colocation: no result is left.
  EXPECT_EQ(check.out, "2.1.0\nTrue\n") << check.out << r.out;
  RunResult text = RunTfdiag("analyze --color never '" + f + "'");
  EXPECT_NE(text.out.find("thread-config: ignored on 2 objects (tfdiag.io/ignore annotation)"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("cpu-qos: ignored on 1 object (tfdiag.io/ignore annotation)"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("ps-colocation: ignored on 1 object"), std::string::npos) << text.out;
  // Without the annotations the same file has findings, each at its container's line.
  std::string plain = ReadFile(f);
  for (const std::string cut :
       {"  annotations:\n    tfdiag.io/ignore: \"thread-config, ps-colocation\"\n",
        "        metadata:\n          annotations: {tfdiag.io/ignore: cpu-qos}\n"}) {
    ASSERT_NE(plain.find(cut), std::string::npos) << cut;
    plain.erase(plain.find(cut), cut.size());
  }
  WriteFile(f, plain);
  r = RunTfdiag("analyze -f sarif '" + f + "'");
  WriteFile(dir.File("out.sarif"), r.out);
  check = RunShell("python3 '" + dir.File("check.py") + "' '" + dir.File("out.sarif") + "'");
  EXPECT_EQ(check.out,
            "2.1.0\nTrue\n"
            // No CPU limit on the worker: its fixes need --cpus, so SARIF carries none.
            "cpu-qos warning job%20with%20space.yaml 20 True -\n"
            "ps-colocation warning job%20with%20space.yaml 11 True 15+0:affinity:\n"
            "thread-config warning job%20with%20space.yaml 12 True 15+0:env:\n"
            "thread-config warning job%20with%20space.yaml 20 True -\n")
      << check.out << plain;
}

}  // namespace
}  // namespace tfdiag::test
