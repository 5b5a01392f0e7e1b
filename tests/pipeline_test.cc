// One pipeline for the CLI and the viewer (issue 31, item 8; pipeline/pipeline.h): the same
// inputs through `tfdiag analyze -f json` (the built binary) and through the viewer's Loader
// (in-process, as tfdiag-view runs it) give the same findings (rule, severity, subject, objects,
// figures), the same deployment read from the manifests, and the same errors.
#include "pipeline/pipeline.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "report/report.h"
#include "rules/rule_set.h"
#include "tests/test_util.h"
#include "viewer/loader.h"

namespace tfdiag::test {
namespace {

std::string Quoted(const std::vector<std::string>& paths) {
  std::string s;
  for (const std::string& p : paths) s += " '" + p + "'";
  return s;
}

// Waits for the loader (at most 60 s).
void Wait(const view::Loader& loader) {
  for (int i = 0; i < 6000 && !loader.Done(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(loader.Done()) << "the viewer's loader did not finish in 60 s";
}

std::string Dump(const rapidjson::Value& v) {
  rapidjson::StringBuffer sb;
  rapidjson::Writer<rapidjson::StringBuffer> w(sb);
  v.Accept(w);
  return sb.GetString();
}

// `key` of the JSON report `json`, compact ("<missing>" when absent).
std::string Section(const std::string& json, const char* key) {
  rapidjson::Document d;
  d.Parse(json.c_str());
  if (d.HasParseError() || !d.IsObject()) return "<not a JSON object>";
  if (!d.HasMember(key)) return "<missing>";
  return Dump(d[key]);
}

// The CLI's JSON report and the viewer's snapshot rendered by the same JSON writer.
struct Both {
  std::string cli, viewer;
};

Both RunBoth(const std::vector<std::string>& paths) {
  Both b;
  RunResult r = RunTfdiag("analyze -f json --no-progress -j 2" + Quoted(paths));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  b.cli = r.out;
  view::LoadRequest rq;
  rq.paths = paths;
  rq.threads = 2;
  view::Loader loader(rq);
  Wait(loader);
  if (!loader.Done()) return b;
  std::shared_ptr<const view::Snapshot> snap = loader.snapshot();
  EXPECT_TRUE(snap != nullptr) << loader.error().message();
  if (snap == nullptr) return b;
  StatusOr<std::string> json = RenderJson(snap->capture, snap->analysis, false);
  EXPECT_TRUE(json.ok()) << json.status().message();
  if (json.ok()) b.viewer = *json;
  return b;
}

void ExpectSameReport(const Both& b) {
  const std::string findings = Section(b.cli, "findings");
  ASSERT_NE(findings, "<missing>");
  ASSERT_NE(findings, "[]") << "the inputs should raise findings";
  EXPECT_EQ(Section(b.viewer, "findings"), findings);
  EXPECT_EQ(Section(b.viewer, "deployment"), Section(b.cli, "deployment"));
  EXPECT_EQ(Section(b.viewer, "rules"), Section(b.cli, "rules"));
}

// A trace and real manifests from public projects: the trace's findings and the manifests' (with
// their objects and figures) are the same from either front end.
TEST(PipelineTest, ViewerAndCliGiveTheSameFindingsForTraceAndManifests) {
  TFDIAG_REQUIRE_REALWORLD("manifests");
  const std::string m = SharedRealworld("manifests/");
  const Both b =
      RunBoth({std::string(TFDIAG_SOURCE_DIR) + "/samples/hot-ps.tf1.json.gz",
               m + "dlrover_criteo_deeprec_manual_job.yaml", m + "kueue_sample-tfjob.yaml",
               m + "volcano_kubecon-2019_tf-example.yaml"});
  ExpectSameReport(b);
  EXPECT_NE(Section(b.cli, "findings").find("\"rule\":\"hot-ps\""), std::string::npos);
  EXPECT_NE(Section(b.cli, "findings").find("\"rule\":\"cpu-qos\""), std::string::npos);
}

// Manifests alone: judged on an empty capture by both.
TEST(PipelineTest, ViewerAndCliGiveTheSameFindingsForManifestsAlone) {
  TFDIAG_REQUIRE_REALWORLD("manifests");
  const std::string m = SharedRealworld("manifests/");
  ExpectSameReport(RunBoth({m + "training-operator_v1.5_estimator-API_distributed_tfjob.yaml",
                            m + "dlrover_criteo_deeprec_manual_job.yaml"}));
}

// `kubectl get pods > pods.txt` then loading pods.txt: both front ends say what it is and how to
// save a usable list (the viewer used to say only "expected a JSON value").
TEST(PipelineTest, KubectlTableIsRefusedAlikeByViewerAndCli) {
  TempDir dir;
  const std::string pods = dir.File("pods.txt");
  WriteFile(pods,
            "NAME                 READY   STATUS    RESTARTS   AGE\n"
            "mnist-ps-0           1/1     Running   0          3h\n"
            "mnist-worker-0       1/1     Running   0          3h\n");
  RunResult r = RunTfdiag("analyze --no-progress '" + pods + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("kubectl's table output"), std::string::npos) << r.err;
  view::LoadRequest rq;
  rq.paths = {pods};
  view::Loader loader(rq);
  Wait(loader);
  EXPECT_EQ(loader.snapshot(), nullptr);
  const Status s = loader.error();
  EXPECT_EQ(s.code(), StatusCode::kInvalidInput);
  EXPECT_NE(r.err.find(s.message()), std::string::npos)
      << "viewer: " << s.message() << "\nCLI: " << r.err;
}

// The pipeline itself: the manifests' objects outlive the call (AnalysisResult::k8s points into
// the result), and the threads used are reported.
TEST(PipelineTest, ResultOwnsTheDeploymentItsAnalysisPointsTo) {
  TFDIAG_REQUIRE_REALWORLD("manifests");
  StatusOr<RuleSet> rules = DefaultRuleSet();
  ASSERT_TRUE(rules.ok());
  PipelineOptions o;
  o.threads = 2;
  std::vector<std::string> notes;
  o.notes = &notes;
  StatusOr<PipelineResult> r = AnalyzeInputs(
      {SharedRealworld("manifests/dlrover_criteo_deeprec_manual_job.yaml")}, *rules, std::move(o));
  ASSERT_TRUE(r.ok()) << r.status().message();
  PipelineResult moved = std::move(*r);
  ASSERT_NE(moved.k8s, nullptr);
  EXPECT_EQ(moved.analysis.k8s, moved.k8s.get());
  EXPECT_EQ(moved.traces, 0u);
  EXPECT_EQ(moved.threads, 2);
  ASSERT_EQ(moved.k8s->files.size(), 1u);
  EXPECT_FALSE(moved.analysis.findings.empty());
  // The manifest's note (an ElasticJob replica type that is not a TF role) reaches the caller.
  ASSERT_FALSE(notes.empty());
  EXPECT_NE(notes[0].find("dlrover-master"), std::string::npos) << notes[0];
}

}  // namespace
}  // namespace tfdiag::test
