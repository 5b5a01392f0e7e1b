// collectors/k8s and the Kubernetes rules: every manifest and pod file in ../shared/realworld
// parses with the roles, counts and resources stated here (read from the files), each rule fires
// on a manifest written to show it, malformed YAML names file, line and column, and
// `tfdiag analyze` reports what the Kubeflow dist-mnist TFJob and the Volcano example lack.
#include <gtest/gtest.h>

#include <regex>

#include "analyzers/analysis.h"
#include "collectors/k8s/k8s_reader.h"
#include "core/capture_builder.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

std::string Manifest(const std::string& name) { return SharedRealworld("manifests/" + name); }
std::string Pods(const std::string& name) { return SharedRealworld("pods/" + name); }

K8sDeployment ReadOrDie(const std::string& path) {
  K8sDeployment d;
  Status s = ReadK8sFile(path, &d);
  EXPECT_TRUE(s.ok()) << s.message();
  return d;
}

const K8sReplicaType* Role(const K8sDeployment& d, const std::string& role) {
  for (const K8sReplicaType& r : d.replicas)
    if (r.role == role) return &r;
  return nullptr;
}

std::vector<Finding> RunRules(const K8sDeployment& d, const std::string& rule_id) {
  StatusOr<RuleSet> rules = DefaultRuleSet();
  EXPECT_TRUE(rules.ok());
  AnalysisResult r = Analyze(CaptureBuilder().Finish(), *rules, &d);
  std::vector<Finding> out;
  for (const Finding& f : r.findings)
    if (rule_id.empty() || f.rule_id == rule_id) out.push_back(f);
  return out;
}

K8sDeployment FromText(const std::string& text, const std::string& file = "t.yaml") {
  K8sDeployment d;
  Status s = ParseK8sText(text, file, &d);
  EXPECT_TRUE(s.ok()) << s.message();
  return d;
}

TEST(K8sReader, KubeflowTfJobsV1AndV1alpha1) {
  if (!SharedAvailable()) GTEST_SKIP() << "../shared not found";
  // dist-mnist: Chief x1 + PS x1 + Worker x2, no resources, no affinity.
  K8sDeployment d =
      ReadOrDie(Manifest("training-operator_release-1.9_dist-mnist_tf_job_mnist.yaml"));
  ASSERT_EQ(d.replicas.size(), 3u);
  EXPECT_EQ(d.Count("chief"), 1);
  EXPECT_EQ(d.Count("ps"), 1);
  EXPECT_EQ(d.Count("worker"), 2);
  EXPECT_EQ(Role(d, "ps")->role_source, "replica type");
  EXPECT_EQ(Role(d, "ps")->containers[0].res.cpu_limit_m, -1);
  EXPECT_EQ(Role(d, "ps")->Qos(), "BestEffort");
  EXPECT_FALSE(Role(d, "ps")->anti_affinity_hostname);
  EXPECT_EQ(Role(d, "ps")->containers[0].source.path,
            "spec.tfReplicaSpecs.PS.template.spec.containers[0]");
  // v1alpha1: MASTER x1 + WORKER x1 + PS x2 in a replicaSpecs list.
  d = ReadOrDie(Manifest("tf-operator_v0.3_tf_job_v1alpha1.yaml"));
  EXPECT_EQ(d.Count("master"), 1);
  EXPECT_EQ(d.Count("worker"), 1);
  EXPECT_EQ(d.Count("ps"), 2);
  EXPECT_EQ(Role(d, "ps")->source.path, "spec.replicaSpecs[2]");
  // estimator-API: Worker x3 only.
  d = ReadOrDie(Manifest("training-operator_v1.5_estimator-API_distributed_tfjob.yaml"));
  EXPECT_EQ(d.Count("worker"), 3);
  EXPECT_EQ(d.Count("ps"), 0);
  // kueue: PS x1 + Worker x2, requests cpu 1 (a YAML integer) / memory 200Mi, no limits.
  d = ReadOrDie(Manifest("kueue_sample-tfjob.yaml"));
  EXPECT_EQ(d.Count("ps"), 1);
  EXPECT_EQ(d.Count("worker"), 2);
  const K8sResources& r = Role(d, "ps")->containers[0].res;
  EXPECT_EQ(r.cpu_request_m, 1000);
  EXPECT_EQ(r.cpu_limit_m, -1);
  EXPECT_EQ(r.mem_request, 200ll << 20);
  EXPECT_EQ(Role(d, "worker")->Qos(), "Burstable");
  EXPECT_EQ(Role(d, "ps")->containers[0].source.Where() + ".resources",
            Manifest("kueue_sample-tfjob.yaml") +
                " (doc 1): spec.tfReplicaSpecs.PS.template.spec.containers[0].resources");
}

