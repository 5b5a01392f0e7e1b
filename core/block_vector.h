// BlockVector: an append-only sequence stored in fixed-size blocks, so that growing it never
// copies what it holds (no 2x peak as with std::vector doubling) and draining it into a
// contiguous vector frees each block as soon as it is copied (peak: the result plus one block).
// Thread-safety: not thread-safe.
#pragma once

#include <sys/mman.h>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <new>
#include <vector>

#include "core/populate.h"

namespace tfdiag {

namespace block_vector_internal {

// Blocks are mapped whole with MAP_POPULATE: the kernel fills every page in one call instead of
// one page fault per 4 KiB as the rows are written (on this project's 2-core VM, a page fault
// costs several microseconds through the hypervisor: about 14% of the import's CPU time went to
// faults, most of them on fresh row blocks). Every block is written in full anyway, except the
// last one of a vector. munmap returns a block's pages to the kernel when it is released.
template <typename T>
struct Unmap {
  size_t bytes = 0;
  void operator()(T* p) const { ::munmap(p, bytes); }
};

// `populate`: fill the pages now (blocks about to be written in full); else on first touch.
template <typename T>
std::unique_ptr<T[], Unmap<T>> MapBlock(size_t n, bool populate) {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>,
                "blocks hold plain rows");
  const size_t bytes = n * sizeof(T);
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | (populate ? MAP_POPULATE : 0), -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  return std::unique_ptr<T[], Unmap<T>>(static_cast<T*>(p), Unmap<T>{bytes});
}

}  // namespace block_vector_internal

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
      // The first block fills on first touch (many vectors stay small: per-chunk builders);
      // later ones are populated whole.
      blocks_.push_back(block_vector_internal::MapBlock<T>(kBlock, !blocks_.empty()));
    }
    blocks_[size_ >> kBlockBits][size_ & (kBlock - 1)] = v;
    ++size_;
  }
  size_t size() const { return size_; }
  // Prefaults elements [begin, end) (< size()) for writing, block by block (core/populate.h):
  // for a copy into blocks made by GrowTo, just before it writes them.
  void PopulateRange(size_t begin, size_t end) {
    while (begin < end) {
      const size_t stop = std::min(end, (begin / kBlock + 1) * kBlock);
      T* at = &(*this)[begin];
      PopulateForWrite(at, at + (stop - begin));
      begin = stop;
    }
  }
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
    // Not populated: GrowTo is the destination of a copy whose sources are freed as it proceeds.
    while (blocks_.size() * kBlock < n) {
      blocks_.push_back(block_vector_internal::MapBlock<T>(kBlock, false));
    }
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
      T* at = out->data() + out->size();  // reserved: no reallocation below
      PopulateForWrite(at, at + n);
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
  std::vector<std::unique_ptr<T[], block_vector_internal::Unmap<T>>> blocks_;
  size_t size_ = 0;
};

}  // namespace tfdiag
