#include "core/atomic_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/xattr.h>
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

const char* KindOf(mode_t m) {
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISSOCK(m)) return "a socket";
  if (S_ISDIR(m)) return "a directory";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISLNK(m)) return "a symbolic link";
  return "not a regular file";
}

// Reads xattr `name` of `fd` into `value`; false with errno set on failure.
bool GetXattr(int fd, const char* name, std::string* value) {
  for (int attempt = 0; attempt < 4; ++attempt) {  // it may grow between the two calls
    ssize_t n = ::fgetxattr(fd, name, nullptr, 0);
    if (n < 0) return false;
    value->resize(static_cast<size_t>(n));
    n = ::fgetxattr(fd, name, value->data(), value->size());
    if (n >= 0) {
      value->resize(static_cast<size_t>(n));
      return true;
    }
    if (errno != ERANGE) return false;
  }
  return false;
}

// Copies every extended attribute of `from` (the file being replaced) to `to` (its replacement):
// POSIX ACLs (system.posix_acl_*), SELinux and other security.* labels, user.* and, for root,
// trusted.*. An attribute `to` already has with the same value (an SELinux label the policy gave
// the new file) is not set again. Errors: kIo naming the attribute.
Status CopyXattrs(int from, int to, const std::string& path) {
  std::string names;
  for (int attempt = 0;; ++attempt) {
    ssize_t n = ::flistxattr(from, nullptr, 0);
    if (n < 0 && (errno == ENOTSUP || errno == ENOSYS)) return OkStatus();  // none to keep
    if (n < 0)
      return IoError("{}: cannot list its extended attributes: {}", path, std::strerror(errno));
    names.resize(static_cast<size_t>(n));
    n = ::flistxattr(from, names.data(), names.size());
    if (n >= 0) {
      names.resize(static_cast<size_t>(n));
      break;
    }
    if (errno != ERANGE || attempt == 3) {
      return IoError("{}: cannot list its extended attributes: {}", path, std::strerror(errno));
    }
  }
  std::string value, have;
  for (size_t i = 0; i < names.size();) {
    const char* name = names.c_str() + i;
    i += std::strlen(name) + 1;
    if (!GetXattr(from, name, &value)) {
      if (errno == ENODATA) continue;  // removed meanwhile
      return IoError("{}: cannot read the extended attribute {}: {}", path, name,
                     std::strerror(errno));
    }
    if (GetXattr(to, name, &have) && have == value) continue;
    if (::fsetxattr(to, name, value.data(), value.size(), 0) != 0) {
      return IoError(
          "{}: cannot copy the extended attribute {} to the replacement: {}; the file is left "
          "unchanged",
          path, name, std::strerror(errno));
    }
  }
  return OkStatus();
}

// In kInPlace mode: the owner, group, mode and xattrs of `target` given to the temporary `fd`.
Status KeepAttributes(const std::string& path, const std::string& target, int fd) {
  const int from = ::open(target.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (from < 0) {
    if (errno == ENOENT) return OkStatus();  // removed meanwhile: a new file
    return IoError("{}: cannot open it to keep its attributes: {}", path, std::strerror(errno));
  }
  struct stat st;
  Status s = OkStatus();
  if (::fstat(from, &st) != 0 || !S_ISREG(st.st_mode)) {
    s = IoError("{}: changed while it was written (no longer a regular file)", path);
  } else {
    if (::fchown(fd, st.st_uid, st.st_gid) != 0) {
      (void)!::fchown(fd, static_cast<uid_t>(-1), st.st_gid);  // not root: keep the group if ours
    }
    ::fchmod(fd, st.st_mode & 07777);
    s = CopyXattrs(from, fd, path);  // after fchown, which would clear security.capability
  }
  ::close(from);
  return s;
}

// fs.protected_symlinks' rule (Documentation/admin-guide/sysctl/fs.rst in the kernel sources; a
// host may have it off): the symlink `link` (its lstat) in directory `dir` is not followed when
// `dir` is sticky and world-writable and neither we nor the directory's owner own the link.
bool RefusedByProtectedSymlinks(const struct stat& link, const std::string& dir) {
  struct stat dst;
  return ::stat(dir.c_str(), &dst) == 0 && (dst.st_mode & S_ISVTX) && (dst.st_mode & S_IWOTH) &&
         link.st_uid != ::geteuid() && link.st_uid != dst.st_uid;
}

// That rule on every directory component of `path` (/tmp/evil -> /etc); the last component is
// checked by the caller. Errors: kIo naming the link.
Status CheckDirectoryLinks(const std::string& path) {
  const bool absolute = !path.empty() && path[0] == '/';
  std::string parent = absolute ? "/" : ".";
  size_t pos = absolute ? 1 : 0;
  for (size_t slash; (slash = path.find('/', pos)) != std::string::npos; pos = slash + 1) {
    const std::string name = path.substr(pos, slash - pos);
    if (name.empty() || name == ".") continue;
    const std::string next = (parent == "/" ? "" : parent) + "/" + name;
    struct stat lst;
    if (name != ".." && ::lstat(next.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode) &&
        RefusedByProtectedSymlinks(lst, parent)) {
      return IoError(
          "{}: refusing to follow {}, a symlink owned by uid {} in the sticky world-writable "
          "directory {} (as fs.protected_symlinks does); remove it or write elsewhere",
          path, next, lst.st_uid, parent);
    }
    parent = next;
  }
  return OkStatus();
}

}  // namespace