TEST(K8sReader, VolcanoAndDlroverJobs) {
  if (!SharedAvailable()) GTEST_SKIP() << "../shared not found";
  // Volcano: ps x1 (1000m/1000m, 2048Mi) + worker x2 (2000m, memory 2048Mi request, 4096Mi limit).
  K8sDeployment d = ReadOrDie(Manifest("volcano_kubecon-2019_tf-example.yaml"));
  ASSERT_EQ(d.replicas.size(), 2u);
  const K8sReplicaType* ps = Role(d, "ps");
  const K8sReplicaType* w = Role(d, "worker");
  ASSERT_TRUE(ps && w);
  EXPECT_EQ(ps->replicas, 1);
  EXPECT_EQ(w->replicas, 2);
  EXPECT_EQ(ps->source.path, "spec.tasks[0]");
  EXPECT_EQ(ps->containers[0].res.cpu_limit_m, 1000);
  EXPECT_EQ(ps->containers[0].res.mem_limit, 2048ll << 20);
  EXPECT_EQ(ps->Qos(), "Guaranteed");
  EXPECT_EQ(w->containers[0].res.cpu_request_m, 2000);
  EXPECT_EQ(w->containers[0].res.mem_limit, 4096ll << 20);
  EXPECT_EQ(w->Qos(), "Burstable");
  // The flags inside `sh -c` are seen.
  EXPECT_EQ(ps->containers[0].flags.at("job_name"), "ps");
  EXPECT_EQ(w->containers[0].flags.at("variable_update"), "parameter_server");
  // DLRover ElasticJob: ps x1 (cpu 2/2, 3Gi), worker x2 (cpu 2/2, 4Gi), dlrover-master (no role).
  d = ReadOrDie(Manifest("dlrover_criteo_deeprec_manual_job.yaml"));
  EXPECT_EQ(d.Count("ps"), 1);
  EXPECT_EQ(d.Count("worker"), 2);
  EXPECT_EQ(d.replicas.size(), 3u);
  EXPECT_EQ(Role(d, "ps")->containers[0].res.cpu_limit_m, 2000);
  EXPECT_EQ(Role(d, "ps")->containers[0].res.mem_limit, 3ll << 30);
  EXPECT_EQ(Role(d, "worker")->containers[0].res.mem_request, 4ll << 30);
  EXPECT_EQ(Role(d, "ps")->Qos(), "Guaranteed");
  EXPECT_EQ(Role(d, "ps")->source.path, "spec.replicaSpecs.ps");
}

TEST(K8sReader, HelmTemplatesAndNonObjectsAreRejectedClearly) {
  if (!SharedAvailable()) GTEST_SKIP() << "../shared not found";
  for (const char* f : {"arena__charts_tfjob_templates_tfjob.HELM-TEMPLATE.yaml",
                        "arena__charts_tfjob_templates__helpers.tpl"}) {
    K8sDeployment d;
    Status s = ReadK8sFile(Manifest(f), &d);
    EXPECT_FALSE(s.ok()) << f;
    EXPECT_NE(s.message().find("Helm"), std::string::npos) << s.message();
  }
  K8sDeployment d;
  Status s = ReadK8sFile(Manifest("arena__charts_tfjob_values.yaml"), &d);
  EXPECT_NE(s.message().find("no Kubernetes objects"), std::string::npos) << s.message();
  s = ReadK8sFile(Pods("nri-k8s_1_35__kubelet_stats_summary.json"), &d);
  EXPECT_NE(s.message().find("no Kubernetes objects"), std::string::npos) << s.message();
}

