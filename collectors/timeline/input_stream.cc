#include "collectors/timeline/input_stream.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

namespace tfdiag {

namespace {
constexpr size_t kChunk = 1 << 20;
}

InputStream::~InputStream() {
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
  raw_.resize(kChunk);
  if (!ReadRaw()) return status_;
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

bool InputStream::ReadRaw() {
  raw_.resize(kChunk);
  size_t n = std::fread(raw_.data(), 1, kChunk, file_);
  if (n < kChunk) {
    if (std::ferror(file_)) {
      status_ = IoError("{}: read error at byte {}: {}", path_, raw_read_ + static_cast<int64_t>(n),
                        std::strerror(errno));
      raw_.clear();
      return false;
    }
    raw_eof_ = true;
  }
  raw_.resize(n);
  raw_read_ += static_cast<int64_t>(n);
  if (progress_) progress_(raw_read_, file_size_);
  return true;
}

bool InputStream::Refill() {
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
  // gzip: inflate until some output or the end.
  while (true) {
    if (inflate_done_) {
      // Another gzip member may follow (concatenated .gz files).
      if (z_.avail_in == 0 && raw_eof_) {
        begin_ = cur_ = end_ = out_.data();
        return false;
      }
      if (z_.avail_in == 0) {
        if (!ReadRaw()) return false;
        z_.next_in = reinterpret_cast<Bytef*>(raw_.data());
        z_.avail_in = static_cast<uInt>(raw_.size());
        continue;
      }
      inflateReset(&z_);
      inflate_done_ = false;
    }
    if (z_.avail_in == 0 && !raw_eof_) {
      if (!ReadRaw()) return false;
      z_.next_in = reinterpret_cast<Bytef*>(raw_.data());
      z_.avail_in = static_cast<uInt>(raw_.size());
    }
    z_.next_out = reinterpret_cast<Bytef*>(out_.data());
    z_.avail_out = static_cast<uInt>(out_.size());
    int rc = inflate(&z_, Z_NO_FLUSH);
    size_t produced = out_.size() - z_.avail_out;
    int64_t at = raw_read_ - static_cast<int64_t>(z_.avail_in);
    if (rc == Z_STREAM_END) {
      inflate_done_ = true;
    } else if (rc == Z_BUF_ERROR && z_.avail_in == 0 && raw_eof_) {
      status_ = InvalidInput(
          "{}: compressed byte {}: gzip data is truncated (expected more "
          "deflate data or the gzip trailer)",
          path_, at);
      return false;
    } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
      status_ = InvalidInput("{}: compressed byte {}: gzip data does not inflate: {}", path_, at,
                             z_.msg != nullptr ? z_.msg : zError(rc));
      return false;
    }
    if (produced > 0) {
      begin_ = cur_ = out_.data();
      end_ = out_.data() + produced;
      return true;
    }
  }
}

}  // namespace tfdiag
