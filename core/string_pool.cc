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
  for (size_t id = n; id < views_.size(); ++id) index_.erase(views_[id]);
  if (n < views_.size()) views_.resize(n);
}

StrId StringPool::Find(std::string_view s) const {
  auto it = index_.find(s);
  return it == index_.end() ? kNotFound : it->second;
}

size_t StringPool::MemoryBytes() const {
  return chunks_.size() * kChunkBytes + views_.capacity() * sizeof(std::string_view) +
         index_.size() * (sizeof(std::string_view) + sizeof(StrId) + 16);
}

}  // namespace tfdiag
