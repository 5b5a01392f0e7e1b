// StringPool: interns strings into dense 32-bit ids (Perfetto/Tracy style), so rows stay compact.
//
// Id 0 is always the empty string. Views returned by Get() stay valid for the pool's lifetime
// (storage is chunked and never moves). Thread-safety: not thread-safe; one writer, then readers.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace tfdiag {

using StrId = uint32_t;  // index into a StringPool; 0 = ""

class StringPool {
 public:
  StringPool();
  // A moved-from pool is empty (only "").
  StringPool(StringPool&& o) noexcept;
  StringPool& operator=(StringPool&& o) noexcept;
  StringPool(const StringPool&) = delete;
  StringPool& operator=(const StringPool&) = delete;

  // Returns the id of `s`, adding it if new. Amortised O(len).
  StrId Intern(std::string_view s);
  // Returns the id of `s` if interned, else nullopt-like kNotFound.
  StrId Find(std::string_view s) const;
  // The string behind `id`; id must come from this pool.
  std::string_view Get(StrId id) const { return views_[id]; }
  // Forgets the strings with ids >= n (n >= 1) and frees their bytes; their ids may be handed out
  // again.
  void Truncate(size_t n);
  // Number of distinct strings, including "".
  size_t size() const { return views_.size(); }
  // Bytes of string storage held (whole chunks).
  size_t ArenaBytes() const;
  // Approximate heap bytes held (for memory reports).
  size_t MemoryBytes() const;

  static constexpr StrId kNotFound = UINT32_MAX;

 private:
  // A direct-mapped cache in front of index_, by a cheap hash of the length and the first and last
  // bytes; a hit is confirmed by comparing the bytes. Most strings interned repeat (a node's name
  // every step), and this spares hashing each of them whole. 0 = empty slot ("" is not cached).
  static constexpr size_t kRecent = 1024;
  static size_t RecentSlot(std::string_view s);
  StrId InternSlow(std::string_view s);
  std::vector<StrId> recent_ = std::vector<StrId>(kRecent, 0);

  std::vector<std::unique_ptr<char[]>> chunks_;
  std::vector<size_t> chunk_sizes_;  // bytes of each chunk
  size_t chunk_used_ = 0;
  size_t chunk_size_ = 0;
  std::vector<std::string_view> views_;
  absl::flat_hash_map<std::string_view, StrId> index_;  // open addressing: one probe per hit
};

}  // namespace tfdiag
