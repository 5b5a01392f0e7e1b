#include "core/string_pool.h"

#include <cstring>

namespace tfdiag {

namespace {
constexpr size_t kChunkBytes = 1 << 20;
}

StringPool::StringPool() {
  views_.emplace_back();
  index_.emplace(std::string_view(), 0);
}

StrId StringPool::Intern(std::string_view s) {
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
