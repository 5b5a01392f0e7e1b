// OpStore: Capture::ops, the executed ops sorted by (device, start), held one of two ways:
//   - plain: a vector of 24-byte OpRows (timelines: read fastest, indexed directly);
//   - packed: per device, blocks of kPackBlock ops with varint deltas (about 5-7 bytes per op on
//     profiler output), so that a capture of tens of millions of ops (a 1 GB XSpace) costs a
//     fraction of its file (issue 17). Readers that stream large profiles pack what they have
//     read after each part of the file (CaptureBuilder::PackOps), so the plain rows of only one
//     part are held at a time.
// Both give the same rows in the same order. Sequential reads (ForEach) decode a block at a
// time; operator[] on a packed store decodes up to kPackBlock - 1 rows before the one asked for.
// Thread-safety: immutable after CaptureBuilder::Finish(); const methods are safe for concurrent
// callers (no caches).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/default_init_allocator.h"
#include "core/op_row.h"

namespace tfdiag {

// Ops per packed block (one 16-byte BlockHead each: 0.125 bytes per op; 64 took 0.25, 6 MB more
// on a 1.2 GB XSpace of 47.7 M ops).
constexpr uint32_t kPackBlock = 128;

// One device's ops in packed form, sorted by (start, longer first, node, lane). Each block of
// kPackBlock ops starts at a byte offset and an absolute start (ns); per op: the start's delta
// from the previous op's end (zigzag-signed: ops nest and overlap; absent for a block's first
// op), the duration, node * 2 + (lane differs from the previous op's; the first op of a block
// compares with lane 0), then the lane if it differs; every value an unsigned LEB128 varint, starts
// and durations divided by the block's scale (1000 when all of the block's are whole microseconds,
// as in TF1 timelines; else 1).
struct PackedOps {
  struct BlockHead {
    TimeNs start = 0;  // ns, the block's first op
    // Bits 0-62: the block's offset into bytes; bit 63: its scale is 1000 ns (else 1 ns).
    uint64_t where = 0;
    uint64_t offset() const { return where & ~kMicros; }
    TimeNs scale() const { return where & kMicros ? 1000 : 1; }
    static constexpr uint64_t kMicros = uint64_t{1} << 63;
  };
  std::vector<uint8_t> bytes;
  std::vector<BlockHead> blocks;
  uint32_t count = 0;         // ops
  bool nodes_mapped = false;  // node ids are Capture::nodes ids already (OpStore's map skipped)

  // Appends `n` rows (sorted as above; their `device` is ignored). Rows are appended whole
  // blocks at a time: call once per device with all of its rows, or with multiples of kPackBlock.
  void Append(const OpRow* rows, size_t n);
  // Decodes rows [first, first + n) (< count) into `out`, each with device `device` and node
  // mapped through `node_map` (identity when empty).
  void Decode(uint32_t first, uint32_t n, uint16_t device, const std::vector<uint32_t>& node_map,
              OpRow* out) const;
  // Bytes held, counting reserved capacity (a merged device's reserved tail is address space
  // until written).
  size_t MemoryBytes() const {
    return bytes.capacity() + blocks.capacity() * sizeof(BlockHead) + sizeof(*this);
  }
};

class OpStore {
 public:
  using Plain = std::vector<OpRow, DefaultInitAllocator<OpRow>>;

  size_t size() const { return packed_ ? packed_size_ : plain_.size(); }
  bool empty() const { return size() == 0; }
  bool packed() const { return packed_; }

  // Row i (< size()), by value.
  OpRow operator[](size_t i) const {
    if (!packed_) return plain_[i];
    return PackedAt(i);
  }

  // Calls fn(const OpRow&) or fn(const OpRow&, uint32_t index) for rows [begin, end) in order
  // (end <= size()); a fn that returns bool stops the walk by returning false. The row reference
  // is valid during the call only.
  template <typename Fn>
  void ForEach(size_t begin, size_t end, Fn&& fn) const {
    if (!packed_) {
      for (size_t i = begin; i < end; ++i) {
        if (!Call(fn, plain_[i], i)) return;
      }
      return;
    }
    OpRow buf[kPackBlock];
    while (begin < end) {
      const size_t n = DecodeSome(begin, end, buf);
      for (size_t k = 0; k < n; ++k) {
        if (!Call(fn, buf[k], begin + k)) return;
      }
      begin += n;
    }
  }
  template <typename Fn>
  void ForEach(Fn&& fn) const {
    ForEach(0, size(), std::forward<Fn>(fn));
  }

  // Every row, in order, as a plain vector (a copy: for small captures and tests).
  std::vector<OpRow> Rows() const {
    std::vector<OpRow> out;
    out.reserve(size());
    ForEach([&](const OpRow& op) { out.push_back(op); });
    return out;
  }

  // The plain rows, for CaptureBuilder and for code that needs pointers to rows (the viewer):
  // call Unpack() first on a store that may be packed.
  const Plain& plain() const { return plain_; }
  Plain& mutable_plain() { return plain_; }
  // Turns a packed store into a plain one (the same rows); no-op when plain.
  void Unpack();
  // Makes the store packed: `devices[d]` holds device d's rows (device ids in Capture order),
  // `node_map` maps the packed node ids to Capture::nodes (empty: identity). Drops plain rows.
  void SetPacked(std::vector<PackedOps> devices, std::vector<uint32_t> node_map);
  // Heap bytes held by the rows.
  size_t MemoryBytes() const;

 private:
  template <typename Fn>
  static bool Call(Fn& fn, const OpRow& op, size_t i) {
    if constexpr (std::is_invocable_v<Fn&, const OpRow&, uint32_t>) {
      using R = std::invoke_result_t<Fn&, const OpRow&, uint32_t>;
      if constexpr (std::is_same_v<R, bool>) {
        return fn(op, static_cast<uint32_t>(i));
      } else {
        fn(op, static_cast<uint32_t>(i));
        return true;
      }
    } else {
      using R = std::invoke_result_t<Fn&, const OpRow&>;
      if constexpr (std::is_same_v<R, bool>) {
        return fn(op);
      } else {
        fn(op);
        return true;
      }
    }
  }
  OpRow PackedAt(size_t i) const;
  // Decodes rows from `begin` up to the end of its block, its device or `end`, into `out`;
  // returns how many.
  size_t DecodeSome(size_t begin, size_t end, OpRow* out) const;
  // The device whose rows hold global index i (packed).
  uint32_t DeviceOf(size_t i) const;

  Plain plain_;
  bool packed_ = false;
  size_t packed_size_ = 0;
  std::vector<PackedOps> devices_;
  std::vector<size_t> device_begin_;  // global index of each device's first row; size + 1
  std::vector<uint32_t> node_map_;
};

}  // namespace tfdiag
