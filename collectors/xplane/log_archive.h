// A TensorBoard log directory packed as a tar archive (`.tar.gz`, `.tgz`, plain `.tar`: how log
// directories are shared), unpacked with libarchive (https://libarchive.org, Debian
// libarchive-dev) into a private temporary directory (mkdtemp, mode 0700) that is removed again
// when the UnpackedArchive is destroyed, so that it is read as the directory itself.
// Every entry is checked before anything is written: a relative path without "..", "." only
// components or control characters; a regular file or a directory (links, devices, FIFOs and
// sockets are refused); at most kMaxEntries entries, kMaxEntryBytes per file and kMaxTotalBytes
// in all (sizes as written, counted while writing, not trusted from the headers). Files are
// created with O_EXCL | O_NOFOLLOW, mode 0600, only below the temporary directory.
// Thread-safety: one UnpackedArchive per thread; it owns its directory.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/status.h"

namespace tfdiag {

class UnpackedArchive {
 public:
  static constexpr int64_t kMaxEntries = 100'000;
  static constexpr int64_t kMaxEntryBytes = int64_t{4} << 30;   // 4 GiB
  static constexpr int64_t kMaxTotalBytes = int64_t{16} << 30;  // 16 GiB
  // Unpacks `archive` into a new directory under $TMPDIR (else /tmp). Errors: kIo when it cannot
  // be read or written; kInvalidInput "<archive>: entry N (<name>): <what is wrong>" for an entry
  // that fails a check or a corrupt archive; nothing is left behind on error.
  static StatusOr<std::unique_ptr<UnpackedArchive>> Unpack(const std::string& archive);
  ~UnpackedArchive();
  UnpackedArchive(const UnpackedArchive&) = delete;
  UnpackedArchive& operator=(const UnpackedArchive&) = delete;
  const std::string& dir() const { return dir_; }
  int64_t entries() const { return entries_; }
  int64_t bytes() const { return bytes_; }

 private:
  UnpackedArchive() = default;
  std::string dir_;
  int64_t entries_ = 0, bytes_ = 0;
};

// True when `path` names a regular file that is a tar archive, plain or gzip-compressed ("ustar"
// at byte 257 of its first 512-byte header, POSIX.1-1988 and GNU tar). Reads 512 bytes at most.
bool IsTarArchive(const std::string& path);

}  // namespace tfdiag