TEST(K8sReader, PodsFromKubectlAndKubelet) {
  if (!SharedAvailable()) GTEST_SKIP() << "../shared not found";
  for (const char* f : {"kubectl-neat__pod1-raw.json", "kubectl-neat__pod1-raw.yaml"}) {
    K8sDeployment d = ReadOrDie(Pods(f));
    ASSERT_EQ(d.pods.size(), 1u) << f;
    EXPECT_EQ(d.pods[0].name, "myapp");
    EXPECT_EQ(d.pods[0].node, "minikube");
    EXPECT_EQ(d.pods[0].pod_ip, "172.17.0.2");
    EXPECT_EQ(d.pods[0].qos, "BestEffort");
    EXPECT_EQ(d.pods[0].labels.at("name"), "myapp");
  }
  K8sDeployment d = ReadOrDie(Pods("k9s__render_testdata_p1.json"));
  ASSERT_EQ(d.pods.size(), 1u);
  EXPECT_EQ(d.pods[0].node, "gke-k9s-default-pool-0fa2fb89-lbtf");
  EXPECT_EQ(d.pods[0].pod_ip, "10.44.0.229");
  EXPECT_EQ(d.pods[0].qos, "Guaranteed");
  EXPECT_EQ(d.pods[0].owner_kind, "ReplicaSet");
  EXPECT_EQ(d.pods[0].containers[0].res.cpu_limit_m, 200);
  EXPECT_EQ(d.pods[0].containers[0].res.cpu_request_m, 200);
  EXPECT_EQ(d.pods[0].containers[0].res.mem_limit, 20ll << 20);
  // po.json: requests and limits but status.qosClass BestEffort (test-edited): both are kept.
  d = ReadOrDie(Pods("k9s__render_testdata_po.json"));
  EXPECT_EQ(d.pods[0].qos, "BestEffort");
  EXPECT_EQ(QosOf(d.pods[0].containers), "Burstable");
  // The kubelet's /pods: a PodList of 24 pods on one node.
  d = ReadOrDie(Pods("nri-k8s_1_35__kubelet_pods.json"));
  ASSERT_EQ(d.pods.size(), 24u);
  EXPECT_EQ(d.pods[0].name, "e2e-hpa-6cd8d99884-tggnr");
  EXPECT_EQ(d.pods[0].node, "datagen-1-35");
  EXPECT_EQ(d.pods[0].pod_ip, "10.244.0.6");
  EXPECT_EQ(d.pods[0].qos, "Burstable");
  EXPECT_EQ(d.pods[0].containers[0].res.cpu_request_m, 200);
  EXPECT_EQ(d.pods[0].containers[0].res.cpu_limit_m, 500);
  EXPECT_EQ(d.pods[0].source.path, "items[0]");
  int guaranteed = 0;
  for (const K8sPod& p : d.pods) guaranteed += p.qos == "Guaranteed";
  EXPECT_EQ(guaranteed, 2);  // kindnet and e2e-container-creating
  // None of these pods is a TF task: no rule fires.
  EXPECT_TRUE(RunRules(d, "").empty());
}

TEST(K8sReader, QuantitiesAreExact) {
  EXPECT_EQ(ParseCpuMillis("1"), 1000);
  EXPECT_EQ(ParseCpuMillis("1500m"), 1500);
  EXPECT_EQ(ParseCpuMillis("0.25"), 250);
  EXPECT_EQ(ParseCpuMillis("2.5"), 2500);
  EXPECT_EQ(ParseCpuMillis("0.0001"), 1);  // rounded up to 1m, as the API server does
  EXPECT_EQ(ParseCpuMillis("abc"), -1);
  EXPECT_EQ(ParseMemoryBytes("200Mi"), 200ll << 20);
  EXPECT_EQ(ParseMemoryBytes("5M"), 5000000);
  EXPECT_EQ(ParseMemoryBytes("1e3"), 1000);
}

TEST(K8sReader, MalformedYamlNamesFileLineAndColumn) {
  K8sDeployment d;
  Status s =
      ParseK8sText("apiVersion: v1\nkind: Pod\nmetadata:\n  name: [a, b\n  x: y\n", "bad.yaml", &d);
  ASSERT_FALSE(s.ok());
  std::smatch m;
  std::string msg = s.message();
  ASSERT_TRUE(std::regex_search(msg, m, std::regex("^bad\\.yaml: line (\\d+), column (\\d+): ")))
      << msg;
  EXPECT_GE(std::stoi(m[1]), 4) << msg;
  EXPECT_GE(std::stoi(m[2]), 1) << msg;
}

