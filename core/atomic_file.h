// Atomic output files: the bytes go to a temporary file created with mkstemp(3) (O_CREAT|O_EXCL,
// mode 0600, so a planted file or symlink is never opened) in the target's directory, named
// ".<name>.tfdiag-<pid>-XXXXXX"; Commit() gives it the target's mode, owner and group (an existing
// file keeps them; a new one gets 0666 & ~umask), fsyncs it and renames it over the target, so a
// reader never sees a half-written file and no one can read it while it is written.
// A target that is a symlink is resolved and its target replaced (the link stays), except a
// symlink in a sticky world-writable directory (/tmp) owned by neither us nor the directory's
// owner, which is refused as the kernel's fs.protected_symlinks would.
// A temporary left by a killed run (its pid gone) is removed by the next run writing the same
// target. "-" and "/dev/stdout" write to standard output; character devices, FIFOs and other
// non-regular targets such as /dev/null are written in place (they cannot be renamed over).
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

  // Opens the temporary file. Errors: kIo naming the path and errno text (directory not
  // writable, a refused symlink, ...).
  Status Open(const std::string& path);
  // Appends bytes. Errors: kIo (disk full, ...).
  Status Write(std::string_view bytes);
  // Flushes, fsyncs, sets mode/owner and renames the temporary file over the target. Errors: kIo.
  Status Commit();
  // The FILE* being written (for libraries that write to a FILE*); valid between Open and Commit.
  std::FILE* file() { return file_; }
  // The temporary file's path ("" before Open or when writing in place); for tests.
  const std::string& temporary_path() const { return tmp_path_; }

 private:
  std::string path_;    // as given (errors)
  std::string target_;  // the file replaced: path_, or a symlink's resolved target
  std::string tmp_path_;
  std::FILE* file_ = nullptr;
  bool direct_ = false;  // stdout or a device: no rename
  bool committed_ = false;
};

// Writes `contents` to `path` atomically. Errors: kIo.
Status WriteFileAtomically(const std::string& path, std::string_view contents);

}  // namespace tfdiag
