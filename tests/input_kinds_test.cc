// Inputs of every kind a user has, as issue 48 found them missing: a directory of manifests and
// pod lists works like its files (`analyze k8s/`, `view`'s pipeline too), a Katib Experiment is
// judged by its trial template's TFJob, `scaling` takes one TensorBoard log directory per run,
// and `simulate --format xplane`'s sweep names its log directories as runs. Each is checked
// against the same inputs given as files (the output of a path tfdiag already had), not against
// figures of its own.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

const std::string kSource = TFDIAG_SOURCE_DIR;

// "<rule> <subject without the file>" of each finding of `json` (analyze -f json), and the
// inputs' count of TF replica types and pods.
std::multiset<std::string> Findings(const std::string& json, int* replicas = nullptr,
                                    int* pods = nullptr) {
  rapidjson::Document d;
  d.Parse(json.c_str());
  std::multiset<std::string> out;
  if (!d.IsObject()) {
    ADD_FAILURE() << json.substr(0, 400);
    return out;
  }
  for (const auto& f : d["findings"].GetArray()) {
    for (const auto& o : f["objects"].GetArray()) {
      std::string s = o["subject"].GetString();
      const size_t doc = s.find(" (doc ");  // "<file> (doc 1): spec..." -> "(doc 1): spec..."
      out.insert(std::string(f["rule"].GetString()) + " " +
                 (doc == std::string::npos ? s : s.substr(doc + 1)));
    }
  }
  int r = 0, p = 0;
  for (const auto& in : d["inputs"].GetArray()) {
    if (in.HasMember("tf_replica_types")) r += in["tf_replica_types"].GetInt();
    if (in.HasMember("tf_pods")) p += in["tf_pods"].GetInt();
  }
  if (replicas != nullptr) *replicas = r;
  if (pods != nullptr) *pods = p;
  return out;
}

TEST(InputKinds, DirectoryOfManifestsAndPodListsIsItsFiles) {
  TempDir dir;
  const std::string k8s = dir.File("k8s");
  std::filesystem::create_directories(k8s + "/nested");
  std::filesystem::copy_file(kSource + "/samples/job.yaml", k8s + "/job.yaml");
  std::filesystem::copy_file(kSource + "/samples/pods.json", k8s + "/nested/pods.json");
  WriteFile(k8s + "/README.md", "# the job's manifests\n");
  WriteFile(k8s + "/values.yaml", "replicas: 3\n");  // Helm values: no apiVersion or kind
  RunResult files =
      RunTfdiag("analyze -f json '" + k8s + "/job.yaml' '" + k8s + "/nested/pods.json'");
  ASSERT_EQ(files.exit_code, 0) << files.err;
  RunResult d = RunTfdiag("analyze -f json '" + k8s + "'");
  ASSERT_EQ(d.exit_code, 0) << d.err;
  int replicas = 0, pods = 0;
  EXPECT_EQ(Findings(d.out, &replicas, &pods), Findings(files.out));
  EXPECT_EQ(replicas, 2);
  EXPECT_EQ(pods, 20);
  EXPECT_FALSE(Findings(d.out).empty());
  // The files it skipped are said, not read as timelines.
  EXPECT_NE(d.err.find("2 other files skipped"), std::string::npos) << d.err;
  EXPECT_EQ(d.err.find("traceEvents"), std::string::npos) << d.err;
  // With a profile beside it, as with the files.
  ASSERT_EQ(RunTfdiag("simulate hot-ps --steps 3 --format xplane -o '" + dir.File("logs") + "'")
                .exit_code,
            0);
  RunResult both = RunTfdiag("analyze -f json '" + dir.File("logs") + "' '" + k8s + "'");
  RunResult both_files = RunTfdiag("analyze -f json '" + dir.File("logs") + "' '" + k8s +
                                   "/job.yaml' '" + k8s + "/nested/pods.json'");
  ASSERT_EQ(both.exit_code, 0) << both.err;
  EXPECT_EQ(Findings(both.out), Findings(both_files.out));
  // A directory with no Kubernetes file is still what it was (a log directory).
  EXPECT_EQ(RunTfdiag("analyze '" + dir.File("logs") + "'").exit_code, 0);
}

