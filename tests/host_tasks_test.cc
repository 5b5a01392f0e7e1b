// Profiled hosts mapped to TF tasks by the manifests and pod lists given beside a profile
// (collectors/xplane/host_tasks.h): generated pod lists and manifests, the real manifests and
// pod lists of ../shared/realworld, and `tfdiag analyze` on a log directory whose host files are
// named by pod IP.
#include "collectors/xplane/host_tasks.h"

#include <gtest/gtest.h>

#include <cstdio>

#include "collectors/k8s/k8s_reader.h"
#include "collectors/load_inputs.h"
#include "samples/simulator.h"
#include "tests/test_util.h"
#include "tests/viewer_util.h"

namespace tfdiag::test {
namespace {

// A `kubectl get pods -o json` of `n_ps` PS and `n_workers` workers of TFJob `job`, as the
// training operator labels them, pod i at 10.1.0.(10 + i).
std::string PodList(const std::string& job, int n_ps, int n_workers) {
  std::string items;
  int ip = 10;
  for (const char* type : {"ps", "worker"}) {
    const int n = std::string(type) == "ps" ? n_ps : n_workers;
    for (int i = 0; i < n; ++i, ++ip) {
      items += fmt::format(
          R"({}{{"apiVersion": "v1", "kind": "Pod", "metadata": {{"name": "{}-{}-{}", "labels": {{
            "training.kubeflow.org/job-name": "{}", "training.kubeflow.org/replica-type": "{}",
            "training.kubeflow.org/replica-index": "{}"}}}},
          "spec": {{"nodeName": "node-{}", "hostname": "{}-host-{}", "containers": [{{"name": "tensorflow"}}]}},
          "status": {{"podIP": "10.1.0.{}", "qosClass": "BestEffort"}}}})",
          items.empty() ? "" : ",\n", job, type, i, job, type, i, ip % 3, type, i, ip);
    }
  }
  return R"({"apiVersion": "v1", "kind": "List", "items": [)" + items + "]}";
}

K8sDeployment Parse(const std::string& text, const std::string& name) {
  K8sDeployment k;
  Status s = ParseK8sText(text, name, &k);
  EXPECT_TRUE(s.ok()) << s.message();
  return k;
}

K8sDeployment ReadReal(const std::string& rel) {
  K8sDeployment k;
  Status s = ReadK8sFile(SharedRealworld(rel), &k, rel);
  EXPECT_TRUE(s.ok()) << s.message();
  return k;
}

std::string Task(const HostTask& t) { return t.job + ":" + std::to_string(t.index); }

TEST(HostTasks, PodListMapsByPodIpNameAndHostname) {
  const K8sDeployment k = Parse(PodList("mnist", 2, 3), "pods.json");
  HostMapper m({}, &k);
  // client.trace names files by the address it traced: the pod IP and port.
  HostTask t = m.Map("10.1.0.11_6009");
  EXPECT_EQ(Task(t), "ps:1");
  EXPECT_NE(t.source.find("pod list pods.json"), std::string::npos) << t.source;
  EXPECT_NE(t.source.find("pod mnist-ps-1 (pod IP 10.1.0.11"), std::string::npos) << t.source;
  EXPECT_NE(t.source.find("role from label training.kubeflow.org/replica-type"), std::string::npos)
      << t.source;
  t = m.Map("10.1.0.14");
  EXPECT_EQ(Task(t), "worker:2");
  // tf.profiler.experimental.start names it by the host name: the pod's name, or its
  // spec.hostname, possibly fully qualified.
  t = m.Map("mnist-worker-0.mnist.default.svc.cluster.local");
  EXPECT_EQ(Task(t), "worker:0");
  EXPECT_NE(t.source.find("(pod name mnist-worker-0"), std::string::npos) << t.source;
  t = m.Map("worker-host-1");
  EXPECT_EQ(Task(t), "worker:1");
  EXPECT_NE(t.source.find("pod hostname"), std::string::npos) << t.source;
  // An IP no pod has, and a name no pod has: nothing from the pod list.
  t = m.Map("10.1.0.99_6009");
  EXPECT_EQ(t.source, "none");
  EXPECT_EQ(Task(t), "localhost:0");
  t = m.Map("10.1.0.1");  // a prefix of 10.1.0.10-14 is no match
  EXPECT_EQ(Task(t), "localhost:1");
  // TF_CONFIG comes first when both are given.
  ClusterSpec c;
  c.jobs["worker"] = {"10.1.0.11:6009"};
  HostMapper both(c, &k);
  EXPECT_EQ(Task(both.Map("10.1.0.11_6009")), "worker:0");
}

