// The replay with PS requests served in no particular order (analyzers/replay_order.h). gen2 and
// gen3 PS take a random ready op (Eigen's work-stealing pool), and under load that spreads the
// steps: on gen2 report6 (spent) the FIFO replay of the capture as it is missed the workers'
// median step by +23% (1429: 150 workers on a PS busy 93% of the capture), +26% (1430) and +18%
// (1423); served in any order, +12%, +11% and +10%. These tests pin the mechanism on models
// built by hand: in order it is the FIFO replay, out of order the same throughput with a shorter
// median step.
#include "analyzers/replay_order.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "analyzers/replay.h"
#include "tests/replay_util.h"
#include "tests/test_util.h"

namespace tfdiag {
namespace {

// `workers` asynchronous workers of `compute_ms` each on one PS of one thread whose pull and
// push take `pull_ms` and `push_ms` of its time per worker step.
ReplayModel OnePs(int workers, double compute_ms, double pull_ms, double push_ms) {
  ReplayModel m;
  ReplayModel::Ps p;
  p.task = 0;
  p.threads = 1;
  p.pull_ns = pull_ms * 1e6;
  p.push_ns = push_ms * 1e6;
  m.ps.push_back(p);
  for (int w = 0; w < workers; ++w) {
    ReplayModel::Worker x;
    x.task = uint32_t(w + 1);
    x.compute_ns = compute_ms * 1e6;
    x.compute_sigma_ns = 0.05 * compute_ms * 1e6;
    m.workers.push_back(x);
  }
  m.steps = 20;
  m.measured_step_ns = compute_ms * 1e6;
  return m;
}

double Mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / double(v.size());
}

// Taking the oldest waiting request is the FIFO replay, step for step: a light and a saturated PS.
TEST(ReplayOrder, InOrderIsTheFifoReplay) {
  for (const int workers : {4, 30}) {
    const ReplayModel m = OnePs(workers, 100, 6, 4);
    const double fifo = ReplayMedianStep(m, Fix{}, 40);
    const double in_order =
        replay_detail::SimulateAnyOrder(m, Fix{}, 40, nullptr, nullptr, nullptr, true);
    ASSERT_GT(fifo, 0);
    EXPECT_NEAR(in_order / fifo, 1.0, 1e-9) << workers << " workers";
  }
}

// A saturated PS (30 workers x 10 ms of PS time per step against 100 ms of compute: 300 ms of
// PS work a round) served in any order does the same work, so the mean step stays within a few
// percent of FIFO's, but the median step is shorter: most requests wait less, a few far longer.
// A model with any_order set replays that way, and a light PS hardly notices.
TEST(ReplayOrder, AnyOrderKeepsTheThroughputAndShortensTheMedianStepUnderLoad) {
  ReplayModel m = OnePs(30, 100, 6, 4);
  std::vector<double> fifo_mean, any_mean;
  const double fifo =
      replay_detail::SimulateAnyOrder(m, Fix{}, 40, nullptr, nullptr, &fifo_mean, true);
  const double any = replay_detail::SimulateAnyOrder(m, Fix{}, 40, nullptr, nullptr, &any_mean);
  ASSERT_GT(fifo, 0);
  EXPECT_NEAR(Mean(any_mean) / Mean(fifo_mean), 1.0, 0.05);
  EXPECT_LT(any / fifo, 0.9) << any << " vs " << fifo;
  m.any_order = true;
  EXPECT_DOUBLE_EQ(ReplayMedianStep(m, Fix{}, 40), any);

  ReplayModel light = OnePs(4, 100, 6, 4);
  const double light_fifo = ReplayMedianStep(light, Fix{}, 40);
  light.any_order = true;
  EXPECT_NEAR(ReplayMedianStep(light, Fix{}, 40) / light_fifo, 1.0, 0.02);
}

// A synchronous job's replay stays FIFO (its barrier is not modelled out of order).
TEST(ReplayOrder, SyncJobsStayFifo) {
  ReplayModel m = OnePs(8, 50, 4, 2);
  m.sync = true;
  const double fifo = ReplayMedianStep(m, Fix{}, 20);
  m.any_order = true;
  EXPECT_DOUBLE_EQ(ReplayMedianStep(m, Fix{}, 20), fifo);
  EXPECT_EQ(replay_detail::SimulateAnyOrder(m, Fix{}, 20, nullptr, nullptr, nullptr), 0);
}

// The capture's steps choose the order (ServedOutOfOrder): a saturated PS whose captured steps
// spread as the out-of-order replay's do, and whose median that replay reproduces, is served out
// of order; the same PS with steps as even as FIFO's stays FIFO, and so does a light PS (both
// orders replay alike).
TEST(ReplayOrder, TheCapturesStepSpreadChoosesTheOrder) {
  ReplayModel fifo = OnePs(30, 100, 6, 4);
  ReplayModel any = fifo;
  any.any_order = true;
  std::vector<double> l;
  replay_detail::SimulateAnyOrder(any, Fix{}, ReplaySteps(any), nullptr, nullptr, nullptr, false,
                                  &l);
  ASSERT_GE(l.size(), 4u);
  std::sort(l.begin(), l.end());
  for (ReplayModel* m : {&fifo, &any}) {  // a capture with the out-of-order replay's steps
    m->measured_step_ns = m->worker_median_step_ns = l[l.size() / 2];
    m->step_q1_ns = l[l.size() / 4];
    m->step_q3_ns = l[l.size() * 3 / 4];
  }
  EXPECT_TRUE(replay_detail::ServedOutOfOrder(fifo, any));
  const double fifo_step = ReplayMedianStep(fifo, Fix{}, 40);
  for (ReplayModel* m : {&fifo, &any}) {  // the same PS, its steps as even as FIFO's
    m->step_q1_ns = 0.98 * m->measured_step_ns;
    m->step_q3_ns = 1.02 * m->measured_step_ns;
  }
  EXPECT_FALSE(replay_detail::ServedOutOfOrder(fifo, any)) << fifo_step;
  ReplayModel light = OnePs(4, 100, 6, 4), light_any = light;
  light_any.any_order = true;
  for (ReplayModel* m : {&light, &light_any}) {
    m->measured_step_ns = m->worker_median_step_ns = ReplayMedianStep(light, Fix{}, 40);
    m->step_q1_ns = 0.6 * m->measured_step_ns;
    m->step_q3_ns = 1.4 * m->measured_step_ns;
  }
  EXPECT_FALSE(replay_detail::ServedOutOfOrder(light, light_any));
}

// A pull to a PS that hosts several variables is one op per variable, each taken by a free
// thread on its own: the worker waits for the last, so its wait spreads less than one request's.
TEST(ReplayOrder, APullIsOneOpPerVariable) {
  ReplayModel one = OnePs(30, 100, 6, 4);
  one.any_order = true;
  ReplayModel many = one;
  many.ps[0].var_ns.assign(8, 10e6 / 8);
  many.ps[0].var_ops.assign(8, 2);
  many.ps[0].var_parts.assign(8, 1);
  const auto spread = [](const ReplayModel& m) {
    std::vector<double> l;
    replay_detail::SimulateAnyOrder(m, Fix{}, 40, nullptr, nullptr, nullptr, false, &l);
    std::sort(l.begin(), l.end());
    return (l[l.size() * 3 / 4] - l[l.size() / 4]) / l[l.size() / 2];
  };
  EXPECT_LT(spread(many), 0.7 * spread(one));
}

// gen3 report6 (spent) 1718 (2 PS of one thread, 24 workers) and indep report11 (spent) 19010 (1
// PS, 25 workers): their PS take a random waiting op, and the FIFO replay of each capture missed
// the workers' median step by +15% and -17%, so the PS-count prediction was withheld. The
// captured steps spread as the out-of-order replay's do; served so, each is predicted within 25%
// of its twin (1718: 64.0 ms against 62.7 ms; 19010: 18.7 ms against 21.0 ms), and the impact
// says the order.
TEST(ReplayOrder, OutOfOrderPsCountPredictionsOnTwinJobs) {
  if (!test::HavePython3()) GTEST_SKIP() << "python3 is not installed: the generators need it";
  for (const auto& [script, seed] :
       {std::pair<std::string, std::string>{"gen3/run_gen3.py", "1718"},
        std::pair<std::string, std::string>{"indep/run_indep.py", "19010"}}) {
    rapidjson::Document d;
    std::string out;
    ASSERT_NO_FATAL_FAILURE(
        test::RunBenchJobs(script, "--seeds " + seed + " --no-outlook", 1, &d, &out));
    const rapidjson::Value* row = nullptr;
    for (const auto& r : d["jobs"][0]["rows"].GetArray()) {
      if (std::string(r["rule"].GetString()) == "ps-worker-ratio") row = &r;
    }
    ASSERT_NE(row, nullptr) << seed << "\n" << out;
    ASSERT_STREQ((*row)["method"].GetString(), "replay")
        << seed << ": " << (*row)["why"].GetString();
    EXPECT_NE(std::string((*row)["why"].GetString()).find("out of arrival order"),
              std::string::npos)
        << (*row)["why"].GetString();
    ASSERT_TRUE(row->HasMember("err_pct")) << out;
    EXPECT_LE(std::abs((*row)["err_pct"].GetDouble()), 25.0) << seed << "\n" << out;
  }
}

}  // namespace
}  // namespace tfdiag
