#include "analyzers/pull_beside_input.h"

#include <algorithm>

namespace tfdiag {

PullBeside PullBesideInput(const std::vector<Span>& inputs, const std::vector<Span>& recvs,
                           const std::vector<GraphEdge>& edges, uint32_t task) {
  PullBeside out;
  TimeNs input_end = 0;
  for (const Span& s : inputs) input_end = std::max(input_end, s.end);
  if (input_end == 0) return out;
  TimeNs last_sent = 0;
  for (const GraphEdge& e : edges) {
    if (e.push || e.ambiguous() || e.src_task == kNoIndex || e.src_task == task) continue;
    if (e.sent >= input_end) return out;  // asked for after the input (a gather of its ids)
    last_sent = std::max(last_sent, e.sent);
  }
  if (last_sent == 0) return out;
  out.beside = true;
  TimeNs arrived = 0;
  for (const Span& r : recvs) {
    if (r.end > input_end) continue;
    for (const Span& s : inputs) {
      if (r.start < s.end && r.end > s.start) arrived = std::max(arrived, r.end);
    }
  }
  out.xfer_ns = std::max<TimeNs>(0, arrived - last_sent);
  return out;
}

}  // namespace tfdiag
