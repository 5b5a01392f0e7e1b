// The PS receive links of the scaling outlook (analyzers/outlook_links.h PsLinks) from any receive
// row a profile writes (IsRecvOpType: RecvTensor, _Recv, _HostRecv). TaskStats::recv_ns sums
// RecvTensor rows only, so a PS whose receives were _Recv rows read a receive share but no load or
// concurrency, which turned off RecvLinkCap's load and convoy gates (review of o66, item 2: gen3
// report9 2320 with its RecvTensor rows written as _Recv went 1.21x -> 2.00x at 2x the workers).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "analyzers/analysis_input.h"
#include "analyzers/outlook_links.h"
#include "analyzers/replay.h"
#include "analyzers/step_graph.h"
#include "analyzers/task_stats.h"
#include "tests/replay_util.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

// `path`'s capture with every "RecvTensor" op written as `type`, loaded with its model built.
void LoadRewritten(const std::string& path, const std::string& type, const TempDir& dir,
                   SimJob* j) {
  std::string text = ReadFile(path);
  const std::string from = "\"RecvTensor\"", to = "\"" + type + "\"";
  size_t n = 0;
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at)) {
    text.replace(at, from.size(), to);
    at += to.size(), ++n;
  }
  ASSERT_GT(n, 0u) << "no RecvTensor rows in " << path;
  const std::string out = dir.File("rewritten_" + type + ".json");
  WriteFile(out, text);
  j->c = LoadOrDie({out});
  j->stats = ComputeTaskStats(j->c);
  j->graph = std::make_unique<StepGraph>(StepGraph::Build(j->c));
  j->m = BuildReplayModel(j->In());
}

// gen3 report9 2320 (spent; 4 PS of 16 workers): each PS's load, concurrency and receive rows per
// second read the same whether its receives are RecvTensor, _Recv or _HostRecv rows.
TEST(OutlookRecvRows, EveryReceiveRowTypeLoadsThePsLink) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen3 needs it";
  TempDir dir;
  SimJob j;
  ASSERT_NO_FATAL_FAILURE(LoadSimJob("gen3", 2320, dir, &j));
  const std::vector<PsLinkEvidence> as_is = PsLinks(j.In(), j.m);
  ASSERT_EQ(as_is.size(), 4u);
  ASSERT_GT(as_is[0].recv_share, 0);
  ASSERT_GT(as_is[0].recv_load, 0);
  for (const std::string type : {"_Recv", "_HostRecv"}) {
    SimJob r;
    ASSERT_NO_FATAL_FAILURE(LoadRewritten(dir.File("gen3_2320.json"), type, dir, &r));
    ASSERT_EQ(r.m.ps.size(), j.m.ps.size());
    const std::vector<PsLinkEvidence> ev = PsLinks(r.In(), r.m);
    for (size_t p = 0; p < ev.size(); ++p) {
      EXPECT_NEAR(ev[p].recv_share, as_is[p].recv_share, 1e-9) << type << " ps " << p;
      EXPECT_NEAR(ev[p].recv_load, as_is[p].recv_load, 1e-9) << type << " ps " << p;
      EXPECT_NEAR(ev[p].recv_concurrency, as_is[p].recv_concurrency, 1e-9) << type << " ps " << p;
      EXPECT_NEAR(ev[p].recv_rows_per_s, as_is[p].recv_rows_per_s, 1e-6) << type << " ps " << p;
      EXPECT_NEAR(ev[p].recv_stretch, as_is[p].recv_stretch, 1e-9) << type << " ps " << p;
    }
  }
}

}  // namespace
}  // namespace tfdiag::test
