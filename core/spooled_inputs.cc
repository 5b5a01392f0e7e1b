#include "core/spooled_inputs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

namespace tfdiag {

namespace {

// Copies everything readable from `in` to `out`; false on a read or write error (errno set).
bool CopyAll(int in, int out) {
  std::vector<char> buf(1 << 20);
  while (true) {
    const ssize_t n = ::read(in, buf.data(), buf.size());
    if (n == 0) return true;
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    for (ssize_t done = 0; done < n;) {
      const ssize_t w = ::write(out, buf.data() + done, static_cast<size_t>(n - done));
      if (w < 0) {
        if (errno == EINTR) continue;
        return false;
      }
      done += w;
    }
  }
}

}  // namespace

SpooledInputs::~SpooledInputs() {
  for (int fd : fds_) ::close(fd);
}

Status SpooledInputs::Spool(std::vector<std::string>* paths) {
  // Pipes and terminals met so far, by (device, inode): one given twice ("- /dev/stdin") would
  // yield an empty second copy.
  std::vector<std::pair<std::pair<dev_t, ino_t>, std::string>> seen;
  for (std::string& path : *paths) {
    const std::string given = path;
    const std::string source = path == "-" ? "/dev/stdin" : path;
    struct stat st;
    if (::stat(source.c_str(), &st) != 0) continue;  // the reader reports it
    if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) {
      // Standard input redirected from a file (`< t.json`) is read where it is.
      if (path == "-") {
        renamed_.emplace_back(source, given);
        path = source;
      }
      continue;
    }
    const std::pair<dev_t, ino_t> id{st.st_dev, st.st_ino};
    for (const auto& [other, name] : seen) {
      if (other == id) {
        return InvalidInput("{}: the same pipe or standard input as {}; it can be read only once",
                            given, name);
      }
    }
    seen.emplace_back(id, given);
    const char* dir = std::getenv("TMPDIR");
    std::string tmp =
        std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") + "/tfdiag-input-XXXXXX";
    const int out = ::mkostemp(tmp.data(), O_CLOEXEC);
    if (out < 0) {
      return IoError("{}: cannot create a temporary copy in {}: {}", given, tmp,
                     std::strerror(errno));
    }
    ::unlink(tmp.c_str());  // lives while `out` is open; never left behind
    fds_.push_back(out);
    const std::string copy = "/proc/self/fd/" + std::to_string(out);
    copies_.emplace_back(copy, given);
    const int in = path == "-" ? ::dup(STDIN_FILENO) : ::open(source.c_str(), O_RDONLY);
    if (in < 0) return IoError("{}: cannot open: {}", given, std::strerror(errno));
    const bool ok = CopyAll(in, out);
    const int err = errno;
    ::close(in);
    if (!ok) return IoError("{}: cannot copy to {}: {}", given, tmp, std::strerror(err));
    path = copy;
  }
  return OkStatus();
}

const std::string& SpooledInputs::NameOf(const std::string& path) const {
  for (const auto* list : {&copies_, &renamed_}) {
    for (const auto& [tmp, name] : *list) {
      if (tmp == path) return name;
    }
  }
  return path;
}

}  // namespace tfdiag
