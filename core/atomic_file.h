// Atomic output files: the bytes go to a temporary file created with mkstemp(3) (O_CREAT|O_EXCL,
// mode 0600, so a planted file or symlink is never opened) in the target's directory, named
// ".<name>.tfdiag-<pid>-XXXXXX"; Commit() fsyncs it and renames it over the target, so a reader
// never sees a half-written file and no one can read it while it is written. Two modes:
// - kOutput (`-o FILE`, bundles, screenshots): a new file of the caller, 0666 & ~umask, whatever
//   was at the path before (a file planted in /tmp by another user with 0666 does not lend its
//   owner or mode). The path's last component is never followed: a symlink there is refused
//   (rename(2) would replace the link itself, never write through it, so a link swapped in after
//   the check is harmless). A FIFO, socket, directory or block device is refused without being
//   opened (a planted FIFO neither receives the report nor blocks); a character device such as
//   /dev/null is written in place, opened O_NONBLOCK|O_NOFOLLOW and checked again with fstat.
//   Without root, replacing another user's file in a sticky directory fails (EPERM, see
//   unlink(2)): that is refused with a message naming the owner.
// - kInPlace (`fix --in-place`): the file is edited: the replacement keeps its mode, owner, group
//   and extended attributes (POSIX ACLs, SELinux labels, user.*; copied with flistxattr(2),
//   fgetxattr(2), fsetxattr(2) before the rename). A symlink is resolved and its target replaced
//   (the link stays), except a symlink in a sticky world-writable directory (/tmp) owned by
//   neither us nor the directory's owner, which is refused as fs.protected_symlinks would, and a
//   symlink of another user to a file that user does not own (a tenant's link to a root-only
//   file), refused as Apache's SymLinksIfOwnerMatch would.
// In both modes a directory on the way that is a symlink planted in a sticky world-writable
// directory by another user (`/tmp/evil/out.json`, /tmp/evil -> /etc) is refused, as
// fs.protected_symlinks would (the host may have it off).
// A temporary left by a killed run (its pid gone) is removed by the next run writing the same
// target. "-" and "/dev/stdout" write to standard output.
// Thread-safety: one writer per instance.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

#include "core/status.h"

namespace tfdiag {

class AtomicFile {
 public:
  enum class Mode {
    kOutput,   // a new file of ours; the last path component is never followed
    kInPlace,  // an edit: mode, owner, group and xattrs kept; a symlink's target edited
  };
  AtomicFile() = default;
  ~AtomicFile();  // discards (unlinks) the temporary file unless Commit() succeeded
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // Opens the temporary file. Errors: kIo naming the path and what was found or the errno text
  // (directory not writable, a refused symlink, FIFO or other non-regular file, ...).
  Status Open(const std::string& path, Mode mode = Mode::kOutput);
  // Appends bytes. Errors: kIo (disk full, ...).
  Status Write(std::string_view bytes);
  // Flushes, fsyncs, sets mode (and for kInPlace owner, group, xattrs) and renames the temporary
  // file over the target. Errors: kIo (an xattr that cannot be copied is named; a file of another
  // user in a sticky directory that we may not replace).
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
  Mode mode_ = Mode::kOutput;
  bool direct_ = false;  // stdout or a device: no rename
  bool committed_ = false;
};

// Writes `contents` to `path` atomically (an output file, Mode::kOutput). Errors: kIo.
Status WriteFileAtomically(const std::string& path, std::string_view contents);

// Replaces the contents of the existing file `path` atomically, keeping its mode, owner, group and
// xattrs (Mode::kInPlace; `fix --in-place`). Errors: kIo.
Status ReplaceFileContents(const std::string& path, std::string_view contents);

}  // namespace tfdiag
