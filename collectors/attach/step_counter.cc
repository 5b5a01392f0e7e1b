#include "collectors/attach/step_counter.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "collectors/procfs/proc_reader.h"
#include "collectors/procfs/task_mounts.h"

namespace tfdiag {

namespace {

std::string ProcDir(const std::string& root, pid_t pid) {
  return (root == "/" || root.empty() ? std::string() : root) + "/proc/" + std::to_string(pid);
}

bool EndsWith(const std::string& s, const char* suffix) {
  const size_t n = std::strlen(suffix);
  return s.size() > n && s.compare(s.size() - n, n, suffix) == 0;
}

Status NotRegular(const std::string& name, const std::string& path) {
  return Status(StatusCode::kUnavailable,
                fmt::format("{} ({}): not a regular file: not read", name, path));
}

}  // namespace

StepFile FindStepFile(const std::string& root, pid_t pid) {
  StepFile out;
  const std::string dir = ProcDir(root, pid) + "/fd";
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return out;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    char target[4096];
    const std::string link = dir + "/" + e->d_name;
    const ssize_t n = readlink(link.c_str(), target, sizeof target - 1);
    if (n <= 0) continue;
    std::string path(target, static_cast<size_t>(n));
    if (!EndsWith(path, kStepFileSuffix)) continue;
    char* end = nullptr;
    const long fd = std::strtol(e->d_name, &end, 10);
    if (end == nullptr || *end != '\0') continue;
    // The lowest fd wins when a task holds several (stable from one scan to the next).
    if (out.fd < 0 || fd < out.fd) {
      out.fd = static_cast<int>(fd);
      out.path = std::move(path);
    }
  }
  closedir(d);
  return out;
}

StatusOr<int64_t> ParseStepCount(const std::string& text, const std::string& where) {
  size_t i = 0;
  while (i < text.size() && text[i] == ' ') ++i;
  const size_t digits = i;
  int64_t v = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
    if (v > (INT64_MAX - 9) / 10) {
      return InvalidInput("{}: byte {}: step count overflows 64 bits", where, i);
    }
    v = v * 10 + (text[i] - '0');
  }
  if (i == digits) {
    return InvalidInput("{}: byte {}: expected the decimal count of completed steps", where, i);
  }
  for (; i < text.size(); ++i) {
    if (text[i] != '\n' && text[i] != ' ' && text[i] != '\r') {
      return InvalidInput("{}: byte {}: expected only whitespace after the count", where, i);
    }
  }
  return v;
}

StatusOr<int64_t> ReadStepCount(const std::string& root, pid_t pid, const StepFile& file) {
  const std::string path = ProcDir(root, pid) + "/fd/" + std::to_string(file.fd);
  const std::string name = file.path;
  // The fd's target is whatever the task opened under that name: a FIFO (whose open would wait
  // for a writer, and whose read for data), a device, a file on a FUSE mount it serves. Only a
  // regular file is opened (checked before the open, through the magic link /proc/PID/fd/N that
  // must be followed, and again on the open fd), without blocking, and the reads run under
  // BoundedRead so that a read that never returns cannot stop the sampler.
  // A file on a FUSE (or network) mount is never touched, not even stat'ed: its server may be
  // the workload, and a request it never answers leaves our thread in D state, unkillable.
  StatusOr<std::string> fstype = FdFsType(pid, file.fd, root);
  if (!fstype.ok() && fstype.status().code() != StatusCode::kInvalidInput) {
    return IoError("{}: {}", name, fstype.status().message());
  }
  if (!fstype.ok() || !IsLocalFsType(*fstype)) {
    return Status(StatusCode::kUnavailable,
                  fmt::format("{} ({}): not read: on a {} mount (only local file systems are read)",
                              name, path, fstype.ok() ? *fstype : "unknown"));
  }
  auto read = [path, name]() -> StatusOr<std::string> {
    struct stat st;
    if (stat(path.c_str(), &st) != 0)
      return IoError("{} ({}): {}", name, path, std::strerror(errno));
    if (!S_ISREG(st.st_mode)) return NotRegular(name, path);
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) return IoError("{} ({}): {}", name, path, std::strerror(errno));
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      close(fd);
      return NotRegular(name, path);
    }
    // The task rewrites the count while we read: read until two reads agree (a read racing a
    // rewrite could mix digits of two counts), at most 8 times; the agreed text is returned.
    std::string last;
    for (int attempt = 0; attempt < 8; ++attempt) {
      char buf[64];
      const ssize_t n = pread(fd, buf, sizeof buf, 0);
      if (n < 0) {
        const int err = errno;
        close(fd);
        return IoError("{} ({}): {}", name, path, std::strerror(err));
      }
      std::string text(buf, static_cast<size_t>(n));
      const bool same = attempt > 0 && text == last;
      last = std::move(text);
      if (same) break;
    }
    close(fd);
    return last;
  };
  StatusOr<std::string> text =
      BoundedRead(std::move(read), std::chrono::milliseconds(200), "step counter " + name);
  if (!text.ok()) return text.status();
  return ParseStepCount(*text, name);
}

}  // namespace tfdiag
