// DeviceCursor: one device's ops in Capture order (start, then the enclosing op first), read a
// block at a time where they are (plain or packed, core/op_store.h) instead of copied out. The
// step graph (analyzers/step_graph.cc: a task's devices merged in time order per step) and the
// replay (analyzers/replay.cc: the PS concurrency sweep) both walk devices with it.
// Memory: one block of rows per cursor (kPackBlock OpRows: 3 KiB).
// Thread-safety: a cursor is one reader's; many cursors may read one OpStore at once.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>

#include "core/op_store.h"

namespace tfdiag {

class DeviceCursor {
 public:
  // A cursor at the first of the rows [range.first, range.second) of `ops` (Capture::device_ops
  // of one device); `ops` must outlive it.
  DeviceCursor(const OpStore& ops, std::pair<uint32_t, uint32_t> range)
      : ops_(&ops), next_(range.first), end_(range.second) {}

  // The row at the cursor and its index into Capture::ops; false at the range's end. The pointer
  // is valid until the next Peek after a Pop (a new block is then decoded over it).
  bool Peek(const OpRow** row, uint32_t* idx) {
    if (at_ == n_) {
      if (next_ >= end_) return false;
      n_ = 0;
      at_ = 0;
      ops_->ForEach(next_, std::min<size_t>(end_, next_ + kPackBlock),
                    [&](const OpRow& op) { buf_[n_++] = op; });
      next_ += n_;
    }
    *row = &buf_[at_];
    *idx = static_cast<uint32_t>(next_ - n_ + at_);
    return true;
  }
  // The row at the cursor, or nullptr at the range's end (Peek without the index).
  const OpRow* Peek() {
    const OpRow* row;
    uint32_t idx;
    return Peek(&row, &idx) ? row : nullptr;
  }
  // Moves past the row Peek gave (call only after a Peek that returned true).
  void Pop() { ++at_; }
  // Index into Capture::ops of the row at the cursor (the range's end when past it).
  uint32_t Index() const { return static_cast<uint32_t>(next_ - n_ + at_); }
  // Moves the cursor to row `idx` (within the range given at construction).
  void Seek(uint32_t idx) {
    next_ = idx;
    at_ = n_ = 0;
  }

 private:
  const OpStore* ops_;
  size_t next_, end_;  // next row to decode, the range's end (into Capture::ops)
  OpRow buf_[kPackBlock];
  uint32_t at_ = 0, n_ = 0;  // buf_[at_, n_) not yet popped
};

}  // namespace tfdiag
