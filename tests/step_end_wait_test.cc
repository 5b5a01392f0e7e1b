// Issue 35 item 2 and 3: the wait at a step's end (the worker's last gradient push, until the PS
// has applied it) is attributed to the tensor and the task, and a wait that input ops cover is
// labelled input, not a wait for the tensor the next op takes. A TF1 timeline written op by op:
// each worker step reads input (3 ms of IteratorGetNext), takes w/read from ps:0 (a DataFlow
// arrow), computes 5 ms, pushes its gradient to ps:0 (an arrow into ApplyGradientDescent) and
// waits for the apply (a RecvTensor to the step's end).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analyzers/analysis.h"
#include "analyzers/step_graph.h"
#include "analyzers/worker_wait.h"
#include "rules/rule_set.h"
#include "tests/test_util.h"
#include "tests/trace_json.h"

namespace tfdiag::test {
namespace {

constexpr int kWorkers = 2, kSteps = 5;

std::string Job() {
  std::vector<std::string> ev;
  ev.push_back(MetaEvent(1, "/job:ps/replica:0/task:0/device:CPU:0"));
  ev.push_back(OpEvent(1, 0, 0, 1, "w", "VariableV2"));
  int flow = 0, tid = 0;
  for (int w = 0; w < kWorkers; ++w) {
    const int pid = w + 2;
    ev.push_back(MetaEvent(pid, fmt::format("/job:worker/replica:0/task:{}/device:CPU:0", w)));
    int64_t t0 = 100 + 7 * w;
    for (int k = 0; k < kSteps; ++k) {
      ++tid;
      ev.push_back(OpEvent(pid, 0, t0, 1, "_SOURCE", "NoOp"));
      ev.push_back(OpEvent(pid, 0, t0 + 1, 3000, "IteratorGetNext", "IteratorGetNext"));
      // w/read on ps:0, sent to the worker's MatMul.
      ev.push_back(OpEvent(1, tid, t0 + 5, 2, "w/read", "Identity", {"w"}));
      ev.push_back(FlowEvent('s', 1, tid, t0 + 7, ++flow, "w/read"));
      ev.push_back(FlowEvent('t', pid, 0, t0 + 3001, flow, "w/read"));
      ev.push_back(OpEvent(pid, 0, t0 + 3001, 5000, "model/MatMul", "MatMul",
                           {"IteratorGetNext", "w/read"}));
      // The gradient, pushed to ps:0 and applied there in 2.8 ms; the worker waits for it.
      ev.push_back(FlowEvent('s', pid, 0, t0 + 8001, ++flow, "gradients/MatMul_grad"));
      ev.push_back(FlowEvent('t', 1, tid, t0 + 8100, flow, "gradients/MatMul_grad"));
      ev.push_back(OpEvent(1, tid, t0 + 8100, 2800, "GradientDescent/update_w/Apply",
                           "ApplyGradientDescent", {"w", "gradients/MatMul_grad"}));
      ev.push_back(OpEvent(pid, 1, t0 + 8001, 3000, "RecvTensor", "RecvTensor"));
      t0 += 11'100;
    }
  }
  return ObjectForm(ev);
}

TEST(StepEndWait, TheTailIsAttributedToTheLastPushAndInputIsInput) {
  TempDir dir;
  const std::string path = dir.File("job.json");
  WriteFile(path, Job());
  const Capture c = LoadOrDie({path});
  StatusOr<RuleSet> rules = DefaultRuleSet();
  ASSERT_TRUE(rules.ok());
  const AnalysisResult r = Analyze(c, *rules);
  const StepGraph& g = *r.graph;
  const uint32_t w0 = c.FindTask("worker:0"), ps = c.FindTask("ps:0");
  const uint32_t s = g.MedianStep(w0);
  ASSERT_NE(s, kNoIndex);
  bool tail = false, input = false;
  for (const PathSegment& p : g.Segments(s)) {
    if (!p.wait) continue;
    const WaitLabel l = LabelWait(c, g, p);
    if (p.step_tail) {
      tail = true;
      ASSERT_NE(p.edge, kNoIndex) << "the step's tail is not attributed";
      const GraphEdge& e = g.edges()[p.edge];
      EXPECT_TRUE(e.push);
      EXPECT_EQ(e.dst_task, ps);
      EXPECT_EQ(c.Str(e.tensor), "gradients/MatMul_grad");
      EXPECT_NEAR(double(p.end - p.start), 3e6, 1e4);
      EXPECT_NE(l.what.find("at the step's end for ps:0 to take gradients/MatMul_grad"),
                std::string::npos)
          << l.what;
    } else if (p.end - p.start > 2'000'000) {
      input = true;
      EXPECT_TRUE(l.input) << "3 ms of IteratorGetNext before MatMul read as" << l.what;
    }
  }
  EXPECT_TRUE(tail);
  EXPECT_TRUE(input);
  // Per task: the tail's cause is ps:0 and the gradient, every step.
  bool cause = false;
  for (const WaitCause& w : g.WaitCausesOf(w0)) {
    if (!w.step_tail || w.src_task != ps) continue;
    cause = true;
    EXPECT_EQ(c.Str(w.tensor), "gradients/MatMul_grad");
    EXPECT_EQ(w.waits, kSteps);
  }
  EXPECT_TRUE(cause);
  const RunResult text = RunTfdiag("analyze " + path);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("at the step's end for ps:0 to take gradients/MatMul_grad"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("input 3.0 ms"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("wait 3.0 ms for w/read"), std::string::npos) << text.out;
}

}  // namespace
}  // namespace tfdiag::test
