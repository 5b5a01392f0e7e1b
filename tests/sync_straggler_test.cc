// Issue 35 item 4: sync and async. Under SyncReplicasOptimizer every replica's step ends at the
// barrier (the sync token): the token-queue dequeue is a wait, not compute, a slow replica is
// found from its own time, and fixing it is predicted as the job's step following the slowest
// replica left. In an asynchronous job a slow worker slows only itself: what fixing it buys is
// the job's throughput. The jobs are written op by op here and their fixed twins too, so the
// truth is in the timelines, not in the replay's code.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analyzers/analysis.h"
#include "analyzers/step_graph.h"
#include "rules/rule_set.h"
#include "tests/replay_util.h"
#include "tests/test_util.h"
#include "tests/trace_json.h"

namespace tfdiag::test {
namespace {

constexpr int kWorkers = 4, kSteps = 12;

// Worker w computes compute_us[w] per step; with `sync`, it then dequeues the sync token until
// the step's end, `step_us` after its start (every replica waits for the slowest), else its step
// ends after its compute (its own pace). Each worker step sends one gradient to ps:0, applied in
// 200 us.
std::string Job(const std::vector<int64_t>& compute_us, bool sync, int64_t step_us) {
  std::vector<std::string> ev;
  ev.push_back(MetaEvent(1, "/job:ps/replica:0/task:0/device:CPU:0"));
  ev.push_back(OpEvent(1, 0, 0, 1, "w", "VariableV2"));
  int tid = 0;
  for (int w = 0; w < kWorkers; ++w) {
    const int pid = w + 2;
    ev.push_back(MetaEvent(pid, fmt::format("/job:worker/replica:0/task:{}/device:CPU:0", w)));
    int64_t t0 = 10;
    for (int k = 0; k < kSteps; ++k) {
      const int64_t len = sync ? step_us : compute_us[w] + 300;
      ev.push_back(OpEvent(pid, 0, t0, 1, "_SOURCE", "NoOp"));
      ev.push_back(OpEvent(pid, 0, t0 + 1, compute_us[w], "model/MatMul", "MatMul"));
      const int64_t grad = t0 + 1 + compute_us[w];
      ev.push_back(OpEvent(1, ++tid, grad + 10, 200, fmt::format("apply_{}_{}", w, k),
                           sync ? "AccumulatorApplyGradient" : "ApplyGradientDescent", {"w"}));
      if (sync) {
        ev.push_back(OpEvent(pid, 0, grad + 1, t0 + len - grad - 2,
                             "sync_replicas/sync_token_q_Dequeue", "QueueDequeueV2",
                             {"sync_replicas/sync_token_q"}));
      } else {
        ev.push_back(OpEvent(pid, 0, grad + 1, 298, "model/Send", "NoOp"));
      }
      t0 += len;
    }
  }
  return ObjectForm(ev);
}

// Sync, worker:3 computes 25 ms where the others compute 10 ms; every step is 26 ms (the others
// wait 16 ms for the token). Before: the dequeue was compute, every worker's step alike, no
// straggler. The twin (worker:3 at 10 ms) steps in 11 ms; the prediction is within 15% of it.
TEST(SyncStraggler, SyncStragglerIsFoundAndTheJobFollowsTheSlowest) {
  TempDir dir;
  const std::string path = dir.File("sync.json"), twin = dir.File("sync-twin.json");
  WriteFile(path, Job({10'000, 10'000, 10'000, 25'000}, true, 26'000));
  WriteFile(twin, Job({10'000, 10'000, 10'000, 10'000}, true, 11'000));
  const Capture c = LoadOrDie({path});
  const AnalysisResult r = Analyze(c, Rules());
  // The token dequeue is a wait: a fast worker's median step is mostly sync, not compute.
  const StepGraph& g = *r.graph;
  const uint32_t w0 = g.MedianStep(c.FindTask("worker:0"));
  ASSERT_NE(w0, kNoIndex);
  EXPECT_LT(g.steps()[w0].compute_ns, 11'000'000);
  EXPECT_GT(g.steps()[w0].sync_ns, 14'000'000);
  const Finding* f = FindRule(r, "straggler-worker");
  ASSERT_NE(f, nullptr) << "no straggler under sync";
  EXPECT_EQ(f->subject, "worker:3");
  EXPECT_NE(f->summary.find("sync"), std::string::npos) << f->summary;
  ASSERT_EQ(f->impact.method, "replay") << f->impact.why;
  const double measured = MedianWorkerStep(LoadOrDie({twin}));
  const double err = (f->impact.step_ns_after_fix - measured) / measured;
  EXPECT_LT(std::abs(err), 0.15) << f->impact.why << " twin " << measured;
  EXPECT_GT(f->impact.saving_pct, 40) << f->impact.why;
  // The critical path names the wait.
  const RunResult text = RunTfdiag("analyze " + path);
  EXPECT_NE(text.out.find("for the sync token"), std::string::npos) << text.out;
}

// Async, worker:3 at 25 ms, the others at 10 ms: the job does 3/10.3 + 1/25.3 steps per ms;
// fixed, 4/10.3, 15% more throughput, a step at the job's throughput 13% shorter. The median
// step does not move (before: "-0%").
TEST(SyncStraggler, AsyncStragglerImpactIsTheJobsThroughput) {
  TempDir dir;
  const std::string path = dir.File("async.json");
  WriteFile(path, Job({10'000, 10'000, 10'000, 25'000}, false, 0));
  const AnalysisResult r = Analyze(LoadOrDie({path}), Rules());
  const Finding* f = FindRule(r, "straggler-worker");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->subject, "worker:3");
  ASSERT_EQ(f->impact.method, "replay") << f->impact.why;
  // The truth from the steps written above: throughput now and fixed.
  const double now = 3 / 10.3 + 1 / 25.3, fixed = 4 / 10.3;
  const double want = 100 * (1 - now / fixed);
  EXPECT_NEAR(f->impact.saving_pct, want, 3) << f->impact.why;
  EXPECT_NE(f->impact.why.find("throughput"), std::string::npos) << f->impact.why;
}

}  // namespace
}  // namespace tfdiag::test
