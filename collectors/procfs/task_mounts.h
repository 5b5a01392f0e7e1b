// What a task's mount namespace looks like, for reading the few files of a workload that the
// agent needs (its pod name and namespace, its step counter) without letting the workload choose
// what is read or make the read hang:
//   - the mounts the task sees (/proc/PID/mountinfo, proc(5)): a file is read only when every
//     mount its path crosses is a local file system (IsLocalFsType): never FUSE, NFS, CIFS or
//     9p, whose server a tenant may run and never answer (a thread of ours would wait in D state,
//     unkillable, and keep the agent from exiting);
//   - who made the task's mount namespace: one owned by a user namespace other than the node's
//     was made by the workload itself (unshare -rm), which may bind-mount any file it can look
//     up (a root-only one included) over its etc/hostname; files there are not trusted.
// Thread-safety: reentrant.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace tfdiag {

// One line of /proc/PID/mountinfo.
struct TaskMount {
  int id = -1;              // field 1: mount ID (as /proc/PID/fdinfo/N's mnt_id)
  std::string mount_point;  // field 5, relative to the task's root, octal escapes decoded
  std::string fstype;       // after " - ": "ext4", "tmpfs", "fuse.sshfs"
};

// Parses mountinfo text. Lines without the " - " separator are skipped.
std::vector<TaskMount> ParseTaskMounts(std::string_view text);
// /proc/PID/mountinfo under `root`. Errors: as ReadKernelFile (kNotFound: the task exited).
StatusOr<std::vector<TaskMount>> ReadTaskMounts(pid_t pid, const std::string& root = "/");

// True for file systems the kernel serves from local storage or memory, where a read cannot wait
// on a process: ext2/3/4, xfs, btrfs, f2fs, zfs, overlay, aufs, tmpfs, ramfs, squashfs, erofs,
// vfat, iso9660. FUSE, NFS, CIFS/SMB, 9p, ceph and anything unknown: false.
bool IsLocalFsType(std::string_view fstype);

// The mounts whose mount point is `path` or one of its parent directories (component-wise:
// "/etc" covers "/etc/hostname", "/et" does not), in mountinfo order.
std::vector<const TaskMount*> CoveringMounts(const std::vector<TaskMount>& mounts,
                                             std::string_view path);

// Reads absolute `path` ("/etc/hostname") inside process `pid`'s root, crossing only mounts that
// mountinfo lists as local (IsLocalFsType): the deepest covering mount's mount point is opened
// (RESOLVE_IN_ROOT, no symlink at all: a mount point's path is canonical), and the rest of the
// path is resolved beneath it without leaving that mount (RESOLVE_BENEATH | RESOLVE_NO_XDEV, so
// a symlink such as the kubelet's ..data/namespace works, one to "/" or into another mount does
// not). The last component is followed only with `follow_last`. The file must be a regular file
// that any user may read (mode o+r: the agent never publishes what the workload itself could
// not read) of at most `max_bytes`. The read runs under BoundedRead. Errors: kUnavailable (a
// non-local mount on the path, naming its type; the kernel lacks openat2), kInvalidInput (not a
// regular file, not world-readable, a symlink, larger than max_bytes), kNotFound, kIo.
StatusOr<std::string> ReadFileOnLocalMounts(pid_t pid, const std::string& path, bool follow_last,
                                            const std::string& root, size_t max_bytes);

// Whether the mount namespace of `pid` is owned by the node's user namespace (that of pid 1 under
// `root`, else when pid 1's cannot be opened our own): ioctl NS_GET_USERNS on /proc/PID/ns/mnt
// (ioctl_ns(2)). False: the workload made its own mount namespace in a user namespace of its own
// (or the pod runs with hostUsers: false). Errors: kNotFound (exited), kUnavailable (no rights to
// the namespace files).
StatusOr<bool> MountNsOwnedByNode(pid_t pid, const std::string& root = "/");

// The type of the file system holding the task's open file `fd` (the mount of
// /proc/PID/fdinfo/FD's mnt_id, looked up in the task's mountinfo, else pid 1's), without
// touching the file. Errors: kNotFound, kInvalidInput (the mount is listed in neither).
StatusOr<std::string> FdFsType(pid_t pid, int fd, const std::string& root = "/");

}  // namespace tfdiag
