#include "collectors/procfs/task_mounts.h"

#include <fcntl.h>
#include <linux/nsfs.h>
#include <linux/openat2.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "collectors/procfs/proc_reader.h"

namespace tfdiag {
namespace {

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

Status Errno(const std::string& what, int err) {
  if (err == ENOENT || err == ESRCH) return NotFound("{}: no such process or file", what);
  if (err == EACCES || err == EPERM) {
    return Status(StatusCode::kUnavailable, fmt::format("{}: permission denied", what));
  }
  if (err == ELOOP) return InvalidInput("{}: a symbolic link (not followed)", what);
  if (err == EXDEV) return InvalidInput("{}: resolves outside its mount (not followed)", what);
  return IoError("{}: {}", what, std::strerror(err));
}

// mountinfo's octal escapes (\040 space, \011 tab, \012 newline, \134 backslash).
std::string UnescapeOctal(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '3' && s[i + 2] >= '0' &&
        s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
      out += static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::vector<std::string_view> Words(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && s[i] == ' ') ++i;
    size_t j = i;
    while (j < s.size() && s[j] != ' ') ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

long OpenAt2(int dir, const std::string& path, uint64_t flags, uint64_t resolve) {
  open_how how{};
  how.flags = flags;
  how.resolve = resolve;
  return ::syscall(SYS_openat2, dir, path.c_str(), &how, sizeof how);
}

}  // namespace

std::vector<TaskMount> ParseTaskMounts(std::string_view text) {
  std::vector<TaskMount> out;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    const size_t sep = line.find(" - ");
    if (sep == std::string_view::npos) continue;
    std::vector<std::string_view> pre = Words(line.substr(0, sep));
    std::vector<std::string_view> post = Words(line.substr(sep + 3));
    if (pre.size() < 5 || post.empty()) continue;
    TaskMount m;
    m.id = std::atoi(std::string(pre[0]).c_str());
    m.mount_point = UnescapeOctal(pre[4]);
    m.fstype = std::string(post[0]);
    out.push_back(std::move(m));
  }
  return out;
}

StatusOr<std::vector<TaskMount>> ReadTaskMounts(pid_t pid, const std::string& root) {
  StatusOr<std::string> text =
      ReadKernelFile(RootedPath(root, fmt::format("/proc/{}/mountinfo", pid)));
  if (!text.ok()) return text.status();
  return ParseTaskMounts(*text);
}

bool IsLocalFsType(std::string_view t) {
  static constexpr std::string_view kLocal[] = {
      "ext2", "ext3",  "ext4",  "xfs",  "btrfs",    "f2fs",  "zfs",     "overlay",
      "aufs", "tmpfs", "ramfs", "vfat", "squashfs", "erofs", "iso9660", "devtmpfs"};
  for (std::string_view l : kLocal) {
    if (t == l) return true;
  }
  return false;
}

std::vector<const TaskMount*> CoveringMounts(const std::vector<TaskMount>& mounts,
                                             std::string_view path) {
  std::vector<const TaskMount*> out;
  for (const TaskMount& m : mounts) {
    std::string_view mp = m.mount_point;
    const bool covers =
        mp == "/" || mp == path ||
        (path.size() > mp.size() && path.substr(0, mp.size()) == mp && path[mp.size()] == '/');
    if (covers) out.push_back(&m);
  }
  return out;
}

StatusOr<std::string> ReadFileOnLocalMounts(pid_t pid, const std::string& path, bool follow_last,
                                            const std::string& root, size_t max_bytes) {
  const std::string where = fmt::format("{} in the root of pid {}", path.substr(1), pid);
  StatusOr<std::vector<TaskMount>> mounts = ReadTaskMounts(pid, root);
  // No mountinfo at all: a /proc tree laid out by a test (a real process has one; if it exited,
  // the open below fails).
  if (!mounts.ok() && mounts.status().code() == StatusCode::kNotFound) {
    mounts = std::vector<TaskMount>();
  }
  if (!mounts.ok()) return mounts.status();
  // Every mount the walk may cross must be local; the deepest one (the last listed of the
  // longest mount point: a later mount on the same point hides the earlier) is where the walk
  // continues beneath.
  std::string base = "/";
  for (const TaskMount* m : CoveringMounts(*mounts, path)) {
    if (!IsLocalFsType(m->fstype)) {
      return Status(StatusCode::kUnavailable,
                    fmt::format("{}: not read: {} is a {} mount (only local file systems are "
                                "read: a workload's file server may never answer)",
                                where, m->mount_point, m->fstype));
    }
    if (m->mount_point.size() >= base.size()) base = m->mount_point;
  }
  const std::string root_path = RootedPath(root, fmt::format("/proc/{}/root", pid));
  const std::string rest = base == path ? "" : path.substr(base == "/" ? 1 : base.size() + 1);
  auto read = [root_path, base, rest, follow_last, max_bytes, where]() -> StatusOr<std::string> {
    Fd dir{::open(root_path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC)};
    if (dir.fd < 0) return Errno(root_path, errno);
    const uint64_t rd = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
    const uint64_t no_links = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    auto open_failed = [&where](int err) -> Status {
      if (err == ENOSYS || err == E2BIG) {
        return Status(StatusCode::kUnavailable,
                      fmt::format("{}: not read: the kernel lacks openat2 (Linux 5.6)", where));
      }
      return Errno(where, err);
    };
    Fd file;
    if (rest.empty()) {  // the file is a mount point itself (the runtime's etc/hostname)
      file.fd = static_cast<int>(OpenAt2(dir.fd, base.substr(1), rd | O_NOFOLLOW, no_links));
    } else {
      Fd mount{base == "/" ? ::dup(dir.fd)
                           : static_cast<int>(OpenAt2(dir.fd, base.substr(1),
                                                      O_PATH | O_DIRECTORY | O_CLOEXEC, no_links))};
      if (mount.fd < 0) return open_failed(errno);
      file.fd =
          static_cast<int>(OpenAt2(mount.fd, rest, rd | (follow_last ? 0 : O_NOFOLLOW),
                                   RESOLVE_BENEATH | RESOLVE_NO_XDEV | RESOLVE_NO_MAGICLINKS));
    }
    if (file.fd < 0) return open_failed(errno);
    struct stat st;
    if (::fstat(file.fd, &st) != 0) return Errno(where, errno);
    if (!S_ISREG(st.st_mode)) return InvalidInput("{}: not a regular file", where);
    if (!(st.st_mode & S_IROTH)) {
      return InvalidInput("{}: not readable by every user (mode {:o}, owner {}): not published",
                          where, st.st_mode & 07777, st.st_uid);
    }
    std::string out;
    char buf[512];
    for (;;) {
      const ssize_t n = ::read(file.fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return Errno(where, errno);
      if (n == 0) break;
      out.append(buf, static_cast<size_t>(n));
      if (out.size() > max_bytes) return InvalidInput("{}: larger than {} bytes", where, max_bytes);
    }
    return out;
  };
  return BoundedRead(std::move(read), std::chrono::milliseconds(500), where);
}

StatusOr<bool> MountNsOwnedByNode(pid_t pid, const std::string& root) {
  auto owner_ino = [&](const std::string& ns_file, bool owner) -> StatusOr<ino_t> {
    Fd ns{::open(ns_file.c_str(), O_RDONLY | O_CLOEXEC)};
    if (ns.fd < 0) return Errno(ns_file, errno);
    Fd user{owner ? ::ioctl(ns.fd, NS_GET_USERNS) : ::dup(ns.fd)};
    if (user.fd < 0) return Errno(ns_file + " (NS_GET_USERNS)", errno);
    struct stat st;
    if (::fstat(user.fd, &st) != 0) return Errno(ns_file, errno);
    return st.st_ino;
  };
  StatusOr<ino_t> node = owner_ino(RootedPath(root, "/proc/1/ns/user"), false);
  // pid 1 out of reach (a sandbox, no CAP_SYS_PTRACE over it): our own user namespace, which in
  // the DaemonSet (no hostUsers: false for the agent) is the node's.
  if (!node.ok()) node = owner_ino("/proc/self/ns/user", false);
  if (!node.ok()) return node.status();
  StatusOr<ino_t> theirs = owner_ino(RootedPath(root, fmt::format("/proc/{}/ns/mnt", pid)), true);
  if (!theirs.ok()) return theirs.status();
  return *node == *theirs;
}

StatusOr<std::string> FdFsType(pid_t pid, int fd, const std::string& root) {
  const std::string info = RootedPath(root, fmt::format("/proc/{}/fdinfo/{}", pid, fd));
  StatusOr<std::string> text = ReadKernelFile(info, 1 << 16);
  if (!text.ok()) return text.status();
  const size_t at = text->find("mnt_id:");
  if (at == std::string::npos) return InvalidInput("{}: no mnt_id", info);
  const int mnt_id = std::atoi(text->c_str() + at + 7);
  // A mount outside the task's root (a chroot) is not in its mountinfo: then the node's (pid 1)
  // is looked at, mount IDs being unique on the node.
  for (pid_t p : {pid, pid_t{1}}) {
    StatusOr<std::vector<TaskMount>> mounts = ReadTaskMounts(p, root);
    if (!mounts.ok()) return mounts.status();
    for (const TaskMount& m : *mounts) {
      if (m.id == mnt_id) return m.fstype;
    }
  }
  return InvalidInput("{}: mount {} is in neither the task's nor the node's mountinfo", info,
                      mnt_id);
}

}  // namespace tfdiag
