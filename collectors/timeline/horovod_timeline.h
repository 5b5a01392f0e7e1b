// Recognising a Horovod timeline among a file's rows and summarising it into HorovodStats
// (core/horovod_stats.h, which describes the format and its source). Internal to
// collectors/timeline: TraceHandler::Finish() hands it the ops of the rows whose process_name is
// not a TF device, before they are dropped.
// Thread-safety: pure function.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/horovod_stats.h"

namespace tfdiag {

// One op (an X event or a B/E pair) on a tensor's row.
struct HorovodEvent {
  int64_t start_ns = 0, dur_ns = 0;
  uint32_t tensor = 0;    // index into the tensor names
  std::string_view name;  // "NEGOTIATE_ALLREDUCE", "3" (a rank ready), "NCCL_ALLREDUCE", ...
};

// Summarises `events` (any order; the result does not depend on it). Returns false, leaving
// `out` alone, when they are not a Horovod timeline's: no NEGOTIATE_* phase among them. A ready
// mark counts only inside a negotiation of its tensor; a negotiation's wait is its last ready
// mark minus its first, and its last rank is the rank of the last mark (ties: the highest rank,
// whose mark was written last).
bool SummarizeHorovod(std::vector<HorovodEvent> events, const std::vector<std::string>& tensors,
                      HorovodStats* out);

}  // namespace tfdiag
