// PullBesideInput (analyzers/pull_beside_input.h): whether a step's pull ran beside its input,
// and the transfer the input hid, on hand-made spans and edges.
#include "analyzers/pull_beside_input.h"

#include <gtest/gtest.h>

#include <vector>

namespace tfdiag {
namespace {

GraphEdge Answer(uint32_t src, TimeNs sent) {
  GraphEdge e;
  e.src_task = src;
  e.dst_task = 1;
  e.sent = sent;
  return e;
}

// A step of task 1 (a worker): IteratorGetNext over [0, 5800); ps:0 (task 0) answered its reads
// at 400 ns and 390 ns, and the receives arrived by 5077 while the input ran.
TEST(PullBesideInput, AnswersThatArriveDuringTheInputHideTheirTransfer) {
  const std::vector<Span> in = {{0, 5800}};
  const std::vector<Span> recv = {{190, 224}, {303, 1958}, {425, 5077}};
  const PullBeside b = PullBesideInput(in, recv, {Answer(0, 390), Answer(0, 400)}, 1);
  EXPECT_TRUE(b.beside);
  EXPECT_EQ(b.xfer_ns, 5077 - 400);
}

// A gather needs the step's ids: an answer sent after the input ended means the pull followed it.
TEST(PullBesideInput, AnAnswerSentAfterTheInputIsNoPullBesideIt) {
  const std::vector<Span> in = {{0, 5800}};
  const PullBeside b = PullBesideInput(in, {{425, 5077}}, {Answer(0, 400), Answer(0, 6100)}, 1);
  EXPECT_FALSE(b.beside);
  EXPECT_EQ(b.xfer_ns, 0);
}

// Without an input op, or without an answer from another task, nothing ran beside an input;
// the task's own tensors, pushes and ambiguous edges are no answer.
TEST(PullBesideInput, NeedsAnInputAndAnAnswer) {
  EXPECT_FALSE(PullBesideInput({}, {{0, 10}}, {Answer(0, 5)}, 1).beside);
  GraphEdge push = Answer(0, 5), ambiguous = Answer(0, 5);
  push.push = true;
  ambiguous.candidates = 2;
  EXPECT_FALSE(PullBesideInput({{0, 100}}, {{0, 10}}, {Answer(1, 5), push, ambiguous}, 1).beside);
}

// Only receives that ran while an input op did and ended by the input's end say how long the
// hidden transfer took; without one (a capture with no receive ops) the transfer is 0.
TEST(PullBesideInput, OnlyReceivesInsideTheInputCount) {
  const std::vector<Span> in = {{100, 5800}};
  EXPECT_EQ(PullBesideInput(in, {{10, 90}, {425, 6000}}, {Answer(0, 50)}, 1).xfer_ns, 0);
  EXPECT_EQ(PullBesideInput(in, {}, {Answer(0, 50)}, 1).xfer_ns, 0);
  EXPECT_EQ(PullBesideInput(in, {{90, 2050}}, {Answer(0, 50)}, 1).xfer_ns, 2000);
}

}  // namespace
}  // namespace tfdiag
