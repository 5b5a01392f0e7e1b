#include "collectors/timeline/input_stream.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "core/input_limits.h"

namespace tfdiag {

namespace {
constexpr size_t kChunk = 1 << 20;
// Open() reads this much first: enough to tell gzip from plain, while a plain file is then mostly
// mapped and read in place (timeline_reader.cc), so a full kChunk read there would be wasted: with
// 32 per-worker files of 6 MB, 32 MiB copied by read(2) for nothing (issue 19).
constexpr size_t kHead = 64 << 10;
}  // namespace

InputStream::~InputStream() {
  StopReadAhead();
  if (z_init_) inflateEnd(&z_);
  if (file_ != nullptr) std::fclose(file_);
}

Status InputStream::Open(const std::string& path) {
  path_ = path;
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return IoError("{}: cannot open: {}", path, std::strerror(errno));
  }
  if (S_ISDIR(st.st_mode)) return IoError("{}: is a directory, expected a trace file", path);
  file_ = std::fopen(path.c_str(), "rb");
  if (file_ == nullptr) return IoError("{}: cannot open: {}", path, std::strerror(errno));
  file_size_ = static_cast<int64_t>(st.st_size);
  if (!ReadRaw(kHead)) return status_;
  gzip_ = raw_.size() >= 2 && static_cast<unsigned char>(raw_[0]) == 0x1f &&
          static_cast<unsigned char>(raw_[1]) == 0x8b;
  if (gzip_) {
    if (inflateInit2(&z_, 15 + 32) != Z_OK) return Internal("{}: inflateInit2 failed", path);
    z_init_ = true;
    z_.next_in = reinterpret_cast<Bytef*>(raw_.data());
    z_.avail_in = static_cast<uInt>(raw_.size());
    out_.resize(kChunk);
    begin_ = cur_ = end_ = out_.data();
  } else {
    begin_ = cur_ = raw_.data();
    end_ = raw_.data() + raw_.size();
  }
  return OkStatus();
}

size_t InputStream::ReadFile(char* dst, size_t cap) {
  size_t n = std::fread(dst, 1, cap, file_);
  if (n < cap) {
    if (std::ferror(file_)) {
      status_ = IoError("{}: read error at byte {}: {}", path_, raw_read_ + static_cast<int64_t>(n),
                        std::strerror(errno));
      return 0;
    }
    raw_eof_ = true;
  }
  raw_read_ += static_cast<int64_t>(n);
  if (progress_) progress_(raw_read_, file_size_);
  return n;
}

bool InputStream::ReadRaw(size_t cap) {
  raw_.resize(cap);  // not zeroed (DefaultInitAllocator)
  raw_.resize(ReadFile(raw_.data(), cap));
  return status_.ok();
}

size_t InputStream::Read(char* dst, size_t cap) {
  if (cur_ == end_) {
    if (read_ahead_ || !status_.ok()) {
      if (!Refill()) return 0;
    } else if (!gzip_) {
      if (raw_eof_) return 0;
      const size_t n = ReadFile(dst, cap);
      consumed_ += static_cast<int64_t>(n);
      return n;
    } else {
      size_t n = Inflate(dst, cap);
      consumed_ += static_cast<int64_t>(n);
      return n;
    }
  }
  size_t n = std::min(cap, static_cast<size_t>(end_ - cur_));
  std::memcpy(dst, cur_, n);
  cur_ += n;
  return n;
}

Status InputStream::status() {
  // A read or inflate error shows once the parser has consumed every byte before it: a fault in
  // those bytes (a syntax error in data that inflated to garbage before the CRC check failed) is
  // the file's first, whatever the thread count and however far the read-ahead thread has got.
  if (cur_ != end_) return OkStatus();
  if (!read_ahead_) return status_;
  std::lock_guard<std::mutex> lock(mu_);
  return ra_done_ && ra_full_.empty() ? ra_status_ : OkStatus();
}

bool InputStream::Refill() {
  if (read_ahead_) {
    consumed_ += end_ - begin_;
    return RefillAhead();
  }
  if (!status_.ok()) return false;
  consumed_ += end_ - begin_;
  if (!gzip_) {
    if (raw_eof_) {
      begin_ = cur_ = end_;
      return false;
    }
    if (!ReadRaw()) return false;
    begin_ = cur_ = raw_.data();
    end_ = raw_.data() + raw_.size();
    return cur_ != end_;
  }
  size_t n = Inflate(out_.data(), out_.size());
  begin_ = cur_ = out_.data();
  end_ = out_.data() + n;
  return n > 0;
}