AtomicFile::~AtomicFile() {
  if (file_ != nullptr && !direct_) {
    std::fclose(file_);
    if (!committed_) ::unlink(tmp_path_.c_str());
  }
}

Status AtomicFile::Open(const std::string& path, Mode mode) {
  path_ = target_ = path;
  mode_ = mode;
  if (path == "-" || path == "/dev/stdout") {
    file_ = stdout;
    direct_ = true;
    return OkStatus();
  }
  TFDIAG_RETURN_IF_ERROR(CheckDirectoryLinks(path));
  struct stat lst;
  const bool exists = ::lstat(path.c_str(), &lst) == 0;
  if (exists && S_ISLNK(lst.st_mode)) {
    if (mode == Mode::kOutput) {
      return IoError(
          "{}: is a symbolic link; refusing to write through it (it may point at any file a "
          "workload chose): remove it or give the path of the file itself",
          path);
    }
    const std::string dir = DirName(path);
    if (RefusedByProtectedSymlinks(lst, dir)) {
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
    // A link of another user to a file that user does not own (a tenant's manifest.yaml ->
    // /etc/kubernetes/admin.conf, or any root-only file) is not edited through: whoever runs
    // tfdiag as root would rewrite a file the link's owner could not (as Apache's
    // SymLinksIfOwnerMatch).
    struct stat tst;
    if (::stat(resolved, &tst) == 0 && lst.st_uid != ::geteuid() && lst.st_uid != tst.st_uid) {
      return IoError(
          "{}: refusing to follow a symlink owned by uid {} to {}, a file of uid {}: its owner "
          "could not edit that file; give the path of the file itself",
          path, lst.st_uid, resolved, tst.st_uid);
    }
  }
  struct stat st;
  if (::lstat(target_.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    // Only a character device (/dev/null, a terminal) is written in place: no one but root can
    // create one, while anyone can plant a FIFO, which would block or hand the report to its
    // reader. O_NONBLOCK: a FIFO swapped in after the lstat fails to open (ENXIO) or is caught
    // by the fstat below, instead of blocking.
    if (!S_ISCHR(st.st_mode)) {
      return IoError("{}: is {}, not a regular file; refusing to write there", path,
                     KindOf(st.st_mode));
    }
    const int fd = ::open(target_.c_str(), O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return IoError("{}: cannot open for writing: {}", path, std::strerror(errno));
    struct stat fst;
    if (::fstat(fd, &fst) != 0 || !S_ISCHR(fst.st_mode)) {
      ::close(fd);
      return IoError("{}: changed while it was opened (no longer a character device)", path);
    }
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    file_ = ::fdopen(fd, "wb");
    if (file_ == nullptr) {
      ::close(fd);
      return IoError("{}: cannot open for writing: {}", path, std::strerror(errno));
    }
    direct_ = true;
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
  if (mode_ == Mode::kInPlace) {
    Status kept = KeepAttributes(path_, target_, fd);
    if (!kept.ok()) {
      std::fclose(file_);
      file_ = nullptr;
      ::unlink(tmp_path_.c_str());
      return kept;
    }
  } else {
    // An output file is the caller's, with the mode open(2) would give a new file: never the
    // owner or mode of whatever was at the path (a file planted with 0666 stays no one's door).
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
    struct stat st, dst;
    const std::string dir = DirName(target_);
    if (err == EPERM && ::lstat(target_.c_str(), &st) == 0 && ::stat(dir.c_str(), &dst) == 0 &&
        (dst.st_mode & S_ISVTX) && st.st_uid != ::geteuid()) {
      return IoError(
          "{}: belongs to uid {} in the sticky directory {}, so it may not be replaced; refusing "
          "to write into it: remove it or write elsewhere",
          path_, st.st_uid, dir);
    }
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

Status ReplaceFileContents(const std::string& path, std::string_view contents) {
  AtomicFile f;
  TFDIAG_RETURN_IF_ERROR(f.Open(path, AtomicFile::Mode::kInPlace));
  TFDIAG_RETURN_IF_ERROR(f.Write(contents));
  return f.Commit();
}

}  // namespace tfdiag
