// Issue 14 items 7, 8 and 12 on manifests: old and odd manifests (TfJob of 2017, a PS without a
// template, one Deployment per PS, a DLRover master), `fix` changes only what a finding raised
// and never makes things worse, and manifests/pod lists appear in Import and in JSON
// (inputs[] rows, the "deployment" section). Generated manifests next to ../shared ones.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <regex>

#include "analyzers/analysis.h"
#include "analyzers/grouping.h"
#include "collectors/k8s/k8s_reader.h"
#include "core/capture_builder.h"
#include "tests/fixtures.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

// tensorflow/k8s (2017): kind TfJob, tensorflow.org/v1alpha1, a PS with no template (the
// operator ran its own PS server image).
const char* kTfJob2017 = R"(apiVersion: "tensorflow.org/v1alpha1"
kind: "TfJob"
metadata:
  name: "inception"
spec:
  replicaSpecs:
    - replicas: 1
      tfReplicaType: MASTER
      template:
        spec:
          containers:
            - image: gcr.io/tf-on-k8s-dogfood/tf_sample:dc944ff
              name: tensorflow
          restartPolicy: OnFailure
    - replicas: 2
      tfReplicaType: PS
)";

// A 2016 hand-written cluster: one Deployment per PS, no anti-affinity.
std::string HandWrittenCluster(int ps) {
  std::string t;
  for (int i = 0; i < ps; ++i) {
    t += "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: tf-ps-" + std::to_string(i) +
         "}\nspec:\n  replicas: 1\n  template:\n    metadata: {labels: {job: ps}}\n    spec:\n"
         "      containers:\n      - name: ps\n        image: tensorflow/tensorflow:0.12.0\n"
         "        command: [python, ps.py, --job_name=ps, --task_index=" +
         std::to_string(i) +
         "]\n        resources: {limits: {cpu: 4, memory: 8Gi}, requests: "
         "{cpu: 4, memory: 8Gi}}\n        env: [{name: TF_NUM_INTRAOP_THREADS, "
         "value: \"4\"}, {name: TF_NUM_INTEROP_THREADS, value: \"4\"}, {name: "
         "OMP_NUM_THREADS, value: \"4\"}]\n";
  }
  return t;
}

std::vector<Finding> Findings(const K8sDeployment& d, const std::string& rule) {
  StatusOr<RuleSet> rules = DefaultRuleSet();
  EXPECT_TRUE(rules.ok());
  AnalysisResult r = Analyze(CaptureBuilder().Finish(), *rules, &d);
  std::vector<Finding> out;
  // One per object (Analyze groups them per rule and cause).
  for (const Finding& f : UngroupFindings(r.findings))
    if (f.rule_id == rule) out.push_back(f);
  return out;
}

