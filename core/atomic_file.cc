#include "core/atomic_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace tfdiag {

AtomicFile::~AtomicFile() {
  if (file_ != nullptr && !direct_) {
    std::fclose(file_);
    if (!committed_) ::unlink(tmp_path_.c_str());
  }
}

Status AtomicFile::Open(const std::string& path) {
  path_ = path;
  if (path == "-" || path == "/dev/stdout") {
    file_ = stdout;
    direct_ = true;
    return OkStatus();
  }
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    file_ = std::fopen(path.c_str(), "wb");
    direct_ = file_ != nullptr;
    if (file_ == nullptr)
      return IoError("{}: cannot open for writing: {}", path, std::strerror(errno));
    return OkStatus();
  }
  tmp_path_ = fmt::format("{}.tmp.{}", path, ::getpid());
  file_ = std::fopen(tmp_path_.c_str(), "wb");
  if (file_ == nullptr) {
    return IoError("{}: cannot create temporary file {}: {}", path, tmp_path_,
                   std::strerror(errno));
  }
  return OkStatus();
}

Status AtomicFile::Write(std::string_view bytes) {
  if (file_ == nullptr) return Internal("AtomicFile::Write before Open");
  if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size()) {
    return IoError("{}: write failed: {}", path_, std::strerror(errno));
  }
  return OkStatus();
}

Status AtomicFile::Commit() {
  if (file_ == nullptr) return Internal("AtomicFile::Commit before Open");
  if (std::fflush(file_) != 0) return IoError("{}: write failed: {}", path_, std::strerror(errno));
  if (direct_) {
    if (file_ != stdout) std::fclose(file_);
    file_ = nullptr;
    committed_ = true;
    return OkStatus();
  }
  ::fsync(::fileno(file_));
  bool close_ok = std::fclose(file_) == 0;
  file_ = nullptr;
  if (!close_ok) {
    ::unlink(tmp_path_.c_str());
    return IoError("{}: write failed: {}", path_, std::strerror(errno));
  }
  if (std::rename(tmp_path_.c_str(), path_.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp_path_.c_str());
    return IoError("{}: cannot rename {} into place: {}", path_, tmp_path_, std::strerror(err));
  }
  committed_ = true;
  return OkStatus();
}

Status WriteFileAtomically(const std::string& path, std::string_view contents) {
  AtomicFile f;
  TFDIAG_RETURN_IF_ERROR(f.Open(path));
  TFDIAG_RETURN_IF_ERROR(f.Write(contents));
  return f.Commit();
}

}  // namespace tfdiag
