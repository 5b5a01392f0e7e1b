#include "core/atomic_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

namespace tfdiag {

namespace {

std::string DirName(const std::string& p) {
  size_t slash = p.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : p.substr(0, slash);
}

std::string BaseName(const std::string& p) {
  size_t slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

// Removes ".<base>.tfdiag-<pid>-XXXXXX" files in `dir` whose pid is gone and that we own: what a
// run killed mid-write (kill -9, power loss) left behind.
void RemoveStaleTemporaries(const std::string& dir, const std::string& base) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  const std::string prefix = "." + base + ".tfdiag-";
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    const char* p = name.c_str() + prefix.size();
    char* end = nullptr;
    long pid = std::strtol(p, &end, 10);
    if (end == p || *end != '-' || std::strlen(end + 1) != 6 || pid <= 0) continue;
    if (pid == ::getpid() || ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
    struct stat st;
    const std::string full = dir + "/" + name;
    if (::lstat(full.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid())
      continue;
    ::unlink(full.c_str());
  }
  ::closedir(d);
}

}  // namespace

AtomicFile::~AtomicFile() {
  if (file_ != nullptr && !direct_) {
    std::fclose(file_);
    if (!committed_) ::unlink(tmp_path_.c_str());
  }
}

Status AtomicFile::Open(const std::string& path) {
  path_ = target_ = path;
  if (path == "-" || path == "/dev/stdout") {
    file_ = stdout;
    direct_ = true;
    return OkStatus();
  }
  struct stat lst;
  if (::lstat(path.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)) {
    struct stat dst;
    const std::string dir = DirName(path);
    if (::stat(dir.c_str(), &dst) == 0 && (dst.st_mode & S_ISVTX) && (dst.st_mode & S_IWOTH) &&
        lst.st_uid != ::geteuid() && lst.st_uid != dst.st_uid) {
      return IoError(
          "{}: refusing to follow a symlink owned by uid {} in the sticky world-writable "
          "directory {} (as fs.protected_symlinks does); remove it or write elsewhere",
          path, lst.st_uid, dir);
    }
    char resolved[PATH_MAX];
    if (::realpath(path.c_str(), resolved) == nullptr) {
      return IoError("{}: cannot resolve the symlink: {}", path, std::strerror(errno));
    }
    target_ = resolved;
  }
  struct stat st;
  if (::stat(target_.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    file_ = std::fopen(target_.c_str(), "wb");
    direct_ = file_ != nullptr;
    if (file_ == nullptr)
      return IoError("{}: cannot open for writing: {}", path, std::strerror(errno));
    return OkStatus();
  }
  const std::string dir = DirName(target_), base = BaseName(target_);
  RemoveStaleTemporaries(dir, base);
  std::string tmpl = fmt::format("{}/.{}.tfdiag-{}-XXXXXX", dir, base, ::getpid());
  int fd = ::mkstemp(tmpl.data());  // O_CREAT|O_EXCL, 0600: never opens what is there
  if (fd < 0) {
    return IoError("{}: cannot create a temporary file in {}: {}", path, dir, std::strerror(errno));
  }
  tmp_path_ = tmpl;
  file_ = ::fdopen(fd, "wb");
  if (file_ == nullptr) {
    ::close(fd);
    ::unlink(tmp_path_.c_str());
    return IoError("{}: cannot open {}: {}", path, tmp_path_, std::strerror(errno));
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
  const int fd = ::fileno(file_);
  // The target's mode, owner and group; a new file's mode as open(2) would give it.
  struct stat st;
  if (::stat(target_.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
    if (::fchown(fd, st.st_uid, st.st_gid) != 0) {
      (void)!::fchown(fd, static_cast<uid_t>(-1), st.st_gid);  // not root: keep the group if ours
    }
    ::fchmod(fd, st.st_mode & 07777);
  } else {
    mode_t mask = ::umask(0);
    ::umask(mask);
    ::fchmod(fd, 0666 & ~mask);
  }
  ::fsync(fd);
  bool close_ok = std::fclose(file_) == 0;
  file_ = nullptr;
  if (!close_ok) {
    ::unlink(tmp_path_.c_str());
    return IoError("{}: write failed: {}", path_, std::strerror(errno));
  }
  if (std::rename(tmp_path_.c_str(), target_.c_str()) != 0) {
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
