#include "core/string_pool.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace tfdiag {

namespace {
constexpr size_t kChunkBytes = 1 << 20;
}

StringPool::StringPool() {
  views_.emplace_back();
  index_.emplace(std::string_view(), 0);
}

StringPool::StringPool(StringPool&& o) noexcept : StringPool() { *this = std::move(o); }

StringPool& StringPool::operator=(StringPool&& o) noexcept {
  if (this == &o) return *this;
  chunks_ = std::move(o.chunks_);
  chunk_sizes_ = std::move(o.chunk_sizes_);
  chunk_used_ = o.chunk_used_;
  chunk_size_ = o.chunk_size_;
  views_ = std::move(o.views_);
  index_ = std::move(o.index_);
  recent_.swap(o.recent_);
  // The moved-from pool: empty (only ""), its cache pointing nowhere.
  o.chunks_.clear();
  o.chunk_sizes_.clear();
  o.chunk_used_ = o.chunk_size_ = 0;
  o.views_.assign(1, std::string_view());
  o.index_.clear();
  o.index_.emplace(std::string_view(), 0);
  o.recent_.assign(kRecent, 0);
  return *this;
}

namespace {

uint64_t Load64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
uint32_t Load32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// The first and last bytes of s (up to 8 each, overlapping for short strings), as two words.
std::pair<uint64_t, uint64_t> Ends(std::string_view s) {
  const char* p = s.data();
  const size_t n = s.size();
  if (n >= 8) return {Load64(p), Load64(p + n - 8)};
  if (n >= 4) return {Load32(p), Load32(p + n - 4)};
  const auto b = [&](size_t i) { return static_cast<uint64_t>(static_cast<unsigned char>(p[i])); };
  return {b(0) | b(n / 2) << 8, b(n - 1)};  // n in 1..3
}

// s == t, for strings of equal size n >= 1: the ends compared as words, the middle in 8-byte steps.
bool SameBytes(std::string_view s, std::string_view t) {
  const size_t n = s.size();
  if (Ends(s) != Ends(t)) return false;
  if (n <= 16) return true;  // the ends cover every byte
  for (size_t i = 8; i + 8 < n; i += 8) {
    if (Load64(s.data() + i) != Load64(t.data() + i)) return false;
  }
  return true;
}

}  // namespace

size_t StringPool::RecentSlot(std::string_view s) {
  const auto [a, b] = Ends(s);
  const uint64_t h = (a * 0x9E3779B97F4A7C15ull) ^ (b * 0xC2B2AE3D27D4EB4Full) ^
                     (s.size() * 0x165667B19E3779F9ull);
  return static_cast<size_t>(h >> 54) & (kRecent - 1);
}

StrId StringPool::Intern(std::string_view s) {
  if (s.empty()) return 0;
  const size_t slot = RecentSlot(s);
  const StrId cached = recent_[slot];
  if (cached != 0 && views_[cached].size() == s.size() && SameBytes(views_[cached], s)) {
    return cached;
  }
  const StrId id = InternSlow(s);
  recent_[slot] = id;
  return id;
}

StrId StringPool::InternSlow(std::string_view s) {
  auto it = index_.find(s);
  if (it != index_.end()) return it->second;
  if (chunks_.empty() || chunk_used_ + s.size() > chunk_size_) {
    chunk_size_ = s.size() > kChunkBytes ? s.size() : kChunkBytes;
    chunks_.emplace_back(new char[chunk_size_]);
    chunk_sizes_.push_back(chunk_size_);
    chunk_used_ = 0;
  }
  char* dst = chunks_.back().get() + chunk_used_;
  if (!s.empty()) std::memcpy(dst, s.data(), s.size());
  chunk_used_ += s.size();
  std::string_view stored(dst, s.size());
  StrId id = static_cast<StrId>(views_.size());
  views_.push_back(stored);
  index_.emplace(stored, id);
  return id;
}

void StringPool::Truncate(size_t n) {
  if (n < 1) n = 1;
  if (n >= views_.size()) return;
  std::fill(recent_.begin(), recent_.end(), 0);
  for (size_t id = n; id < views_.size(); ++id) index_.erase(views_[id]);
  // Strings are stored one after another: the arena goes back to just after string n - 1 (id 0,
  // "", holds no bytes).
  size_t keep = 0;
  const char* end = nullptr;
  if (n > 1) {
    end = views_[n - 1].data() + views_[n - 1].size();
    keep = chunks_.size();
    while (keep > 0 && !(end >= chunks_[keep - 1].get() &&
                         end <= chunks_[keep - 1].get() + chunk_sizes_[keep - 1])) {
      --keep;
    }
  }
  chunks_.resize(keep);
  chunk_sizes_.resize(keep);
  chunk_size_ = keep > 0 ? chunk_sizes_[keep - 1] : 0;
  chunk_used_ = keep > 0 ? static_cast<size_t>(end - chunks_[keep - 1].get()) : 0;
  views_.resize(n);
}

StrId StringPool::Find(std::string_view s) const {
  auto it = index_.find(s);
  return it == index_.end() ? kNotFound : it->second;
}

size_t StringPool::ArenaBytes() const {
  size_t n = 0;
  for (size_t b : chunk_sizes_) n += b;
  return n;
}

size_t StringPool::MemoryBytes() const {
  return ArenaBytes() + views_.capacity() * sizeof(std::string_view) +
         index_.size() * (sizeof(std::string_view) + sizeof(StrId) + 16);
}

}  // namespace tfdiag
