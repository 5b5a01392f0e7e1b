// Small pieces shared by the /proc readers' sources (proc_reader.cc, environ_reader.cc): not a
// public API. Thread-safety: plain functions; FdCloser is owned by one scope.
#pragma once

#include <fmt/format.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <string_view>

#include "collectors/procfs/proc_reader.h"
#include "core/status.h"

namespace tfdiag::procfs_io {

// errno of an open or read of `path` as a Status: kNotFound (the process or file is gone),
// kUnavailable (permission), else kIo with strerror.
inline Status ErrnoStatus(const std::string& path, int err) {
  switch (err) {
    case ENOENT:
    case ESRCH:
      return NotFound("{}: no such process or file", path);
    case EACCES:
    case EPERM:
      return Status(StatusCode::kUnavailable, fmt::format("{}: permission denied", path));
    default:
      return IoError("{}: {}", path, strerror(err));
  }
}

// Closes a file descriptor on scope exit.
struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

// <root>/proc/<pid>/<file>.
inline std::string ProcPath(const std::string& root, pid_t pid, std::string_view file) {
  return RootedPath(root, fmt::format("/proc/{}/{}", pid, file));
}

}  // namespace tfdiag::procfs_io
