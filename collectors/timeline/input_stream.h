// InputStream: a buffered byte stream over a plain or gzip-compressed file, usable as a RapidJSON
// input stream (Peek/Take/Tell). Compression is detected by the gzip magic bytes (1f 8b), never
// by the file name; concatenated gzip members are read in sequence.
//
// Errors are sticky: once reading or inflating fails, Peek() returns '\0' (so the JSON parser
// stops) and status() names the file, the compressed byte offset and zlib's message.
// Thread-safety: one reader per instance.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"

namespace tfdiag {

class InputStream {
 public:
  using Ch = char;
  // Called after each chunk with (bytes of the file consumed so far, file size in bytes).
  using ProgressFn = std::function<void(int64_t, int64_t)>;

  InputStream() = default;
  ~InputStream();
  InputStream(const InputStream&) = delete;
  InputStream& operator=(const InputStream&) = delete;

  // Opens `path`. Errors: kIo (missing, unreadable, a directory).
  Status Open(const std::string& path);
  void set_progress(ProgressFn fn) { progress_ = std::move(fn); }

  bool gzip() const { return gzip_; }
  int64_t file_size() const { return file_size_; }
  // Non-OK after a read or inflate failure.
  const Status& status() const { return status_; }
  // True once the whole input has been consumed.
  bool AtEnd() { return cur_ == end_ && !Refill(); }

  // RapidJSON stream concept. Tell() is the offset in the (decompressed) byte stream.
  char Peek() {
    if (cur_ == end_ && !Refill()) return '\0';
    return *cur_;
  }
  char Take() {
    if (cur_ == end_ && !Refill()) return '\0';
    return *cur_++;
  }
  size_t Tell() const { return static_cast<size_t>(consumed_ + (cur_ - begin_)); }
  char* PutBegin() { return nullptr; }
  void Put(char) {}
  void Flush() {}
  size_t PutEnd(char*) { return 0; }

 private:
  bool Refill();
  bool ReadRaw();

  std::FILE* file_ = nullptr;
  std::string path_;
  int64_t file_size_ = 0;
  int64_t raw_read_ = 0;
  bool gzip_ = false;
  bool raw_eof_ = false;
  bool inflate_done_ = false;
  z_stream z_{};
  bool z_init_ = false;
  std::vector<char> raw_;  // compressed input (gzip) or the data itself (plain)
  std::vector<char> out_;  // decompressed data (gzip)
  const char* begin_ = nullptr;
  const char* cur_ = nullptr;
  const char* end_ = nullptr;
  int64_t consumed_ = 0;  // bytes before begin_
  Status status_;
  ProgressFn progress_;
};

}  // namespace tfdiag
