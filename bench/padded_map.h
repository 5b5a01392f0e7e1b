// PaddedMap: a file mapped read-only, followed by at least `padding` zero bytes (an anonymous
// mapping behind it), so that parsers that need a NUL-terminated or padded buffer (RapidJSON's
// StringStream and its SSE4.2 scans, simdjson's SIMDJSON_PADDING) read the file in place, without
// a copy. Used by the bench's floors (sax_floor.cc, simdjson_floor.cc) only.
// Errors: Map() returns false (errno set) when the file cannot be opened, stat'ed or mapped.
#pragma once

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>

namespace bench {

class PaddedMap {
 public:
  PaddedMap() = default;
  PaddedMap(const PaddedMap&) = delete;
  PaddedMap& operator=(const PaddedMap&) = delete;
  ~PaddedMap() {
    if (base_ != nullptr) ::munmap(base_, reserved_);
  }
  bool Map(const char* path, size_t padding) {
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    struct stat st;
    if (::fstat(fd, &st) != 0) {
      ::close(fd);
      return false;
    }
    size_ = static_cast<size_t>(st.st_size);
    const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    reserved_ = (size_ + padding + page - 1) / page * page + page;
    // Zero pages first, then the file over their start: the bytes after the file read as 0.
    void* base = ::mmap(nullptr, reserved_, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) {
      ::close(fd);
      return false;
    }
    base_ = base;
    if (size_ > 0 && ::mmap(base, size_, PROT_READ, MAP_PRIVATE | MAP_FIXED | MAP_POPULATE, fd,
                            0) == MAP_FAILED) {
      ::close(fd);
      return false;
    }
    ::close(fd);
    return true;
  }
  const char* data() const { return static_cast<const char*>(base_); }
  size_t size() const { return size_; }
  size_t capacity() const { return reserved_; }

 private:
  void* base_ = nullptr;
  size_t size_ = 0, reserved_ = 0;
};

}  // namespace bench
