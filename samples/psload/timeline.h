// psload --timeline: a TF1 Chrome-trace timeline (the format of TensorFlow's timeline.py,
// generate_chrome_trace_format) of what one psload task did, so the job can be analyzed and
// replayed (tfdiag analyze, analyzers/replay.h) like a traced TF job. Each op is one of the task's
// real intervals, on the host's CLOCK_REALTIME (all tasks on one host share it):
//  - worker: `_SOURCE` (NoOp) at each step's start; `IteratorGetNext` around the hdfs read;
//    `DynamicPartition` around the split of the step's ids by PS; one `_Recv` per PS around the
//    pull round trip (as TF's _Recv ends when the tensor arrived); `MatMul` around the compute
//    phase (its `_S<N>` inputs name what each PS sent), then `Reshape` (the embedding gradient, 1
//    us); one `_Recv` per PS around the push round trip (TF's worker waits for the PS's apply
//    through a control-edge _Recv); `group_deps` (NoOp) at the end.
//  - PS: per request served, on its pool thread's lane, from the request's header to the reply
//    sent: `GatherV2` for a pull, `SparseApplyAdagrad` for a push, `ReadVariableOp` for a dense
//    pull; their inputs name the variable and `<tensor>_S<N>` partition inputs from the worker's
//    DynamicPartition and Reshape, as TF's graph_partition.cc names cross-task inputs.
// Variables: hot placement holds one unpartitioned `embedding/embedding_weights` on ps:0 (and
// `dense/kernel` on the others); balanced holds `embedding/embedding_weights/part_<p>` on ps:p,
// as fixed_size_partitioner(num_ps) names them.
// Thread-safety: Add from any thread; Write after every recording thread stopped.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "samples/psload/options.h"

namespace psload {

class Timeline {
 public:
  enum class Op : uint8_t {
    kSource,     // worker: _SOURCE
    kInput,      // worker: IteratorGetNext
    kPullRecv,   // worker: _Recv of the rows gathered on PS `peer`
    kDenseRecv,  // worker: _Recv of the dense variable of PS `peer`
    kCompute,    // worker: MatMul
    kPushRecv,   // worker: _Recv of PS `peer`'s apply (control edge)
    kTrain,      // worker: group_deps
    kPartition,  // worker: DynamicPartition (the step's ids split by PS)
    kGradient,   // worker: Reshape (the embedding gradient, ready when the compute ends)
    kGather,     // PS: GatherV2
    kApply,      // PS: SparseApplyAdagrad
    kDenseRead,  // PS: ReadVariableOp
  };

  // At most `max_events` ops are kept (24 bytes each); later ones are counted in dropped().
  explicit Timeline(size_t max_events = size_t{1} << 20) : max_(max_events) {}

  // Nanoseconds on CLOCK_REALTIME.
  static int64_t NowNs();

  // Records `op` over [start_ns, end_ns] on lane `lane` (a PS pool thread, 0 on a worker);
  // `peer` is the PS index for worker ops. Thread-safe.
  void Add(Op op, int peer, int64_t start_ns, int64_t end_ns, int lane = 0);

  size_t dropped() const { return dropped_; }

  // Writes the trace of task `o` (job, index, placement, num_ps) to `path` atomically (a temp
  // file beside it, then rename). False with `error` naming the file.
  bool Write(const Options& o, const std::string& path, std::string* error) const;

  // One recorded op (public for the writer's helpers).
  struct Event {
    int64_t start_ns, end_ns;
    int32_t lane;
    int16_t peer;
    Op op;
  };
  static_assert(sizeof(Event) == 24, "24 bytes an op");

 private:
  mutable std::mutex mu_;
  std::vector<Event> events_;
  size_t max_;
  size_t dropped_ = 0;
};

// The process's timeline, or nullptr when --timeline is not given (set by main).
Timeline* ProcessTimeline();
void SetProcessTimeline(Timeline* t);

}  // namespace psload