TEST(K8sOldManifests, TfJob2017AndAPsWithoutATemplate) {
  K8sDeployment d;
  Status s = ParseK8sText(kTfJob2017, "tfjob.yaml", &d);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(d.Count("master"), 1);
  EXPECT_EQ(d.Count("ps"), 2);
  std::string notes;
  for (const std::string& n : d.notes) notes += n + "\n";
  EXPECT_NE(notes.find("TfJob 'inception' (tensorflow.org/v1alpha1) read as a TFJob v1alpha1"),
            std::string::npos)
      << notes;
  EXPECT_NE(notes.find("spec.replicaSpecs[1]: no pod template (the operator's default PS)"),
            std::string::npos)
      << notes;
  TempDir dir;
  WriteFile(dir.File("tfjob.yaml"), kTfJob2017);
  RunResult r = RunTfdiag("analyze --color never '" + dir.File("tfjob.yaml") + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = RunTfdiag("fix '" + dir.File("tfjob.yaml") + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(K8sOldManifests, OneDeploymentPerPsRaisesColocationAndFixSharesTheLabel) {
  K8sDeployment d;
  ASSERT_TRUE(ParseK8sText(HandWrittenCluster(8), "cluster.yaml", &d).ok());
  EXPECT_EQ(d.Count("ps"), 8);
  std::vector<Finding> f = Findings(d, "ps-colocation");
  ASSERT_EQ(f.size(), 8u);
  EXPECT_NE(f[0].summary.find("one of 8 PS workloads (8 PS pods in all)"), std::string::npos)
      << f[0].summary;
  // One PS Deployment alone raises nothing.
  K8sDeployment one;
  ASSERT_TRUE(ParseK8sText(HandWrittenCluster(1), "one.yaml", &one).ok());
  EXPECT_TRUE(Findings(one, "ps-colocation").empty());
  // fix: each Deployment gets the same tfdiag.io/job label and a term matching all of them.
  TempDir dir;
  WriteFile(dir.File("cluster.yaml"), HandWrittenCluster(8));
  RunResult fixed = RunTfdiag("fix -q '" + dir.File("cluster.yaml") + "'");
  ASSERT_EQ(fixed.exit_code, 0) << fixed.err;
  size_t labels = 0;
  for (size_t p = 0; (p = fixed.out.find("tfdiag.io/job: tf", p)) != std::string::npos; ++p)
    ++labels;
  EXPECT_EQ(labels, 16u) << fixed.out;  // a label and a selector per Deployment
  WriteFile(dir.File("fixed.yaml"), fixed.out);
  RunResult after = RunTfdiag("analyze -f json '" + dir.File("fixed.yaml") + "'");
  ASSERT_EQ(after.exit_code, 0) << after.err;
  EXPECT_NE(after.out.find("\"findings\": []"), std::string::npos) << after.out;
}

TEST(K8sOldManifests, DlroverMasterIsNeitherPsNorWorker) {
  if (!SharedAvailable()) GTEST_SKIP() << "../shared not found";
  K8sDeployment d;
  ASSERT_TRUE(
      ReadK8sFile(SharedRealworld("manifests/dlrover_criteo_deeprec_manual_job.yaml"), &d).ok());
  for (const K8sReplicaType& r : d.replicas) {
    if (r.name == "dlrover-master") {
      EXPECT_EQ(r.role, "") << r.role_source;
    }
  }
  for (const char* rule : {"cpu-qos", "thread-config"}) {
    for (const Finding& f : Findings(d, rule))
      EXPECT_EQ(f.subject.find("dlrover-master"), std::string::npos) << f.subject;
  }
}

// A GPU worker without a CPU limit, a PS with a 1-CPU limit, a single PS replica: fix changes
// only what findings raise, adds no CPU limit without --cpus, keeps inter-op threads >= 2, adds
// no anti-affinity for one PS.
const std::string kGpuJob = TfJobYaml(
    "gpu",
    {{"PS", 1,
      "            resources: {requests: {cpu: 1, memory: 2Gi}, limits: {cpu: 1, memory: 2Gi}}\n"},
     {"Worker", 2,
      "            resources: {requests: {cpu: 500m, memory: 8Gi}, limits: {nvidia.com/gpu: "
      "1}}\n"}});

TEST(K8sFixPolicy, FixesOnlyWhatFindingsRaiseAndNeverMakesThingsWorse) {
  TempDir dir;
  WriteFile(dir.File("gpu.yaml"), kGpuJob);
  RunResult r = RunTfdiag("fix '" + dir.File("gpu.yaml") + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("podAntiAffinity"), std::string::npos) << "one PS: no finding asked";
  EXPECT_EQ(r.out.find("limits: {nvidia.com/gpu: 1, cpu"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("Worker.template.spec.containers[0]: no CPU limit: pass --cpus N"),
            std::string::npos)
      << r.err;
  // The PS thread env: intra-op and OpenMP 1, inter-op 2.
  EXPECT_NE(r.out.find("name: TF_NUM_INTEROP_THREADS\n              value: \"2\""),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("name: TF_NUM_INTRAOP_THREADS\n              value: \"1\""),
            std::string::npos)
      << r.out;
  // The worker has no CPU limit: no thread counts are invented for it.
  const size_t worker = r.out.find("Worker:");
  ASSERT_NE(worker, std::string::npos);
  EXPECT_EQ(r.out.find("TF_NUM_", worker), std::string::npos) << r.out;
  WriteFile(dir.File("fixed.yaml"), r.out);
  RunResult after = RunTfdiag("analyze -f json '" + dir.File("fixed.yaml") + "'");
  EXPECT_EQ(after.out.find("\"rule\": \"thread-config\",\n      \"severity\": \"medium\",\n      "
                           "\"subject_kind\": \"manifest\",\n      \"subject\": \"" +
                           dir.File("fixed.yaml") + " (doc 1): spec.tfReplicaSpecs.PS"),
            std::string::npos)
      << after.out;
  // --cpus gives the worker a limit of at least its request, and thread counts to match.
  r = RunTfdiag("fix -q --cpus 4 '" + dir.File("gpu.yaml") + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("limits: {nvidia.com/gpu: 1, cpu: \"4\", memory: \"8Gi\"}"),
            std::string::npos)
      << r.out;
}

TEST(K8sFixPolicy, NothingToFixLeavesTheFileAlone) {
  TempDir dir;
  const std::string svc =
      "# a Service, no TF job\napiVersion: v1\nkind: Service\nmetadata: {name: s}  # c\n"
      "spec: {ports: [{port: 2222}]}\n";
  WriteFile(dir.File("svc.yaml"), svc);
  struct stat before {};
  ASSERT_EQ(::stat(dir.File("svc.yaml").c_str(), &before), 0);
  // Nothing to judge: fix exits 2 as analyze does on the same file (issue 48), naming the
  // object it skipped, and neither rewrites nor prints it.
  RunResult r = RunTfdiag("fix --in-place '" + dir.File("svc.yaml") + "'");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("nothing to judge: " + dir.File("svc.yaml")), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Service"), std::string::npos) << r.err;
  struct stat after {};
  ASSERT_EQ(::stat(dir.File("svc.yaml").c_str(), &after), 0);
  EXPECT_EQ(after.st_ino, before.st_ino) << "not rewritten";
  EXPECT_EQ(ReadFile(dir.File("svc.yaml")), svc);
  r = RunTfdiag("fix '" + dir.File("svc.yaml") + "'");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.out, "") << "nothing printed";
  RunResult a = RunTfdiag("analyze '" + dir.File("svc.yaml") + "'");
  EXPECT_EQ(a.exit_code, r.exit_code) << "fix and analyze agree: " << a.err;
}

TEST(K8sReport, ManifestsAndPodListsInImportAndJsonDeployment) {
  if (!SharedAvailable()) GTEST_SKIP() << "../shared not found";
  const std::string tfjob =
      SharedRealworld("manifests/training-operator_release-1.9_dist-mnist_tf_job_mnist.yaml");
  const std::string pods = SharedRealworld("pods/kubectl-neat__pod1-raw.json");
  TempDir dir;
  WriteFile(dir.File("cluster.yaml"), HandWrittenCluster(3));
  RunResult r = RunTfdiag("analyze --color never '" + tfjob + "' '" + pods + "' '" +
                          dir.File("cluster.yaml") + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("manifest / pod list"), std::string::npos) << r.out;
  EXPECT_TRUE(std::regex_search(
      r.out, std::regex(dir.File("cluster.yaml") + " +YAML +3 +3 +3 +0 \\(0\\)\n")))
      << r.out;
  EXPECT_NE(r.out.find("kubectl-neat__pod1-raw.json: no PS/worker/chief pod among its 1 pod"),
            std::string::npos)
      << r.out;
  r = RunTfdiag("analyze -f json --compact '" + tfjob + "' '" + pods + "' '" +
                dir.File("cluster.yaml") + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"format\":\"k8s-yaml\",\"documents\":3,\"objects\":3,"
                       "\"tf_replica_types\":3,\"pods\":0,\"tf_pods\":0"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\"format\":\"k8s-json\",\"documents\":1,\"objects\":1,"
                       "\"tf_replica_types\":0,\"pods\":1,\"tf_pods\":0"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\"deployment\":{\"objects\":[{\"file\":\"" + tfjob +
                       "\",\"doc\":1,\"path\":\"spec.tfReplicaSpecs.Chief\",\"kind\":\"TFJob\","
                       "\"name\":\"dist-mnist-for-e2e-test\",\"role\":\"chief\""),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\"kind\":\"Deployment\",\"name\":\"tf-ps-2\",\"role\":\"ps\","
                       "\"cpu_request_m\":4000,\"cpu_limit_m\":4000,\"gpus\":0,"
                       "\"replica_type\":\"\",\"replicas\":1,\"node\":\"\"}"),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace tfdiag::test