TEST(K8sReader, RolesInferredFromFlagsTfConfigAndNamesSaySo) {
  K8sDeployment d = FromText(R"(apiVersion: apps/v1
kind: StatefulSet
metadata: {name: trainer-a}
spec:
  replicas: 2
  template:
    spec:
      containers:
      - name: tf
        args: ["python train.py --job_name=ps --task_index=0"]
---
apiVersion: batch/v1
kind: Job
metadata: {name: trainer-b}
spec:
  parallelism: 3
  template:
    spec:
      containers:
      - name: tf
        env:
        - name: TF_CONFIG
          value: '{"cluster":{"worker":["a:2222"]},"task":{"type":"worker","index":0}}'
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: mnist-evaluator}
spec:
  template:
    spec:
      containers: [{name: tf}]
)");
  ASSERT_EQ(d.replicas.size(), 3u);
  EXPECT_EQ(d.replicas[0].role, "ps");
  EXPECT_EQ(d.replicas[0].role_source, "flags (--job_name)");
  EXPECT_EQ(d.replicas[0].replicas, 2);
  EXPECT_EQ(d.replicas[1].role, "worker");
  EXPECT_EQ(d.replicas[1].role_source, "TF_CONFIG");
  EXPECT_EQ(d.replicas[1].replicas, 3);
  EXPECT_EQ(d.replicas[1].source.doc, 1);
  EXPECT_EQ(d.replicas[2].role, "evaluator");
  EXPECT_EQ(d.replicas[2].role_source, "name");
  EXPECT_EQ(d.notes.size(), 3u);
}

// A TFJob that shows every Kubernetes rule: 4 PS (1 worker) without anti-affinity, fractional
// and unequal CPUs, a GPU on PS, thread env wrong.
const char* kBadJob = R"(apiVersion: kubeflow.org/v1
kind: TFJob
metadata:
  name: bad-job  # a comment
spec:
  tfReplicaSpecs:
    PS:
      replicas: 4
      template:
        spec:
          containers:
          - name: tensorflow
            image: "tf:1.15"
            resources:
              requests: {cpu: 500m, memory: 1Gi}
              limits: {cpu: "1.5", memory: 1Gi, nvidia.com/gpu: 1}
            env:
            - {name: TF_NUM_INTRAOP_THREADS, value: "16"}
    Worker:
      replicas: 1
      template:
        spec:
          containers:
          - name: tensorflow
            image: "tf:1.15"
            resources:
              limits: {cpu: "4", memory: 8Gi}
            env:
            - name: TF_NUM_INTRAOP_THREADS
              valueFrom: {resourceFieldRef: {resource: limits.cpu}}
            - {name: TF_NUM_INTEROP_THREADS, value: "4"}
            - {name: OMP_NUM_THREADS, value: "4"}
)";

TEST(K8sRules, EachRuleFiresOnAManifestThatShowsIt) {
  K8sDeployment d = FromText(kBadJob, "bad.yaml");
  const std::string ps = "bad.yaml (doc 1): spec.tfReplicaSpecs.PS.template.spec";
  std::vector<Finding> f = RunRules(d, "ps-colocation");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].subject, ps + ".affinity");
  f = RunRules(d, "cpu-qos");
  ASSERT_EQ(f.size(), 1u);  // the worker is Guaranteed (requests default to limits)
  EXPECT_EQ(f[0].subject, ps + ".containers[0].resources");
  EXPECT_NE(f[0].summary.find("fractional CPU limit 1.5"), std::string::npos) << f[0].summary;
  EXPECT_NE(f[0].summary.find("CPU request 500m != limit 1.5"), std::string::npos);
  f = RunRules(d, "thread-config");
  ASSERT_EQ(f.size(), 1u);  // the worker's downward-API limits.cpu counts as equal
  EXPECT_EQ(f[0].subject, ps + ".containers[0].env");
  EXPECT_NE(f[0].summary.find("TF_NUM_INTRAOP_THREADS=16 but the CPU limit is 2"),
            std::string::npos)
      << f[0].summary;
  f = RunRules(d, "ps-on-gpu");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].subject, ps + ".containers[0].resources.limits");
  f = RunRules(d, "ps-worker-ratio");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].subject, "bad.yaml (doc 1): spec.tfReplicaSpecs.PS.replicas");
}

TEST(K8sRules, PsPodsOnOneNodeFromAPodList) {
  K8sDeployment d = FromText(R"({"apiVersion": "v1", "kind": "List", "items": [
  {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "j-ps-0",
   "labels": {"training.kubeflow.org/replica-type": "ps"}}, "spec": {"nodeName": "n1",
   "containers": [{"name": "tf"}]}, "status": {"qosClass": "Guaranteed"}},
  {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "j-ps-1",
   "labels": {"training.kubeflow.org/replica-type": "ps"}}, "spec": {"nodeName": "n1",
   "containers": [{"name": "tf"}]}, "status": {"qosClass": "Guaranteed"}}]})",
                             "pods.json");
  ASSERT_EQ(d.pods.size(), 2u);
  EXPECT_EQ(d.pods[1].index, 1);
  std::vector<Finding> f = RunRules(d, "ps-colocation");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].subject, "n1");
  EXPECT_EQ(f[0].ops[0], "pods.json (doc 1): items[0]");
}

