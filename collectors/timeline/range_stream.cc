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

}  // namespace tfdiag
