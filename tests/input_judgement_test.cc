// Inputs judged or refused, and errors that say what to do next (issue 39, items 2, 3, 4, 7):
// nothing to judge is exit 2 in one line (a misspelt kind with the kind it was probably meant
// to be); a misspelt container key is named with its line; thread-config judges the containers
// of a pod list; a manifest or pod list of another job than the one profiled is warned about;
// `scaling a.json a.json`, `attach --pid` of no process, `rules explain hotps`, `--fail-on HIGH`
// and a Helm template each get the next step.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <string>
#include <vector>

#include "core/bundle.h"
#include "tests/fixtures.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

bool Has(const std::string& s, const std::string& what) {
  return s.find(what) != std::string::npos;
}
int Lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

// A TFJob whose kind is misspelt "TFjob".
const std::string kTfjobTypo =
    TfJobYaml("mnist", {{"PS", 1, "            image: tensorflow/tensorflow:2.13.0\n"}}, "TFjob");

TEST(InputJudgement, NothingToJudgeIsExit2InOneLineWithTheKindMeant) {
  TempDir dir;
  WriteFile(dir.File("job.yaml"), kTfjobTypo);
  for (const char* extra : {"", "--fail-on low "}) {
    RunResult r = RunTfdiag(std::string("analyze ") + extra + "'" + dir.File("job.yaml") + "'");
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_EQ(r.out, "") << "no report for nothing";
    const size_t error = r.err.find("tfdiag analyze: error: ");
    ASSERT_NE(error, std::string::npos) << r.err;
    const std::string line = r.err.substr(error);
    EXPECT_EQ(Lines(line), 1) << line;
    EXPECT_TRUE(Has(line, "nothing to judge")) << line;
    EXPECT_TRUE(Has(line, "TFjob (did you mean TFJob?)")) << line;
  }
  // A kind that is no typo gets no suggestion, and is still nothing to judge.
  WriteFile(dir.File("cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n");
  RunResult r = RunTfdiag("analyze '" + dir.File("cm.yaml") + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(Has(r.err, "ConfigMap")) << r.err;
  EXPECT_FALSE(Has(r.err, "did you mean")) << r.err;
  // Beside something to judge, a skipped object stays a note.
  ASSERT_EQ(RunTfdiag("simulate hot-ps --steps 3 -o '" + dir.File("t.json") + "'").exit_code, 0);
  r = RunTfdiag("analyze '" + dir.File("t.json") + "' '" + dir.File("job.yaml") + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Has(r.err, "did you mean TFJob?")) << r.err;
}

TEST(InputJudgement, MisspeltContainerKeyIsNamedWithItsLine) {
  TempDir dir;
  std::string yaml = kTfjobTypo;
  yaml.replace(yaml.find("TFjob"), 5, "TFJob");
  yaml += "            resource:\n              limits: {cpu: \"2\"}\n";
  WriteFile(dir.File("job.yaml"), yaml);
  RunResult r = RunTfdiag("analyze --color never '" + dir.File("job.yaml") + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Has(r.err,
                  "containers[0]: unknown container key 'resource' (line 14) (did you "
                  "mean resources?)"))
      << r.err;
}

// A misspelt replica-spec key (`replica: 16`) read as one replica without a word before; each
// unknown key of a TFJob replica spec is named with its line and the field meant.
TEST(InputJudgement, MisspeltReplicaSpecKeyIsNamedWithItsLine) {
  TempDir dir;
  WriteFile(dir.File("job.yaml"),
            "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata:\n  name: m\nspec:\n"
            "  tfReplicaSpecs:\n    Worker:\n      replica: 16\n      template:\n        spec:\n"
            "          containers:\n          - name: tensorflow\n"
            "            image: tensorflow/tensorflow:2.13.0\n");
  RunResult r = RunTfdiag("analyze --color never '" + dir.File("job.yaml") + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Has(r.err,
                  "unknown replica spec key 'replica' (line 8) (did you mean replicas?): ignored "
                  "(not a field of a TFJob replica spec)"))
      << r.err;
  // The fields a replica spec has raise nothing.
  EXPECT_FALSE(Has(r.err, "'template'")) << r.err;
}

// Prometheus's own formats given as profiles (a scrape, an HTTP API reply; real files of
// cAdvisor, the kubelet and VictoriaMetrics) are refused with where such metrics belong.
TEST(InputJudgement, PrometheusFilesGivenAsProfilesPointToPrometheusMode) {
  const std::string dir = SharedRealworld("prometheus/");
  for (const char* name : {"cadvisor__lib_metrics_testdata_prometheus_metrics.txt",
                           "nri-k8s_1_35__kubelet_metrics_cadvisor.txt",
                           "victoriametrics__vmalert_instant_response.json"}) {
    if (!std::filesystem::exists(dir + name)) GTEST_SKIP() << "no " << dir << name;
    RunResult r = RunTfdiag("analyze '" + dir + name + "'");
    EXPECT_EQ(r.exit_code, 2) << name;
    EXPECT_TRUE(Has(r.err, "not a profile")) << r.err;
    EXPECT_TRUE(Has(r.err, "--prometheus URL --job NAME")) << r.err;
  }
}

// /proc and cgroup files given as profiles (copied off a node: this machine's own, and real
// files of prometheus/procfs, automaxprocs and cAdvisor's fixtures) are refused, exit 2, with
// what they look like and that `tfdiag attach` reads them itself; before, "expected a JSON value"
// or "got a scalar". A truncated trace gets no such hint.
TEST(InputJudgement, KernelFilesGivenAsProfilesPointToAttach) {
  TempDir dir;
  const std::vector<std::pair<std::string, std::string>> own = {
      {"/proc/self/status", "a /proc/PID/status file"},
      {"/proc/self/stat", "a /proc/PID/stat file"},
      {"/proc/self/cgroup", "a /proc/PID/cgroup file"},
      {"/proc/self/mountinfo", "a /proc/PID/mountinfo file"},
      {"/proc/stat", "a /proc/stat file"},
      {"/proc/meminfo", "a /proc/meminfo file"},
      {"/proc/self/statm", "a /proc/PID/statm file"},
      {"/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "one number or CPU list"}};
  int i = 0, copied = 0;
  for (const auto& [path, want] : own) {
    const std::string text = ReadFile(path);
    if (text.empty()) continue;  // not on this kernel
    ++copied;
    const std::string copy = dir.File(fmt::format("copied-{}", i++));
    WriteFile(copy, text);
    RunResult r = RunTfdiag("analyze '" + copy + "'");
    EXPECT_EQ(r.exit_code, 2) << path;
    EXPECT_TRUE(Has(r.err, "(" + want)) << path << ": " << r.err;
    EXPECT_TRUE(Has(r.err, "not a profile: on the node, `tfdiag attach`")) << path << ": " << r.err;
  }
  EXPECT_GE(copied, 6) << "this machine's /proc files read";
  const std::string rw = SharedRealworld("");
  const std::vector<std::pair<std::string, std::string>> real = {
      {"procfs/prometheus-procfs__fixtures_proc_26231_schedstat", "a /proc/PID/schedstat file"},
      {"procfs/prometheus-procfs__fixtures_proc_pressure_cpu", "a pressure (PSI) file"},
      {"procfs/prometheus-procfs__fixtures_proc_26231_limits", "a /proc/PID/limits file"},
      {"procfs/cadvisor__libcontainer_testdata_procnetdev", "a /proc/net/dev file"},
      {"cgroup/cadvisor__cgroup_v2_test1_cpu.max", "a cgroup cpu.max file"},
      {"cgroup/esm_docker__v1_docker_container_cpu.stat", "a cgroup cpu.stat file"},
      {"cgroup/esm_docker2__proc_2233801_cgroup", "a /proc/PID/cgroup file"}};
  for (const auto& [name, want] : real) {
    if (!std::filesystem::exists(rw + "/" + name)) continue;
    RunResult r = RunTfdiag("analyze '" + rw + "/" + name + "'");
    EXPECT_EQ(r.exit_code, 2) << name;
    EXPECT_TRUE(Has(r.err, "(" + want + ", not a profile")) << name << ": " << r.err;
  }
  WriteFile(dir.File("cut.json"), R"({"traceEvents": [{"name": "MatMul", "ph": "X", "ts": 1)");
  RunResult r = RunTfdiag("analyze '" + dir.File("cut.json") + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_FALSE(Has(r.err, "not a profile")) << r.err;
}

// Six pods with a 2-CPU limit whose containers ask for 64 threads (the issue's pod list).
std::string SixPods() {
  std::string items;
  for (int i = 0; i < 6; ++i) {
    const std::string role = i < 2 ? "ps" : "worker";
    const int index = i < 2 ? i : i - 2;
    items +=
        std::string(i ? "," : "") + R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"j-)" +
        role + "-" + std::to_string(index) +
        R"(","labels":{"training.kubeflow.org/replica-type":")" + role +
        R"(","training.kubeflow.org/replica-index":")" + std::to_string(index) +
        R"("}},"spec":{"nodeName":"n1","containers":[{"name":"tensorflow","env":[)"
        R"({"name":"TF_NUM_INTRAOP_THREADS","value":"64"},{"name":"OMP_NUM_THREADS","value":"64"}],)"
        R"("resources":{"limits":{"cpu":"2","memory":"4Gi"},"requests":{"cpu":"2","memory":"4Gi"}}}]}})";
  }
  return R"({"apiVersion":"v1","kind":"List","items":[)" + items + "]}";
}

TEST(InputJudgement, ThreadConfigJudgesPodListContainers) {
  TempDir dir;
  WriteFile(dir.File("pods.json"), SixPods());
  RunResult r = RunTfdiag("analyze -f json '" + dir.File("pods.json") + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const size_t at = r.out.find("\"rule\": \"thread-config\"");
  ASSERT_NE(at, std::string::npos) << r.out.substr(0, 3000);
  EXPECT_TRUE(Has(r.out, "TF_NUM_INTRAOP_THREADS=64 but the CPU limit is 2")) << r.out;
  EXPECT_TRUE(Has(r.out, "not set: TF_NUM_INTEROP_THREADS")) << r.out;
  // One finding for the six pods, each an object of it.
  EXPECT_EQ(r.out.find("\"rule\": \"thread-config\"", at + 1), std::string::npos);
  for (const char* pod : {"j-ps-0", "j-ps-1", "j-worker-0", "j-worker-3"})
    EXPECT_TRUE(Has(r.out, std::string("\"subject\": \"") + pod + "\"")) << pod;
  RunResult text = RunTfdiag("analyze --color never '" + dir.File("pods.json") + "'");
  EXPECT_FALSE(Has(text.out, "No rule fired")) << text.out;
}

TEST(InputJudgement, ManifestOrPodListOfAnotherJobIsWarnedAbout) {
  TempDir dir;
  ASSERT_EQ(RunTfdiag("simulate hot-ps --steps 3 -o '" + dir.File("t.json") + "'").exit_code, 0);
  // 4 PS x 16 workers profiled; a TFJob of 1 PS x 2 workers given.
  WriteFile(dir.File("small.yaml"), R"(apiVersion: kubeflow.org/v1
kind: TFJob
metadata: {name: small}
spec:
  tfReplicaSpecs:
    PS: {replicas: 1, template: {spec: {containers: [{name: tensorflow, image: tf}]}}}
    Worker: {replicas: 2, template: {spec: {containers: [{name: tensorflow, image: tf}]}}}
)");
  RunResult r = RunTfdiag("analyze --color never '" + dir.File("t.json") + "' '" +
                          dir.File("small.yaml") + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Has(r.out, "warning: " + dir.File("small.yaml") +
                             " declares 1 PS and 2 workers; the profiled inputs hold 4 PS and 16 "
                             "workers"))
      << r.out;
  // The job's own manifest: no warning.
  r = RunTfdiag("analyze --color never '" + dir.File("t.json") + "' '" +
                std::string(TFDIAG_SOURCE_DIR) + "/samples/job.yaml'");
  EXPECT_FALSE(Has(r.out, "declares")) << r.out;
  // A pod list of 2 PS and 4 workers: the profiled tasks without a pod are named.
  WriteFile(dir.File("pods.json"), SixPods());
  r = RunTfdiag("analyze --color never '" + dir.File("t.json") + "' '" + dir.File("pods.json") +
                "'");
  EXPECT_TRUE(Has(r.out,
                  "its 6 TF pods are not the 20 profiled tasks; profiled tasks without a "
                  "pod: ps:2, ps:3, worker:4"))
      << r.out;
}

// Beside a bundle (no profile) the warning says what the tasks came from: "the recorded bundle
// holds", not "the profiled inputs".
TEST(InputJudgement, ManifestOfAnotherJobBesideABundleSaysRecorded) {
  TempDir dir;
  SampledProcess ps = Sampled("ps", 0, 41), worker = Sampled("worker", 0, 42);
  ASSERT_TRUE(WriteBundle(SampledCapture({ps, worker}, 3), dir.File("run.tfdiag.json")).ok());
  RunResult r = RunTfdiag("analyze --color never '" + dir.File("run.tfdiag.json") + "' '" +
                          std::string(TFDIAG_SOURCE_DIR) + "/samples/job.yaml'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Has(r.out,
                  "declares 4 PS and 16 workers; the recorded bundle holds 1 PS and 1 "
                  "worker (ps:0, worker:0)"))
      << r.out;
  EXPECT_TRUE(Has(r.out, "not about the job recorded")) << r.out;
  EXPECT_FALSE(Has(r.out, "profiled")) << r.out;
}

// A manifest or pod list of the same shape as the recorded job, but another job's: the bundle
// knows the pods its tasks ran in (their /etc/hostname), so the names tell it. Where names cannot
// tell (a hostNetwork pod template, an older TFJob shape) or a list keeps a Failed pod beside the
// right one, nothing is said.
TEST(InputJudgement, SameShapeManifestOrPodListOfAnotherJobIsToldByPodNames) {
  TempDir dir;
  SampledProcess ps = Sampled("ps", 0, 41), worker = Sampled("worker", 0, 42);
  ps.pod = "mnist-ps-0";
  worker.pod = "mnist-worker-0";
  ASSERT_TRUE(WriteBundle(SampledCapture({ps, worker}, 3), dir.File("run.tfdiag.json")).ok());
  auto tfjob = [](const std::string& name, const std::string& spec) {
    return "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: " + name +
           "}\nspec:\n  tfReplicaSpecs:\n"
           "    PS: {replicas: 1, template: {spec: {" +
           spec +
           "containers: [{name: tensorflow, image: tf}]}}}\n"
           "    Worker: {replicas: 1, template: {spec: {" +
           spec + "containers: [{name: tensorflow, image: tf}]}}}\n";
  };
  WriteFile(dir.File("mnist.yaml"), tfjob("mnist", ""));
  WriteFile(dir.File("resnet.yaml"), tfjob("resnet", ""));
  // mnist-worker-0 could be a pod of TFJob "mnist-worker" too: the exact name is compared.
  WriteFile(dir.File("prefix.yaml"), tfjob("mnist-worker", ""));
  // With hostNetwork a container's /etc/hostname is its node's name: names cannot tell.
  WriteFile(dir.File("hostnet.yaml"), tfjob("resnet", "hostNetwork: true, "));
  // tf-operator v1alpha1 named pods <job>-<type>-<runtime id>-<index>-<random>.
  WriteFile(dir.File("v1alpha1.yaml"), R"(apiVersion: kubeflow.org/v1alpha1
kind: TFJob
metadata: {name: resnet}
spec:
  replicaSpecs:
    - {replicas: 1, tfReplicaType: PS, template: {spec: {containers: [{name: tensorflow, image: tf}]}}}
    - {replicas: 1, tfReplicaType: WORKER, template: {spec: {containers: [{name: tensorflow, image: tf}]}}}
)");
  const std::string bundle = "'" + dir.File("run.tfdiag.json") + "' ";
  for (const char* own : {"mnist", "hostnet", "v1alpha1"}) {
    RunResult r = RunTfdiag("analyze --color never " + bundle + "'" +
                            dir.File(std::string(own) + ".yaml") + "'");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_FALSE(Has(r.out, "is it this job's")) << own << "\n" << r.out;
  }
  for (const char* other : {"resnet", "mnist-worker"}) {
    const std::string file =
        dir.File(other == std::string("resnet") ? "resnet.yaml" : "prefix.yaml");
    RunResult r = RunTfdiag("analyze --color never " + bundle + "'" + file + "'");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(Has(r.out, fmt::format("{} declares TFJob {} (as many PS and workers as the "
                                       "recorded bundle holds), but none of its pods is one the "
                                       "recorded tasks ran in (ps:0 ran in mnist-ps-0, not "
                                       "{}-ps-0; worker:0 ran in mnist-worker-0, not "
                                       "{}-worker-0): is it this job's manifest?",
                                       file, other, other, other)))
        << r.out;
  }
  // A pod list of the same tasks, another job's pods.
  auto pod = [](const std::string& name, const std::string& role, const std::string& phase) {
    return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
           R"(","labels":{"training.kubeflow.org/replica-type":")" + role +
           R"(","training.kubeflow.org/replica-index":"0"}},"spec":{"containers":[)"
           R"({"name":"tensorflow","image":"tf"}]},"status":{"phase":")" +
           phase + R"("}})";
  };
  auto list = [&](const std::string& job) {
    return R"({"apiVersion":"v1","kind":"List","items":[)" + pod(job + "-ps-0", "ps", "Running") +
           "," + pod(job + "-worker-0", "worker", "Running") + "]}";
  };
  WriteFile(dir.File("mnist-pods.json"), list("mnist"));
  WriteFile(dir.File("resnet-pods.json"), list("resnet"));
  // kubectl keeps a Failed pod of the task beside the one that replaced it.
  WriteFile(dir.File("failed-pods.json"), R"({"apiVersion":"v1","kind":"List","items":[)" +
                                              pod("mnist-ps-0-old", "ps", "Failed") + "," +
                                              pod("mnist-ps-0", "ps", "Running") + "," +
                                              pod("mnist-worker-0", "worker", "Running") + "]}");
  for (const char* own : {"mnist-pods.json", "failed-pods.json"}) {
    RunResult r = RunTfdiag("analyze --color never " + bundle + "'" + dir.File(own) + "'");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_FALSE(Has(r.out, "is it this job's")) << own << "\n" << r.out;
  }
  RunResult r =
      RunTfdiag("analyze --color never " + bundle + "'" + dir.File("resnet-pods.json") + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Has(r.out,
                  "resnet-pods.json: its pods are not the ones the recorded tasks ran in "
                  "(ps:0 ran in mnist-ps-0, listed as resnet-ps-0; worker:0 ran in "
                  "mnist-worker-0, listed as resnet-worker-0): is it this job's pod list?"))
      << r.out;
}

TEST(InputJudgement, ErrorsSayWhatToDoNext) {
  TempDir dir;
  ASSERT_EQ(RunTfdiag("simulate hot-ps --steps 3 -o '" + dir.File("a.json") + "'").exit_code, 0);
  // The same file twice, by name and by a link.
  RunResult r = RunTfdiag("scaling '" + dir.File("a.json") + "' '" + dir.File("a.json") + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(Has(r.err, "a.json is given twice")) << r.err;
  std::filesystem::create_symlink(dir.File("a.json"), dir.File("b.json"));
  r = RunTfdiag("scaling '" + dir.File("a.json") + "' '" + dir.File("b.json") + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(Has(r.err, "b.json is the same file as")) << r.err;
  // A directory as the only RUN.
  r = RunTfdiag("scaling '" + dir.path() + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(Has(r.err, "/*.json")) << r.err;
  // A pid that names no process.
  r = RunTfdiag("attach --pid 999999 --duration 1s -o '" + dir.File("x.json") + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(Has(r.err, "--pid 999999: no such process")) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.File("x.json")));
  // The nearest rule.
  r = RunTfdiag("rules explain hotps");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(Has(r.err, "no rule 'hotps' (did you mean hot-ps?)")) << r.err;
  // Severities as the report prints them.
  for (const char* sev : {"high", "medium", "low"}) {
    const RunResult lower =
        RunTfdiag(std::string("analyze --fail-on ") + sev + " '" + dir.File("a.json") + "'");
    std::string upper_sev = sev;
    for (char& ch : upper_sev) ch = static_cast<char>(std::toupper(ch));
    r = RunTfdiag("analyze --fail-on " + upper_sev + " '" + dir.File("a.json") + "'");
    EXPECT_EQ(r.exit_code, lower.exit_code) << upper_sev << ": " << r.err;
  }
  EXPECT_EQ(r.exit_code, 1) << "--fail-on LOW: hot-ps fires";
  // A Helm chart's helpers: the Helm hint, not a JSON error.
  WriteFile(dir.File("_helpers.tpl"),
            "{{/* Expand the name of the chart. */}}\n{{- define \"tfjob.name\" -}}\n{{- default "
            ".Chart.Name .Values.nameOverride | trunc 63 | trimSuffix \"-\" -}}\n{{- end -}}\n");
  r = RunTfdiag("analyze '" + dir.File("_helpers.tpl") + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(Has(r.err, "helm template")) << r.err;
  if (SharedRealworldAvailable("manifests")) {
    r = RunTfdiag("analyze '" +
                  SharedRealworld("manifests/arena__charts_tfjob_templates__helpers.tpl") + "'");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(Has(r.err, "helm template")) << r.err;
  }
}

// "Exit 2 with one line": stderr holds the error alone, not the notes it repeats above it (a
// misspelt kind was a note, then the same words as the error; a pod list without TF pods a note
// and the error in other words).
TEST(InputJudgement, NothingToJudgeIsTheOnlyLineOnStderr) {
  TempDir dir;
  WriteFile(dir.File("job.yaml"), kTfjobTypo);
  std::vector<std::string> inputs = {dir.File("job.yaml")};
  if (SharedRealworldAvailable("pods")) {
    inputs.push_back(SharedRealworld("pods/kubectl-neat__pod1-raw.yaml"));
    inputs.push_back(SharedRealworld("pods/nri-k8s_1_35__kubelet_pods.json"));
  }
  for (const std::string& in : inputs) {
    RunResult r = RunTfdiag("analyze '" + in + "'");
    EXPECT_EQ(r.exit_code, 2) << in;
    EXPECT_EQ(Lines(r.err), 1) << in << ":\n" << r.err;
    EXPECT_EQ(r.err.rfind("tfdiag analyze: error: nothing to judge: ", 0), 0u) << r.err;
  }
  // Beside something to judge the skipped object is still a note.
  ASSERT_EQ(RunTfdiag("simulate hot-ps --steps 3 -o '" + dir.File("t.json") + "'").exit_code, 0);
  RunResult r = RunTfdiag("analyze '" + dir.File("t.json") + "' '" + dir.File("job.yaml") + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Has(r.err, "note: ")) << r.err;
}

// `fix` on a manifest whose kind is misspelt refuses it as `analyze` does (issue 48): exit 2,
// the same one line naming the kind that was meant, nothing on stdout.
TEST(InputJudgement, FixOfAMisspeltKindSaysWhichKindWasMeant) {
  TempDir dir;
  WriteFile(dir.File("job.yaml"), kTfjobTypo);
  RunResult r = RunTfdiag("fix --cpus 4 '" + dir.File("job.yaml") + "'");
  RunResult a = RunTfdiag("analyze '" + dir.File("job.yaml") + "'");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(a.exit_code, 2) << a.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_TRUE(Has(r.err, "nothing to judge: ")) << r.err;
  EXPECT_TRUE(Has(r.err, "TFjob (did you mean TFJob?)")) << r.err;
  // The same reason after each command's prefix.
  EXPECT_EQ(r.err.substr(r.err.find("nothing to judge")),
            a.err.substr(a.err.find("nothing to judge")));
}

// --disable with a misspelt rule id names the nearest rule, as `rules explain` does.
TEST(InputJudgement, DisableOfAMisspeltRuleSuggestsTheNearest) {
  TempDir dir;
  ASSERT_EQ(RunTfdiag("simulate hot-ps --steps 3 -o '" + dir.File("t.json") + "'").exit_code, 0);
  RunResult r = RunTfdiag("analyze --disable hotps '" + dir.File("t.json") + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(Has(r.err, "--disable hotps: no such rule (did you mean hot-ps?)")) << r.err;
  std::filesystem::copy_file(dir.File("t.json"), dir.File("u.json"));
  r = RunTfdiag("scaling --disable scaling-limt '" + dir.File("t.json") + "' '" +
                dir.File("u.json") + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(Has(r.err, "(did you mean scaling-limit?)")) << r.err;
  // No suggestion for a name like no rule.
  r = RunTfdiag("analyze --disable zzzzzzzzzz '" + dir.File("t.json") + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_FALSE(Has(r.err, "did you mean")) << r.err;
}

}  // namespace
}  // namespace tfdiag::test
