// Per-task figures derived from a Capture: busy time, op breakdown, RecvTensor, steps, and for
// each PS its share of PS work, the variables it hosts and the edges it serves.
// Pure functions; no I/O. Thread-safety: ComputeTaskStats may run concurrently on one Capture.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/capture.h"

namespace tfdiag {

// Total op time of one op type on a task (durations summed, lanes overlap).
struct OpTypeTime {
  std::string type;
  int64_t count = 0;
  TimeNs total_ns = 0;
};

// A variable hosted by a PS (VariableV2, VarHandleOp, ... and its slot variables such as
// "<var>/Adam"), with the op time attributed to it: the variable op, its reads ("<var>/read",
// ReadVariableOp) and every op taking it (or its read) as an input (gathers, applies).
struct VariableLoad {
  std::string name;
  int64_t ops = 0;
  TimeNs total_ns = 0;  // summed op durations attributed to the variable
  int64_t bytes = -1;   // size from a show_memory snapshot of "<var>" or "<var>/read", or -1
  // Bytes the task sent (EdgeRow::bytes summed) in tensors its ops on the variable produced (a
  // read, a gather), or -1 where some tensor the task sent has no size (a control-only op's
  // unsized edge, an apply's or an accumulator's to the train_op, counts 0: IsControlOnlyOpType).
  int64_t out_bytes = -1;
  double share = 0;  // total_ns / all op time on the PS (receives left out), in [0, 1]
  // Some op on it reads or updates rows (IsGatherOpType, IsSparseApplyOpType, Scatter* and
  // ResourceScatter* updates): a table looked up by rows, whose ops are not a dense kernel's of
  // the same bytes.
  bool sparse = false;
};

struct TaskStats {
  uint32_t task = 0;  // index into Capture::tasks
  std::string label;  // "ps:0"
  JobKind kind = JobKind::kOther;
  int devices = 0;  // devices as XProf counts them: a GPU once, not per stream (DeviceRow::sub)
  // The task's devices (indexes into Capture::devices), in device order: analyzers walk a task's
  // ops through them (ForEachOpOfTask) instead of scanning every device per task, which was
  // quadratic in the number of tasks (issue 15).
  std::vector<uint32_t> device_ids;
  int64_t ops = 0;
  // A PS's receives (IsRecvOpType) are left out of busy_ns, op_time_ns, variable shares: waits on
  // its NIC; not where its ops overlap them under half as often as chance (they held its threads).
  TimeNs busy_ns = 0;                // union of op intervals over all the task's devices and lanes
  TimeNs op_time_ns = 0;             // sum of op durations (>= busy_ns when lanes overlap)
  TimeNs first_ns = 0, last_ns = 0;  // first op start, last op end
  double busy_pct = 0;  // busy_ns / the time of the captures the task has ops in, in percent
  // PS only: the union of its receives (some gradient arriving over its link), and / the time of
  // the captures it has ops in (percent); 0 where they count as its work (above).
  TimeNs recv_busy_ns = 0;
  double recv_busy_pct = 0;
  int64_t recv_count = 0;  // RecvTensor events (recorded on the receiving task)
  TimeNs recv_ns = 0;      // summed RecvTensor durations
  int64_t steps = 0;
  TimeNs step_mean_ns = 0, step_median_ns = 0;  // without warm-up steps (WarmupSteps)
  int64_t warmup_steps = 0;                     // first steps of a session left out
  TimeNs warmup_ns = 0;                         // the longest of them
  std::vector<OpTypeTime> by_type;              // sorted by total_ns, descending
  // PS only:
  double ps_share = 0;                    // busy_ns / sum of busy_ns over all PS, in [0, 1]
  std::vector<VariableLoad> variables;    // sorted by total_ns, descending (every task if no PS)
  int64_t edges_out = 0, edges_in = 0;    // cross-task transfers served / received (count)
  int64_t tensors_out = 0;                // distinct tensors served
  int64_t bytes_out = -1, bytes_in = -1;  // when every transfer's size is known, else -1
  // bytes_out with a control-only op's unsized edge (an apply's or an accumulator's to the
  // train_op: IsControlOnlyOpType) counted as 0 bytes, as for VariableLoad::out_bytes, whose
  // shares of it hot-ps moves; -1 where another edge is unsized. The PS NIC demand of the
  // replay and the outlook reads bytes_out (PsNicBytes), and beside control edges only where
  // that is unknown (PsNicBytesBesideControl).
  int64_t bytes_out_beside_control = -1;
};

struct TaskStatsTable {
  std::vector<TaskStats> tasks;  // in Capture::tasks order (PS first)
  TimeNs span_ns = 0;            // time captured (Capture::CapturedNs: without gaps)
  TimeNs ps_busy_total_ns = 0;
  int num_ps = 0, num_workers = 0;  // workers include chief/master
  // The row for `label`, or nullptr.
  const TaskStats* Find(std::string_view label) const;
};

// Which steps of `task` are warm-up steps: the first step of a session (of the capture, or of
// each separate capture) when it is more than 3x the median of the task's other steps and at
// least 2 other steps exist (the first step of a Keras fit() traces the function, builds the
// graph and autotunes cuDNN kernels). They are left out of the step median and mean and of the
// median step the rules look at. Indexes into Capture::TaskSteps(task).
std::vector<bool> WarmupSteps(const Capture& c, uint32_t task);

// Length of the union of [start, end) intervals (ns); sorts `iv` in place.
TimeNs UnionLength(std::vector<std::pair<TimeNs, TimeNs>>* iv);
// The same for the ops of one device of `c` (in start order, as Capture keeps them), in one pass.
TimeNs UnionLengthOfDevice(const Capture& c, uint32_t device);

// The per-task table of `c`, tasks in capture order. `threads` > 1 computes tasks in parallel
// (OpenMP); the result is the same for any value.
TaskStatsTable ComputeTaskStats(const Capture& c, int threads = 1);

}  // namespace tfdiag
