// HorovodStats: the figures of Horovod timelines, which tfdiag reads beside TF timelines.
//
// A Horovod timeline (HOROVOD_TIMELINE=<file>) is written by rank 0 only and holds every rank's
// part of the negotiation. Its event shapes (horovod/common/timeline.cc, Timeline and
// TimelineWriter): one Chrome-trace process per tensor (process_name = the tensor's name, no tid);
// per tensor a B/E phase NEGOTIATE_<OP> holding one X event of dur 0 named by a rank ("0".."N-1")
// each time that rank reports the tensor ready, then a B/E phase <OP> (ALLREDUCE, ALLGATHER,
// BROADCAST, ...) with nested B/E activities (WAIT_FOR_DATA, QUEUE, MEMCPY_IN_FUSION_BUFFER,
// NCCL_ALLREDUCE or MPI_ALLREDUCE, MEMCPY_OUT_FUSION_BUFFER, ...), and `i` CYCLE_START marks.
// What users read them for (Horovod docs, "Analyze Performance",
// https://horovod.readthedocs.io/en/stable/timeline_include.html): which ranks were late to
// negotiate, and the time in the collective against the fusion-buffer copies.
//
// Times are ns. Wall times are unions of the intervals over all tensors (activities of a fused
// batch run at once on every tensor of the batch); per-tensor times are sums of that tensor's own
// intervals. Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tfdiag {

// One tensor (one row of the timeline).
struct HorovodTensor {
  std::string name;
  int64_t negotiations = 0;           // NEGOTIATE_* phases
  int64_t ops = 0;                    // <OP> phases (ALLREDUCE, ...)
  int64_t negotiate_ns = 0;           // NEGOTIATE_* phases, B to E, summed
  int64_t wait_ns = 0;                // first to last rank ready, summed over its negotiations
  int64_t collective_ns = 0;          // NCCL_*, MPI_*, GLOO_*, CCL_* activities, summed
  int64_t memcpy_ns = 0;              // MEMCPY_* activities (fusion and host buffers), summed
  int32_t last_rank = -1;             // the rank most often last ready (ties: the lowest); -1 none
  int64_t last_rank_count = 0;        // negotiations in which last_rank was last
  std::vector<int64_t> last_by_rank;  // negotiations in which rank r was last, by r
};

// One rank, from the ready marks.
struct HorovodRank {
  int64_t ready = 0;    // ready marks
  int64_t last = 0;     // negotiations in which it was the last rank ready
  int64_t wait_ns = 0;  // what the first ready rank waited in those negotiations, summed
};

// One activity name (QUEUE, NCCL_ALLREDUCE, ...).
struct HorovodActivity {
  std::string name;
  int64_t count = 0;     // phases, over all tensors
  int64_t total_ns = 0;  // summed over tensors
  int64_t wall_ns = 0;   // union over tensors
};

struct HorovodStats {
  int64_t files = 0;         // Horovod timelines read
  int64_t negotiations = 0;  // NEGOTIATE_* phases
  int64_t ready_marks = 0;   // rank ready marks (inside a negotiation)
  int64_t ops = 0;           // <OP> phases
  int64_t span_ns = 0;       // first event to last end, summed over files
  int64_t wait_ns = 0;       // first to last rank ready, summed over negotiations
  // Wall times (unions over tensors) of: negotiations; collective activities (NCCL_*, MPI_*,
  // GLOO_*, CCL_*); those of them named *ALLREDUCE; MEMCPY_* activities; QUEUE; WAIT_FOR_*.
  int64_t negotiate_wall_ns = 0, collective_wall_ns = 0, allreduce_wall_ns = 0;
  int64_t memcpy_wall_ns = 0, queue_wall_ns = 0, wait_for_data_wall_ns = 0;
  std::vector<HorovodActivity> activities;  // sorted by name
  std::vector<HorovodRank> ranks;           // index = rank; size = highest rank seen + 1
  std::vector<HorovodTensor> tensors;       // sorted by wait_ns (largest first), then name

  bool empty() const { return files == 0; }
  // Adds another file's figures: counts and times add up (wall times too: files are separate
  // runs), tensors and activities of the same name merge; the orders above are kept.
  void Merge(const HorovodStats& other);
};

}  // namespace tfdiag
