// BlockVector: an append-only sequence stored in fixed-size blocks, so that growing it never
// copies what it holds (no 2x peak as with std::vector doubling) and draining it into a
// contiguous vector frees each block as soon as it is copied (peak: the result plus one block).
// Thread-safety: not thread-safe.
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <vector>

namespace tfdiag {

template <typename T, size_t kBlockBits = 14>
class BlockVector {
 public:
  static constexpr size_t kBlock = size_t{1} << kBlockBits;

  BlockVector() = default;
  // A moved-from BlockVector is empty (size 0), not a size without blocks.
  BlockVector(BlockVector&& o) noexcept : blocks_(std::move(o.blocks_)), size_(o.size_) {
    o.blocks_.clear();
    o.size_ = 0;
  }
  BlockVector& operator=(BlockVector&& o) noexcept {
    blocks_ = std::move(o.blocks_);
    size_ = o.size_;
    o.blocks_.clear();
    o.size_ = 0;
    return *this;
  }

  void push_back(const T& v) {
    if ((size_ & (kBlock - 1)) == 0 && size_ / kBlock == blocks_.size()) {
      blocks_.emplace_back(new T[kBlock]);
    }
    blocks_[size_ >> kBlockBits][size_ & (kBlock - 1)] = v;
    ++size_;
  }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](size_t i) { return blocks_[i >> kBlockBits][i & (kBlock - 1)]; }
  const T& operator[](size_t i) const { return blocks_[i >> kBlockBits][i & (kBlock - 1)]; }
  // Drops the elements from `n` on (n <= size()); frees blocks no longer needed.
  void truncate(size_t n) {
    size_ = n;
    blocks_.resize((n + kBlock - 1) / kBlock);
  }
  // Grows to `n` elements (n >= size()); the new ones are left unset, to be assigned through
  // operator[] (different elements from different threads).
  void GrowTo(size_t n) {
    while (blocks_.size() * kBlock < n) blocks_.emplace_back(new T[kBlock]);
    size_ = n;
  }
  // Empties the vector but keeps its blocks for the elements pushed next (no new allocation and
  // no fresh pages when it is filled again).
  void Reset() { size_ = 0; }
  // Appends every element to `out` in order, freeing blocks as they are copied; leaves this empty.
  void DrainInto(std::vector<T>* out) {
    out->reserve(out->size() + size_);
    for (size_t b = 0; b < block_count(); ++b) {
      size_t n = std::min(kBlock, size_ - b * kBlock);
      out->insert(out->end(), blocks_[b].get(), blocks_[b].get() + n);
      blocks_[b].reset();
    }
    blocks_.clear();
    size_ = 0;
  }
  size_t MemoryBytes() const { return blocks_.size() * kBlock * sizeof(T); }

  // Block-wise access, for draining from several threads: block b holds elements
  // [b * kBlock, min(size(), (b + 1) * kBlock)). ReleaseBlock(b) frees one block (its elements may
  // not be read again; different blocks may be released from different threads); Clear() then
  // empties the vector.
  size_t block_count() const { return (size_ + kBlock - 1) / kBlock; }
  const T* block(size_t b) const { return blocks_[b].get(); }
  size_t block_size(size_t b) const { return std::min(kBlock, size_ - b * kBlock); }
  void ReleaseBlock(size_t b) { blocks_[b].reset(); }
  void Clear() {
    blocks_.clear();
    size_ = 0;
  }

 private:
  std::vector<std::unique_ptr<T[]>> blocks_;
  size_t size_ = 0;
};

}  // namespace tfdiag
