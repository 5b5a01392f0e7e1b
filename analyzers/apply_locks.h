// Applies serialized by their variable's lock, read from a PS's ops (issue 44 item 2: the
// mechanisms PS jobs have). TF's apply kernels built with use_locking=True hold the variable's
// mutex while they run (tensorflow/core/kernels/training_ops.cc: MutexLock on the ref, or
// LockVariables for resource variables), and a blocked kernel keeps its inter-op thread. A
// timeline records an op from the moment a thread takes it (TF1 RunMetadata's all_start_micros),
// so an apply that waited for another apply of its variable shows the wait as op time.
//
// The capture shows the lock where the applies of one node (one variable, or one part of it)
// that overlap an earlier one end one alone-time after it: the median end-to-end spacing of
// those applies within kLockSpacingLo-kLockSpacingHi of the median duration of the applies that
// overlapped none, while they last at least kLockWaitLonger times it. Applies that run at once
// with no lock end near their own time whatever the others do (their spacing is shorter). Each
// such apply's wait is then the time from its start to the end of the apply before it.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <unordered_map>

#include "analyzers/analysis_input.h"
#include "core/capture.h"

namespace tfdiag {

// The spacing and wait bars (ratios to the median duration of the node's applies that
// overlapped no earlier one): set on gen3 report39 (spent), where every apply holds its
// variable's lock (spacing 0.97-1.21, durations 1.3-7x), against gen2 report40 and indep
// report44 (spent), whose applies run at once with no lock (spacing 0.2-0.85).
inline constexpr double kLockSpacingLo = 0.9, kLockSpacingHi = 1.25, kLockWaitLonger = 1.3;
// At least this many of a node's applies overlap an earlier one, and a fifth of them, with three
// that overlapped none: fewer tell nothing.
inline constexpr size_t kLockMinOverlaps = 5;

// One PS's applies that waited on their variable's lock.
struct ApplyLockWaits {
  // Per op (its row index in Capture::ops): the time it waited for its variable's lock before it
  // ran (ns, > 0), for every apply of a node that shows the lock and overlapped an earlier one.
  std::unordered_map<size_t, TimeNs> wait;
  TimeNs wait_ns = 0;    // the waits summed, ns
  TimeNs locked_ns = 0;  // the locked nodes' applies' time less their waits (their work), ns
  int nodes = 0;         // apply nodes that show the lock
};

// The lock waits of task `t`'s applies (IsDenseApplyOpType or IsSparseApplyOpType), each node
// name its group. Memory: one entry per apply op of the task.
ApplyLockWaits ReadApplyLockWaits(const Capture& c, const TaskStats& t);
// The wait `locks` holds for the op at row `row` (0 where none).
inline TimeNs LockWaitOf(const ApplyLockWaits& locks, size_t row) {
  const auto it = locks.wait.find(row);
  return it == locks.wait.end() ? 0 : it->second;
}

}  // namespace tfdiag
