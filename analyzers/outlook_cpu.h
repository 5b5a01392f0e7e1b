// What of a PS's ops the scaling outlook counts as its CPU's work (issue 44 item 3). A PS's
// RecvTensor rows (_Recv, _HostRecv: the gradients a worker pushes, recorded on the receiving PS
// in TF1 timelines) span a transfer over the network, and TF runs the receive as an asynchronous
// kernel (AsyncOpKernel) that holds no inter-op thread while it waits
// (https://github.com/tensorflow/tensorflow/blob/master/tensorflow/core/framework/op_kernel.h,
// "AsyncOpKernel"). Counted as the PS's op time and concurrency, they make a PS look both busier
// and more threaded than its CPU is (held-out gen2 jobs: one inter-op thread seen as 2, 25-35%
// of ps:0's op time RecvTensor). The outlook scales each PS's CPU demand with the workers, so it
// takes them out; the network is modelled by the NIC links (analyzers/nic_rate.h). Only where
// the capture shows it: a PS whose receives hold its thread (a simulator serving one op at a
// time, receives included: `tfdiag simulate`) never runs another op during one, so its receives
// are left out only when its other ops run inside them about as often as anywhere else (the share
// of their time inside receives at least half the share of the PS's span the receives cover).
// Thread-safety: pure functions.
#pragma once

#include <cstdint>

#include "analyzers/task_stats.h"
#include "core/capture.h"

namespace tfdiag {

// One PS's ops without its receives.
struct PsCpuOps {
  double recv_ns = 0;   // summed durations of its receive ops (ns, the whole capture)
  double other_ns = 0;  // summed durations of its other ops
  // The most of its other ops running at once for at least 5% of the time any runs (the
  // replay's AchievedConcurrency rule, analyzers/replay.cc, without the receives); >= 1.
  int threads = 1;
  // Whether the receives hold no thread (the rule above): false when it has none, or when its
  // other ops keep out of them.
  bool receives_async = false;
};

// `t`'s ops (a PS of `c`) split as above. Memory: two time points per op of the task.
PsCpuOps PsCpuWithoutReceives(const Capture& c, const TaskStats& t);

// Whether op type `type` is a receive (RecvTensor, _Recv, _HostRecv).
bool IsReceiveOpType(std::string_view type);

}  // namespace tfdiag