TEST(HostTasks, ManifestMapsByTheOperatorsPodNames) {
  // A Volcano job whose tasks are not named ps/worker: only the manifest (roles from the
  // --job_name flags) tells that "train-feeder-1" is worker 1.
  const K8sDeployment k = Parse(R"(apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: train
spec:
  tasks:
    - name: params
      replicas: 2
      template:
        spec:
          containers:
            - name: tf
              command: ["python", "train.py", "--job_name=ps"]
    - name: feeder
      replicas: 4
      template:
        spec:
          containers:
            - name: tf
              command: ["python", "train.py", "--job_name=worker"]
)",
                                "volcano.yaml");
  HostMapper m({}, &k);
  HostTask t = m.Map("train-feeder-1");
  EXPECT_EQ(Task(t), "worker:1");
  EXPECT_NE(t.source.find("manifest volcano.yaml (doc 1): spec.tasks[1]: Volcano Job train "
                          "replica type feeder (pod train-feeder-1)"),
            std::string::npos)
      << t.source;
  EXPECT_EQ(Task(m.Map("train-params-1_2222")), "ps:1");
  // Index 4 is beyond the 4 replicas; another job's name is not this job.
  EXPECT_EQ(m.Map("train-feeder-4").source, "none");
  EXPECT_EQ(m.Map("other-feeder-0").source, "none");
  // Without the manifest, these names say nothing.
  HostMapper bare;
  EXPECT_EQ(bare.Map("train-feeder-1").source, "none");
}

TEST(HostTasks, RealManifestsMapTheirPods) {
  TFDIAG_REQUIRE_REALWORLD("manifests");
  // Kubeflow's dist-mnist TFJob: Chief x1, PS x1, Worker x2.
  K8sDeployment tf =
      ReadReal("manifests/training-operator_release-1.9_dist-mnist_tf_job_mnist.yaml");
  HostMapper m({}, &tf);
  HostTask t = m.Map("dist-mnist-for-e2e-test-chief-0");
  EXPECT_EQ(Task(t), "chief:0");
  EXPECT_NE(
      t.source.find("manifest manifests/training-operator_release-1.9_dist-mnist_tf_job_mnist.yaml "
                    "(doc 1): spec.tfReplicaSpecs.Chief"),
      std::string::npos)
      << t.source;
  EXPECT_NE(t.source.find("TFJob dist-mnist-for-e2e-test replica type Chief"), std::string::npos)
      << t.source;
  EXPECT_EQ(Task(m.Map("dist-mnist-for-e2e-test-worker-1_2222")), "worker:1");
  // Worker 2 does not exist in the manifest: only the bare pod-name rule applies.
  t = m.Map("dist-mnist-for-e2e-test-worker-2");
  EXPECT_EQ(Task(t), "worker:2");
  EXPECT_EQ(t.source, "pod name");
  // Volcano's tf-example: tasks ps x1 and worker x2 of job tensorflow-benchmark.
  K8sDeployment vc = ReadReal("manifests/volcano_kubecon-2019_tf-example.yaml");
  HostMapper v({}, &vc);
  t = v.Map("tensorflow-benchmark-worker-1");
  EXPECT_EQ(Task(t), "worker:1");
  EXPECT_NE(t.source.find("Volcano Job tensorflow-benchmark replica type worker"),
            std::string::npos)
      << t.source;
  // DLRover's ElasticJob pods are "<job>-edljob-<type>-<i>".
  K8sDeployment dl = ReadReal("manifests/dlrover_criteo_deeprec_manual_job.yaml");
  HostMapper d({}, &dl);
  t = d.Map("deepctr-manual-scale-edljob-ps-0");
  EXPECT_EQ(Task(t), "ps:0");
  EXPECT_NE(t.source.find("ElasticJob deepctr-manual-scale replica type ps"), std::string::npos)
      << t.source;
}