size_t InputStream::Inflate(char* out, size_t cap) {
  size_t produced = 0;
  while (produced < cap && status_.ok()) {
    if (inflate_done_) {
      // Another gzip member may follow (concatenated .gz files).
      if (z_.avail_in == 0 && raw_eof_) break;
      if (z_.avail_in == 0) {
        if (!ReadRaw()) break;
        z_.next_in = reinterpret_cast<Bytef*>(raw_.data());
        z_.avail_in = static_cast<uInt>(raw_.size());
        continue;
      }
      inflateReset(&z_);
      inflate_done_ = false;
    }
    if (z_.avail_in == 0 && !raw_eof_) {
      if (!ReadRaw()) break;
      z_.next_in = reinterpret_cast<Bytef*>(raw_.data());
      z_.avail_in = static_cast<uInt>(raw_.size());
    }
    z_.next_out = reinterpret_cast<Bytef*>(out + produced);
    z_.avail_out = static_cast<uInt>(cap - produced);
    int rc = inflate(&z_, Z_NO_FLUSH);
    produced = cap - z_.avail_out;
    int64_t at = raw_read_ - static_cast<int64_t>(z_.avail_in);
    if (rc == Z_STREAM_END) {
      inflate_done_ = true;
    } else if (rc == Z_BUF_ERROR && z_.avail_in == 0 && raw_eof_) {
      status_ = InvalidInput(
          "{}: compressed byte {}: gzip data is truncated (expected more "
          "deflate data or the gzip trailer)",
          path_, at);
    } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
      status_ = InvalidInput("{}: compressed byte {}: gzip data does not inflate: {}", path_, at,
                             z_.msg != nullptr ? z_.msg : zError(rc));
    }
    const int64_t total = inflated_ + static_cast<int64_t>(produced);
    if (status_.ok() && InflateRatioExceeded(total, at)) {
      status_ = InvalidInput(
          "{}: compressed byte {}: gzip data inflates to {} bytes from {} compressed, more than "
          "{} times; a trace does not compress this well (a decompression bomb?)",
          path_, at, total, at, kMaxInflateRatio);
    }
  }
  inflated_ += static_cast<int64_t>(produced);
  return produced;
}

void InputStream::StartReadAhead() {
  if (!gzip_ || read_ahead_ || !status_.ok()) return;
  // Bytes already inflated into out_ stay first in line.
  consumed_ += cur_ - begin_;
  if (cur_ != end_) ra_full_.emplace_back(cur_, end_);
  begin_ = cur_ = end_ = nullptr;
  for (int i = 0; i < kReadAheadSlots; ++i) ra_free_.emplace_back(kChunk);
  read_ahead_ = true;
  ra_thread_ = std::thread([this] { ReadAheadLoop(); });
}

void InputStream::ReadAheadLoop() {
  while (true) {
    std::vector<char> buf;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return !ra_free_.empty() || ra_stop_; });
      if (ra_stop_) return;
      buf = std::move(ra_free_.back());
      ra_free_.pop_back();
    }
    buf.resize(kChunk);
    size_t n = Inflate(buf.data(), buf.size());
    buf.resize(n);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (n > 0) ra_full_.push_back(std::move(buf));
      if (n == 0) {
        ra_status_ = status_;
        ra_done_ = true;
      }
    }
    cv_.notify_all();
    if (n == 0) return;
  }
}

bool InputStream::RefillAhead() {
  std::unique_lock<std::mutex> lock(mu_);
  if (ra_current_.capacity() > 0) {
    ra_free_.push_back(std::move(ra_current_));
    ra_current_ = {};
    cv_.notify_all();
  }
  cv_.wait(lock, [this] { return !ra_full_.empty() || ra_done_; });
  if (ra_full_.empty()) {
    begin_ = cur_ = end_ = nullptr;
    return false;  // the end, or an error in status_ (written before ra_done_)
  }
  ra_current_ = std::move(ra_full_.front());
  ra_full_.erase(ra_full_.begin());
  begin_ = cur_ = ra_current_.data();
  end_ = ra_current_.data() + ra_current_.size();
  return true;
}

void InputStream::StopReadAhead() {
  if (!ra_thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ra_stop_ = true;
  }
  cv_.notify_all();
  ra_thread_.join();
}

}  // namespace tfdiag
