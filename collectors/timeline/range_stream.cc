#include "collectors/timeline/range_stream.h"

#include <unistd.h>

#include <algorithm>

namespace tfdiag {

namespace {
constexpr int64_t kBuffer = 256 << 10;
}  // namespace

RangeStream::RangeStream(int fd, int64_t begin, int64_t end, std::string head, std::string tail,
                         std::atomic<int64_t>* progress)
    : fd_(fd),
      pos_(begin),
      stop_(end),
      head_(std::move(head)),
      tail_(std::move(tail)),
      progress_(progress) {}

bool RangeStream::Refill() {
  consumed_ += end_ - begin_;
  while (phase_ < 3) {
    if (phase_ == 0) {
      phase_ = 1;
      if (head_.empty()) continue;
      begin_ = cur_ = head_.data();
      end_ = begin_ + head_.size();
      return true;
    }
    if (phase_ == 1) {
      if (pos_ >= stop_) {
        phase_ = 2;
        continue;
      }
      buf_.resize(kBuffer);
      size_t want = static_cast<size_t>(std::min<int64_t>(stop_ - pos_, kBuffer));
      ssize_t n = ::pread(fd_, buf_.data(), want, pos_);
      if (n <= 0) {
        ok_ = false;
        phase_ = 3;
        break;
      }
      pos_ += n;
      if (progress_ != nullptr) progress_->fetch_add(n, std::memory_order_relaxed);
      begin_ = cur_ = buf_.data();
      end_ = begin_ + n;
      return true;
    }
    phase_ = 3;
    if (tail_.empty()) break;
    begin_ = cur_ = tail_.data();
    end_ = begin_ + tail_.size();
    return true;
  }
  begin_ = cur_ = end_;
  return false;
}

size_t RangeStream::Read(char* dst, size_t cap) {
  size_t done = 0;
  while (done < cap && phase_ < 3 && ok_) {
    if (phase_ == 0 || phase_ == 2) {
      const std::string& s = phase_ == 0 ? head_ : tail_;
      size_t n = std::min(cap - done, s.size() - static_cast<size_t>(text_pos_));
      std::copy_n(s.data() + text_pos_, n, dst + done);
      done += n;
      text_pos_ += static_cast<int64_t>(n);
      if (text_pos_ == static_cast<int64_t>(s.size())) ++phase_, text_pos_ = 0;
      continue;
    }
    if (pos_ >= stop_) {
      phase_ = 2;
      continue;
    }
    size_t want = static_cast<size_t>(std::min<int64_t>(stop_ - pos_, cap - done));
    ssize_t n = ::pread(fd_, dst + done, want, pos_);
    if (n <= 0) {
      ok_ = false;
      break;
    }
    pos_ += n;
    done += static_cast<size_t>(n);
    if (progress_ != nullptr) progress_->fetch_add(n, std::memory_order_relaxed);
  }
  return ok_ ? done : 0;
}

}  // namespace tfdiag