// A chart's templates beside rendered manifests (issue 48): a file that names a kind but does not
// read as YAML is skipped with its error, the rest judged as if given alone; a directory where no
// file reads is refused with that error, as the file alone would be.
TEST(InputKinds, AManifestDirectoryGoesOnPastAFileThatDoesNotRead) {
  TempDir dir;
  const std::string k8s = dir.File("k8s");
  std::filesystem::create_directories(k8s);
  std::filesystem::copy_file(kSource + "/samples/job.yaml", k8s + "/job.yaml");
  const std::string helm =
      "{{- if .Values.ps }}\napiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata:\n  name: "
      "{{ .Release.Name }}\n{{- end }}\n";
  WriteFile(k8s + "/tfjob.tmpl.yaml", helm);
  RunResult alone = RunTfdiag("analyze -f json '" + k8s + "/job.yaml'");
  RunResult d = RunTfdiag("analyze -f json '" + k8s + "'");
  ASSERT_EQ(d.exit_code, alone.exit_code) << d.err;
  EXPECT_EQ(Findings(d.out), Findings(alone.out));
  EXPECT_NE(d.err.find("skipped, it does not read as a manifest: " + k8s + "/tfjob.tmpl.yaml"),
            std::string::npos)
      << d.err;
  EXPECT_NE(d.err.find("helm template"), std::string::npos) << d.err;
  // Only the template: refused (exit 2) with the template's own error, as the file alone.
  std::filesystem::remove(k8s + "/job.yaml");
  RunResult only = RunTfdiag("analyze '" + k8s + "'");
  RunResult file = RunTfdiag("analyze '" + k8s + "/tfjob.tmpl.yaml'");
  EXPECT_EQ(only.exit_code, 2) << only.err;
  EXPECT_EQ(file.exit_code, 2) << file.err;
  EXPECT_NE(only.err.find("tfjob.tmpl.yaml: line 1"), std::string::npos) << only.err;
}

// Katib's example Experiment (kubeflow/katib examples/v1beta1/kubeflow-training-operator/
// tfjob-mnist-with-summaries.yaml), with a PS added: its trial template's TFJob is judged as the
// same TFJob given alone, and fixed by `fix` where it stands in the Experiment.
const char* kExperiment = R"(apiVersion: kubeflow.org/v1beta1
kind: Experiment
metadata:
  namespace: kubeflow
  name: tfjob-mnist-with-summaries
spec:
  parallelTrialCount: 2
  maxTrialCount: 4
  objective:
    type: maximize
    goal: 0.99
    objectiveMetricName: accuracy
  algorithm:
    algorithmName: random
  parameters:
    - name: learning_rate
      parameterType: double
      feasibleSpace: {min: "0.01", max: "0.05"}
  trialTemplate:
    primaryContainerName: tensorflow
    trialParameters:
      - name: learningRate
        reference: learning_rate
    trialSpec:
)";
const char* kTfJob = R"(apiVersion: kubeflow.org/v1
kind: TFJob
spec:
  tfReplicaSpecs:
    PS:
      replicas: 2
      template:
        spec:
          containers:
            - name: tensorflow
              image: docker.io/kubeflowkatib/tf-mnist-with-summaries:latest
              resources: {requests: {cpu: 500m}}
    Worker:
      replicas: 2
      restartPolicy: OnFailure
      template:
        spec:
          containers:
            - name: tensorflow
              image: docker.io/kubeflowkatib/tf-mnist-with-summaries:latest
              command:
                - "python3"
                - "/opt/tf-mnist-with-summaries/mnist.py"
                - "--learning-rate=${trialParameters.learningRate}"
              resources: {limits: {cpu: "2"}}
)";

