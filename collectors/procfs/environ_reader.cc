// One environment variable of a process, read from /proc/PID/environ without keeping the rest
// (proc_reader.h: FindEnvVar, ReadEnvVar). Split from proc_reader.cc.
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <cerrno>
#include <optional>
#include <string>
#include <string_view>

#include "collectors/procfs/proc_io.h"
#include "collectors/procfs/proc_reader.h"

namespace tfdiag {
using procfs_io::ErrnoStatus;
using procfs_io::FdCloser;
using procfs_io::ProcPath;

namespace {

// Matches "NAME=" at the start of each NUL-terminated entry, byte by byte, so that environ can
// be streamed through a fixed buffer; only the matching entry's value is ever copied.
class EnvMatcher {
 public:
  explicit EnvMatcher(std::string_view name) : name_(name) {}
  // Consumes bytes; returns true once the value is complete (stop reading).
  bool Feed(const char* p, size_t n) {
    for (size_t i = 0; i < n && state_ != kDone; ++i) Step(p[i]);
    return state_ == kDone;
  }
  size_t captured() const { return value_.size(); }
  bool done() const { return state_ == kDone; }
  // End of input: a last entry without a trailing NUL still counts.
  std::optional<std::string> Finish() {
    if (state_ == kCapturing) state_ = kDone;
    if (state_ != kDone) return std::nullopt;
    return std::move(value_);
  }

 private:
  enum State { kMatching, kSkipping, kCapturing, kDone };
  void Step(char c) {
    switch (state_) {
      case kMatching:
        if (c == '\0') {
          pos_ = 0;
        } else if (pos_ < name_.size() && c == name_[pos_]) {
          ++pos_;
        } else if (pos_ == name_.size() && c == '=') {
          state_ = kCapturing;
        } else {
          state_ = kSkipping;
        }
        break;
      case kSkipping:
        if (c == '\0') state_ = kMatching, pos_ = 0;
        break;
      case kCapturing:
        if (c == '\0') {
          state_ = kDone;
        } else {
          value_.push_back(c);
        }
        break;
      case kDone:
        break;
    }
  }
  std::string_view name_;
  State state_ = kMatching;
  size_t pos_ = 0;
  std::string value_;
};

}  // namespace

std::optional<std::string> FindEnvVar(std::string_view environ_text, std::string_view name) {
  if (name.empty() || name.find('=') != std::string_view::npos) return std::nullopt;
  EnvMatcher m(name);
  m.Feed(environ_text.data(), environ_text.size());
  return m.Finish();
}

StatusOr<std::optional<std::string>> ReadEnvVar(pid_t pid, std::string_view name,
                                                const std::string& root, size_t* environ_bytes) {
  if (name.empty() || name.find('=') != std::string_view::npos) {
    return InvalidInput("environment variable name '{}': must be non-empty without '='", name);
  }
  std::string path = ProcPath(root, pid, "environ");
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW);
  if (fd < 0) return ErrnoStatus(path, errno);
  FdCloser closer{fd};
  EnvMatcher m(name);
  char buf[4096];
  Status err;
  size_t total = 0;
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      err = ErrnoStatus(path, errno);
      break;
    }
    if (n == 0) break;
    total += static_cast<size_t>(n);
    if (m.Feed(buf, static_cast<size_t>(n))) break;
    if (m.captured() > kEnvValueMaxBytes) {
      err = InvalidInput("{}: {} longer than {} bytes", path, name, kEnvValueMaxBytes);
      break;
    }
    if (total >= kEnvironMaxBytes) break;  // an environ range no exec makes: stop, unset
  }
  // Other variables passed through buf: wipe it so no secret outlives this call on the stack.
  ::explicit_bzero(buf, sizeof(buf));
  if (environ_bytes != nullptr) *environ_bytes = total;
  if (!err.ok()) return err;
  if (total >= kEnvironMaxBytes && !m.done()) return std::optional<std::string>();
  if (m.captured() > kEnvValueMaxBytes) {
    return InvalidInput("{}: {} longer than {} bytes", path, name, kEnvValueMaxBytes);
  }
  return m.Finish();
}

}  // namespace tfdiag