TEST(K8sRules, LiveLimitAgainstManifestLimit) {
  K8sDeployment d = FromText(kBadJob, "bad.yaml");
  StatusOr<RuleSet> rules = DefaultRuleSet();
  ASSERT_TRUE(rules.ok());
  for (double live : {1.5, 3.0}) {
    CaptureBuilder b;
    ProcessRow p;
    p.task = b.AddTask("ps", 0, 0);
    p.pid = 42;
    p.cpu_limit = live;
    b.AddProcess(p);
    AnalysisResult r = Analyze(b.Finish(), *rules, &d);
    int n = 0;
    for (const Finding& f : r.findings) n += f.rule_id == "k8s-live-mismatch";
    EXPECT_EQ(n, live == 3.0 ? 1 : 0) << live;
  }
}

TEST(K8sAnalyzeE2e, DistMnistAndVolcanoReportWhatTheyLack) {
  if (!SharedAvailable()) GTEST_SKIP() << "../shared not found";
  RunResult r =
      RunTfdiag("analyze --color never '" +
                Manifest("training-operator_release-1.9_dist-mnist_tf_job_mnist.yaml") + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // No resources anywhere: cpu-qos and thread-config on Chief, PS and Worker; one PS: no
  // colocation; 3 workers (chief included) per PS is inside the band.
  for (const char* t : {"Chief", "PS", "Worker"}) {
    std::string at = std::string("spec.tfReplicaSpecs.") + t + ".template.spec.containers[0]";
    // One cpu-qos finding lists the three containers, one line each.
    // Objects of one file name it once ("in <file>:"), then each "- (doc 1): <path>".
    EXPECT_NE(
        r.out.find("in " + Manifest("training-operator_release-1.9_dist-mnist_tf_job_mnist.yaml") +
                   ":\n"),
        std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("- (doc 1): " + at + ".resources"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(at + ".env"), std::string::npos) << t;
  }
  EXPECT_EQ(r.out.find("ps-colocation"), std::string::npos);
  EXPECT_EQ(r.out.find("ps-worker-ratio"), std::string::npos);
  r = RunTfdiag("analyze --color never '" + Manifest("volcano_kubecon-2019_tf-example.yaml") + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // PS is Guaranteed with 1 CPU: no cpu-qos on it; the worker's memory request != limit.
  EXPECT_EQ(r.out.find("spec.tasks[0].template.spec.containers[0].resources"), std::string::npos);
  EXPECT_NE(r.out.find("spec.tasks[1].template.spec.containers[0].resources"), std::string::npos);
  EXPECT_NE(r.out.find("memory request != limit"), std::string::npos);
  EXPECT_NE(r.out.find("spec.tasks[0].template.spec.containers[0].env"), std::string::npos);
  EXPECT_NE(r.out.find("set them for its CPU limit: intra-op 1, inter-op 2, OMP 1"),
            std::string::npos);
  EXPECT_NE(r.out.find("set them for its CPU limit: intra-op 2, inter-op 2, OMP 2"),
            std::string::npos);
}

// A manifest piped in ("-") is read from a temporary copy, but its findings name it "-", as given,
// never the copy (deleted when the run ends).
TEST(K8sAnalyzeE2e, PipedManifestIsNamedAsGiven) {
  if (!SharedAvailable()) GTEST_SKIP() << "../shared not found";
  const std::string manifest =
      Manifest("training-operator_release-1.9_dist-mnist_tf_job_mnist.yaml");
  RunResult r =
      RunShell("(cat '" + manifest + "' | " + TFDIAG_BINARY + " analyze --color never -)");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Objects of one file name it once ("in -:"), then each "(doc 1): spec...".
  EXPECT_NE(r.out.find("      in -:\n      - (doc 1): spec.tfReplicaSpecs.Chief"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("tfdiag-input"), std::string::npos) << r.out;
  EXPECT_EQ(r.err.find("tfdiag-input"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace tfdiag::test