TEST(HostTasks, RealPodListsWithoutTfRolesMapNothing) {
  TFDIAG_REQUIRE_REALWORLD("pods");
  // A real kubelet /pods of 24 pods (no TF job among them): a host named after one of its pods,
  // or at its IP, is not a TF task, so nothing is made up.
  K8sDeployment k = ReadReal("pods/nri-k8s_1_35__kubelet_pods.json");
  ASSERT_GE(k.pods.size(), 20u);
  HostMapper m({}, &k);
  int tried = 0;
  for (const K8sPod& p : k.pods) {
    if (!p.role.empty()) continue;
    EXPECT_EQ(m.Map(p.name).source, "none") << p.name;
    if (!p.pod_ip.empty()) {
      EXPECT_EQ(m.Map(p.pod_ip + "_6009").source, "none") << p.pod_ip;
    }
    ++tried;
  }
  EXPECT_GT(tried, 10);
}

// Writes the simulated hot-PS job (2 PS, 3 workers) as a TensorBoard log directory of
// xplane.pb files named by pod IP and port, as client.trace("10.1.0.10:6009,...") names them;
// returns the directory. Pod i of PodList() is at 10.1.0.(10 + i).
std::string IpNamedLogDir(const TempDir& dir) {
  sim::ScenarioParams p;
  p.scenario = "hot-ps";
  p.steps = 3;
  p.ps = 2;
  p.workers = 3;
  p.format = sim::TraceFormat::kXPlane;
  const std::string logs = dir.File("logs");
  EXPECT_TRUE(sim::WriteScenario(p, logs).ok());
  const std::string run = logs + "/plugins/profile/2020_09_13_12_26_40";
  int ip = 10;
  for (const char* type : {"ps", "worker"}) {
    for (int i = 0; i < (std::string(type) == "ps" ? 2 : 3); ++i, ++ip) {
      const std::string from = fmt::format("{}/{}-{}.xplane.pb", run, type, i);
      const std::string to = fmt::format("{}/10.1.0.{}_6009.xplane.pb", run, ip);
      EXPECT_EQ(std::rename(from.c_str(), to.c_str()), 0) << from;
    }
  }
  return logs;
}

TEST(HostTasks, AnalyzeMapsHostFilesNamedByPodIpWithAPodList) {
  TempDir dir;
  const std::string logs = IpNamedLogDir(dir);
  ASSERT_FALSE(::testing::Test::HasFailure());
  // Without the pod list: five unmapped hosts, named localhost:<n>.
  RunResult bare = RunTfdiag("analyze -f json '" + logs + "'");
  ASSERT_EQ(bare.exit_code, 0) << bare.err;
  EXPECT_EQ(bare.out.find("\"ps:1\""), std::string::npos);
  EXPECT_NE(bare.err.find("no TF_CONFIG entry, pod, replica spec or pod name matches it"),
            std::string::npos)
      << bare.err;
  // With it: every host is its task, and the notes say the pod list mapped it.
  WriteFile(dir.File("pods.json"), PodList("hot", 2, 3));
  RunResult r = RunTfdiag("analyze -f json '" + logs + "' '" + dir.File("pods.json") + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* task : {"\"ps:0\"", "\"ps:1\"", "\"worker:0\"", "\"worker:2\""}) {
    EXPECT_NE(r.out.find(task), std::string::npos) << task;
  }
  // One note for the log directory's five hosts (issue 39 item 8), not one per file.
  EXPECT_NE(r.err.find(": 5 hosts read as tasks: 10.1.0.10_6009 -> ps:0, 10.1.0.11_6009 -> ps:1"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("(by pod list "), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("host '10.1.0.11_6009' read as"), std::string::npos) << r.err;
  // The hot PS is found on the mapped tasks.
  EXPECT_NE(r.out.find("\"hot-ps\""), std::string::npos);
  // The simulated job runs _SOURCE ops, so its steps come from them, and the report says so.
  RunResult text = RunTfdiag("analyze '" + logs + "' '" + dir.File("pods.json") + "'");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("3 (per worker, from _SOURCE ops)"), std::string::npos)
      << text.out.substr(0, 800);
}

