// InputStream: a buffered byte stream over a plain or gzip-compressed file, usable as a RapidJSON
// input stream (Peek/Take/Tell). Compression is detected by the gzip magic bytes (1f 8b), never
// by the file name; concatenated gzip members are read in sequence.
//
// A gzip stream that inflates past kMaxInflateRatio times its compressed bytes (after the first
// kInflateRatioFreeBytes) fails there, while inflating (core/input_limits.h).
//
// Errors are sticky: once reading or inflating fails, Peek() returns '\0' (so the JSON parser
// stops) and status() names the file, the compressed byte offset and zlib's message.
//
// With StartReadAhead(), a gzip file is inflated on a second thread, up to kReadAheadSlots MiB
// ahead of the parser, so inflating and parsing overlap on two cores; the bytes, offsets and
// errors are the same as without it. Progress is then reported from that thread.
// Thread-safety: one reader per instance.
#pragma once

#include <zlib.h>

#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/default_init_allocator.h"
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
  // For gzip input (no-op otherwise): inflate on a background thread from now on. Call once,
  // after Open() and before the first Peek/Take past the first MiB.
  void StartReadAhead();
  static constexpr int kReadAheadSlots = 4;

  bool gzip() const { return gzip_; }
  int64_t file_size() const { return file_size_; }
  // Non-OK after a read or inflate failure, once the bytes before it are consumed (Peek() then
  // returns the '\0' that ends the data); the same with and without read-ahead.
  Status status();
  // True once the whole input has been consumed.
  bool AtEnd() { return cur_ == end_ && !Refill(); }

  // Bulk reads for FastJsonReader: up to `cap` bytes of the (decompressed) stream into `dst`
  // (plain files are read straight into it); 0 at the end or after an error (see status()).
  // Not to be mixed with Peek/Take on one instance, except that bytes they buffered come first.
  size_t Read(char* dst, size_t cap);

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
  // fread into `dst` from the file, counting raw_read_, setting raw_eof_ and reporting progress;
  // 0 (status_ set) on a read error.
  size_t ReadFile(char* dst, size_t cap);
  // The next compressed (or plain) chunk, up to `cap` bytes (1 MiB by default), into raw_; false
  // on a read error.
  bool ReadRaw(size_t cap = size_t{1} << 20);
  // Inflates up to `cap` bytes into `out`; returns the bytes produced: 0 at the end of the input
  // or after an error (status_ set; bytes before the error are returned first).
  size_t Inflate(char* out, size_t cap);
  // Refill() with read-ahead: waits for the next inflated buffer.
  bool RefillAhead();
  void ReadAheadLoop();
  void StopReadAhead();

  std::FILE* file_ = nullptr;
  std::string path_;
  int64_t file_size_ = 0;
  int64_t raw_read_ = 0;
  int64_t inflated_ = 0;  // decompressed bytes produced (gzip), against kMaxInflateRatio
  bool gzip_ = false;
  bool raw_eof_ = false;
  bool inflate_done_ = false;
  z_stream z_{};
  bool z_init_ = false;
  // Compressed input (gzip) or the data itself (plain); resized without zeroing.
  std::vector<char, DefaultInitAllocator<char>> raw_;
  std::vector<char> out_;  // decompressed data (gzip)
  const char* begin_ = nullptr;
  const char* cur_ = nullptr;
  const char* end_ = nullptr;
  int64_t consumed_ = 0;  // bytes before begin_
  Status status_;
  ProgressFn progress_;

  // Read-ahead state, guarded by mu_. While the thread runs, it alone uses file_, z_, raw_ and
  // status_.
  bool read_ahead_ = false;
  std::thread ra_thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::vector<char>> ra_full_;  // FIFO of inflated buffers (front = next)
  std::vector<std::vector<char>> ra_free_;
  std::vector<char> ra_current_;  // the buffer the parser reads
  bool ra_done_ = false, ra_stop_ = false;
  Status ra_status_;  // the thread's status_, copied when it sets ra_done_
};

}  // namespace tfdiag
