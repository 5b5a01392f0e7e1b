// MappedFile: a plain file mapped read-only into memory, so that the fast tokenizer reads the
// page cache in place instead of copying every byte through read(2). Pages behind the parser are
// released (madvise MADV_DONTNEED), which keeps the resident set to what is being parsed: a 1 GB
// file does not show up as 1 GB of RSS. The page cache itself is untouched.
//
// A file that shrinks while mapped (rewritten by its writer), or whose pages cannot be read (an
// I/O error on a disk or network file system), raises SIGBUS on access: a handler installed by
// Map() turns that into "tfdiag: error: <file>: byte N: the file shrank or could not be read ..."
// on stderr and exit code 2, instead of a crash. Map() refuses what is not a regular file, and
// callers fall back to read(2) when Map() fails.
// Thread-safety: Release() may be called from several threads on disjoint or overlapping ranges.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace tfdiag {

class MappedFile {
 public:
  MappedFile() = default;
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  // Maps the whole of the regular file `fd` (which stays owned by the caller and may be closed
  // afterwards); `name` names it in the SIGBUS message. False (nothing mapped) for an empty or
  // non-regular file or if mmap fails.
  bool Map(int fd, const std::string& name = "");
  const char* data() const { return data_; }
  size_t size() const { return size_; }
  // Drops from this process the mapping's pages from the one holding `begin` up to the one holding
  // `end` (excluded): byte offsets in the file; for a reader that has consumed everything before
  // `end`. Pages touched again later are read again from the page cache, so releasing a page that
  // another thread still reads costs time, never data.
  void Release(size_t begin, size_t end) const;

 private:
  const char* data_ = nullptr;
  size_t size_ = 0;
  int slot_ = -1;  // in the SIGBUS handler's table, -1 if it was full
};

}  // namespace tfdiag
