// Atomic output files: write to "<path>.tmp.<pid>" beside the target, then rename over it, so a
// reader never sees a half-written file and a failed run leaves nothing behind.
// "-" and "/dev/stdout" write straight to standard output; character devices such as /dev/null
// are written in place (they cannot be renamed over).
// Thread-safety: one writer per instance.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

#include "core/status.h"

namespace tfdiag {

class AtomicFile {
 public:
  AtomicFile() = default;
  ~AtomicFile();  // discards (unlinks) the temporary file unless Commit() succeeded
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // Opens the temporary file. Errors: kIo naming the path and errno text.
  Status Open(const std::string& path);
  // Appends bytes. Errors: kIo (disk full, ...).
  Status Write(std::string_view bytes);
  // Flushes, fsyncs and renames the temporary file over `path`. Errors: kIo.
  Status Commit();
  // The FILE* being written (for libraries that write to a FILE*); valid between Open and Commit.
  std::FILE* file() { return file_; }

 private:
  std::string path_;
  std::string tmp_path_;
  std::FILE* file_ = nullptr;
  bool direct_ = false;  // stdout or a device: no rename
  bool committed_ = false;
};

// Writes `contents` to `path` atomically. Errors: kIo.
Status WriteFileAtomically(const std::string& path, std::string_view contents);

}  // namespace tfdiag