std::string Indented(const std::string& text, size_t n) {
  std::string out, pad(n, ' ');
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t nl = text.find('\n', pos);
    out += pad + text.substr(pos, nl - pos + 1);
    pos = nl + 1;
  }
  return out;
}

TEST(InputKinds, KatibExperimentIsJudgedByItsTrialTemplate) {
  TempDir dir;
  WriteFile(dir.File("experiment.yaml"), kExperiment + Indented(kTfJob, 6));
  WriteFile(dir.File("tfjob.yaml"), kTfJob);
  RunResult e = RunTfdiag("analyze -f json '" + dir.File("experiment.yaml") + "'");
  ASSERT_EQ(e.exit_code, 0) << e.err;
  RunResult t = RunTfdiag("analyze -f json '" + dir.File("tfjob.yaml") + "'");
  ASSERT_EQ(t.exit_code, 0) << t.err;
  int replicas = 0;
  const std::multiset<std::string> got = Findings(e.out, &replicas);
  EXPECT_EQ(replicas, 2);
  ASSERT_FALSE(got.empty());
  // The same rules on the same replica types (paths differ by the template's place).
  std::multiset<std::string> rules_e, rules_t;
  for (const std::string& f : got) rules_e.insert(f.substr(0, f.find(' ')));
  for (const std::string& f : Findings(t.out)) rules_t.insert(f.substr(0, f.find(' ')));
  EXPECT_EQ(rules_e, rules_t);
  EXPECT_NE(e.err.find("Katib Experiment 'tfjob-mnist-with-summaries'"), std::string::npos)
      << e.err;
  // fix edits the template where it stands; the fixed Experiment is clean of what fix fixes.
  RunResult f =
      RunTfdiag("fix --cpus ps=1,worker=2 --memory 4Gi '" + dir.File("experiment.yaml") + "'");
  ASSERT_EQ(f.exit_code, 0) << f.err;
  EXPECT_NE(f.out.find("kind: Experiment"), std::string::npos);
  WriteFile(dir.File("fixed.yaml"), f.out);
  RunResult after = RunTfdiag("analyze -f json '" + dir.File("fixed.yaml") + "'");
  ASSERT_EQ(after.exit_code, 0) << after.err;
  for (const std::string& x : Findings(after.out)) {
    for (const char* fixed : {"cpu-qos ", "thread-config ", "ps-colocation "})
      EXPECT_NE(x.rfind(fixed, 0), 0u) << x;
  }
}

// `scaling run2 run4`: one TensorBoard log directory per run, as `simulate --format xplane`
// writes a sweep (DIR/workers-<N>/, not workers-<N>.json); each run's worker count read from it.
TEST(InputKinds, ScalingTakesOneLogDirectoryPerRun) {
  TempDir dir;
  ASSERT_EQ(RunTfdiag("simulate hot-ps --workers 2,4 --steps 6 --format xplane -o '" +
                      dir.File("sweep") + "'")
                .exit_code,
            0);
  for (const char* run : {"workers-2", "workers-4"}) {
    EXPECT_TRUE(std::filesystem::is_directory(dir.File("sweep/") + run)) << run;
    EXPECT_FALSE(std::filesystem::exists(dir.File("sweep/") + run + ".json")) << run;
  }
  RunResult r = RunTfdiag("scaling -f json '" + dir.File("sweep/workers-2") + "' '" +
                          dir.File("sweep/workers-4") + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  rapidjson::Document d;
  d.Parse(r.out.c_str());
  ASSERT_TRUE(d.IsObject()) << r.out.substr(0, 400);
  ASSERT_EQ(d["runs"].Size(), 2u);
  EXPECT_EQ(d["runs"][0]["workers"].GetInt(), 2);
  EXPECT_EQ(d["runs"][1]["workers"].GetInt(), 4);
  EXPECT_EQ(std::string(d["runs"][1]["name"].GetString()), dir.File("sweep/workers-4"));
  EXPECT_GT(d["runs"][1]["step_median_ns"].GetInt64(), 0);
}

}  // namespace
}  // namespace tfdiag::test
