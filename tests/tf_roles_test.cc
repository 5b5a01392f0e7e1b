// The one list of TF roles and the one pod-name parser (core/tf_roles.h), with the cases where
// the copies it replaced disagreed: discovery took any type and any number of digits, the
// Prometheus job reader knew "evaluator" and the scaling periods did not, the manifest reader
// took any trailing digits of a pod with a role as its index.
#include "core/tf_roles.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "collectors/discovery/discovery.h"
#include "collectors/k8s/k8s_reader.h"
#include "core/k8s_deployment.h"

namespace tfdiag {
namespace {

TEST(TfRoles, OneListOfRoles) {
  for (std::string_view r : kTfRoles) EXPECT_EQ(TfRoleOf(r), r);
  EXPECT_EQ(TfRoleOf("PS"), "ps");
  EXPECT_EQ(TfRoleOf("Worker"), "worker");
  EXPECT_EQ(TfRoleOf("Evaluator"), "evaluator");
  EXPECT_EQ(TfRoleOf("trainer"), "");
  EXPECT_EQ(TfRoleOf("parameter_server"), "");  // a synonym: the manifest reader's to map
  EXPECT_EQ(TfRoleOf(""), "");
  EXPECT_TRUE(IsWorkerLikeRole("chief"));
  EXPECT_TRUE(IsWorkerLikeRole("master"));
  EXPECT_FALSE(IsWorkerLikeRole("evaluator"));
  EXPECT_FALSE(IsWorkerLikeRole("ps"));
}

TEST(TfRoles, ParsesKubeflowPodNames) {
  std::optional<TfPodName> p = ParseTfPodName("my-job-worker-12");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->job, "my-job");
  EXPECT_EQ(p->type, "worker");
  EXPECT_EQ(p->role, "worker");
  EXPECT_EQ(p->index, 12);
  p = ParseTfPodName("worker-3");  // a StatefulSet named after the role
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->job, "");
  EXPECT_EQ(p->role, "worker");
  EXPECT_EQ(p->index, 3);
  for (const char* bad : {"", "myjob", "myjob-ps", "myjob-ps-", "myjob-ps-x", "myjob-ps-+1",
                          "myjob-ps--1", "-ps-0", "myjob--0", "myjob-p_s-0", "myjob-ps-1e3"}) {
    EXPECT_FALSE(ParseTfPodName(bad).has_value()) << bad;
  }
}

// The scaling periods (pipeline/scaling_periods.cc) read only ps, worker, chief and master from
// a pod name and left an evaluator's pod out; the Prometheus job reader knew evaluators.
TEST(TfRoles, EvaluatorIsARole) {
  std::optional<TfPodName> p = ParseTfPodName("myjob-evaluator-0");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->role, "evaluator");
  EXPECT_FALSE(IsWorkerLikeRole(p->role));
}

// Discovery's filter took any number of digits as the index; every other reader bounds task
// indexes to 0..kMaxTaskIndex.
TEST(TfRoles, IndexesAreBounded) {
  EXPECT_TRUE(PodMatchesJob("myjob-ps-999999", "myjob"));
  EXPECT_FALSE(PodMatchesJob("myjob-ps-1000000", "myjob"));
  EXPECT_FALSE(PodMatchesJob("myjob-ps-99999999999999999999", "myjob"));
  EXPECT_EQ(TfJobOfPod("myjob-ps-1000000"), "");
}

// A job's pod is "<job>-<type>-<index>" for any type (a Volcano task may be named "trainer"), but
// only a TF role's type gives the pod a role.
TEST(TfRoles, AnyTypeBelongsToTheJobOnlyRolesGiveARole) {
  EXPECT_TRUE(IsPodOfTfJob("myjob-trainer-0", "myjob"));
  EXPECT_TRUE(PodMatchesJob("myjob-trainer-0", "myjob"));
  EXPECT_EQ(TfJobOfPod("myjob-trainer-0"), "myjob");
  const std::optional<TfPodName> p = ParseTfPodName("myjob-trainer-0");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->role, "");
  EXPECT_FALSE(IsPodOfTfJob("myjob2-ps-0", "myjob"));
  EXPECT_FALSE(IsPodOfTfJob("a-b-ps-0", "a"));
  EXPECT_FALSE(IsPodOfTfJob("myjob-ps-0", ""));
}

// The manifest reader took the last dash-separated digits of any pod with a role as its index
// (up to 8 digits), even when the name said another role; it now reads the one parser's index,
// unless the name's type is another TF role.
TEST(TfRoles, PodListIndexFromTheOneParser) {
  auto pod = [](const std::string& name) {
    return R"({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": ")" + name +
           R"(", "labels": {"role": "ps"}}, "spec": {"containers": [{"name": "tf"}]}})";
  };
  const std::string list = R"({"apiVersion": "v1", "kind": "List", "items": [)" + pod("tf-ps-2") +
                           "," + pod("parameter-server-1") + "," + pod("tf-worker-4") + "," +
                           pod("tf-ps-12345678") + "]}";
  K8sDeployment d;
  const Status read = ParseK8sText(list, "pods.json", &d);
  ASSERT_TRUE(read.ok()) << read.message();
  ASSERT_EQ(d.pods.size(), 4u);
  EXPECT_EQ(d.pods[0].index, 2);
  EXPECT_EQ(d.pods[1].index, 1);   // a StatefulSet's ordinal
  EXPECT_EQ(d.pods[2].index, -1);  // the name says worker:4, the label ps: no index from it
  EXPECT_EQ(d.pods[3].index, -1);  // 8 digits: no task of a real job
}

}  // namespace
}  // namespace tfdiag