// The real TF2 profile marks its steps with group_id stats and runs no _SOURCE op: the text
// report says the steps came from those stats.
TEST(HostTasks, TextReportSaysStepsCameFromGroupIdStats) {
  if (!SharedAvailable()) GTEST_SKIP() << "../shared/traces not found beside the repository";
  RunResult r =
      RunTfdiag("analyze '" +
                SharedTrace("tfprof_d6853e0_GPU-multi-worker_34.83.195.179_6003.xplane.pb") + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Its one task is localhost:0, no worker: steps per task (issue 48).
  EXPECT_NE(r.out.find("(per task, from the profile's group_id step stats)"), std::string::npos)
      << r.out.substr(0, 800);
  EXPECT_EQ(r.out.find("_SOURCE"), std::string::npos) << r.out.substr(0, 800);
}

}  // namespace
}  // namespace tfdiag::test

namespace tfdiag::test {
namespace {

// The viewer maps hosts as analyze does: with the pod list (or a TF_CONFIG) beside the log
// directory it shows the hot PS analyze names; without them there is no PS to be hot.
TEST(HostTasks, ViewerMapsHostsAsAnalyzeDoes) {
  const std::string why = ViewerSkipReason();
  if (!why.empty()) GTEST_SKIP() << why;
  TempDir dir;
  const std::string logs = IpNamedLogDir(dir);
  ASSERT_FALSE(::testing::Test::HasFailure());
  WriteFile(dir.File("pods.json"), PodList("hot", 2, 3));
  RunResult a = RunTfdiag("analyze -f json '" + logs + "' '" + dir.File("pods.json") + "'");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  rapidjson::Document d = ParseJson(a.out);
  std::string hot;
  for (const auto& f : d["findings"].GetArray()) {
    if (std::string(f["rule"].GetString()) == "hot-ps") hot = f["task"].GetString();
  }
  ASSERT_EQ(hot, "ps:0") << a.out.substr(0, 600);
  const std::string dump = dir.File("view.json");
  RunResult v = RunView("--select hot-ps --dump-view '" + dump + "' '" + logs + "' '" +
                        dir.File("pods.json") + "'");
  ASSERT_EQ(v.exit_code, 0) << v.err;
  rapidjson::Document view = ParseJson(ReadFile(dump));
  ASSERT_TRUE(view.IsObject());
  EXPECT_EQ(std::string(view["focus_task"].GetString()), hot);
  // The same with the hosts' TF_CONFIG instead of the pod list.
  const std::string tf_config =
      R"({"cluster": {"ps": ["10.1.0.10:6009", "10.1.0.11:6009"], "worker": ["10.1.0.12:6009", )"
      R"("10.1.0.13:6009", "10.1.0.14:6009"]}, "task": {"type": "worker", "index": 0}})";
  WriteFile(dir.File("tf_config.json"), tf_config);
  RunResult t = RunView("--select hot-ps --tf-config '" + dir.File("tf_config.json") +
                        "' --dump-view '" + dump + "' '" + logs + "'");
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_EQ(std::string(ParseJson(ReadFile(dump))["focus_task"].GetString()), hot);
  // Without either, the hosts are localhost:<n> and no PS is hot.
  RunResult bare = RunView("--select hot-ps --dump-view '" + dump + "' '" + logs + "'");
  EXPECT_EQ(bare.exit_code, 2);
  EXPECT_NE(bare.err.find("--select hot-ps: no such finding"), std::string::npos) << bare.err;
}

}  // namespace
}  // namespace tfdiag::test
