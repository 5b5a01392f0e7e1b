// fuse_hang ROOT: a FUSE file system that never answers, mounted on ROOT/etc in a mount namespace
// of its own, with a "task" in it: for tests of the node agent (tests/agent_tenant_test.cc).
// Speaks the kernel's FUSE protocol on /dev/fuse directly (<linux/fuse.h>): it answers FUSE_INIT,
// then reads every other request and never replies, so a process that looks anything up under
// ROOT/etc waits, in D state once the request was read, until this program dies (the kernel then
// aborts the connection). The task is a forked child that chroots into ROOT and blocks reading
// stdin; it inherits this program's environment (TF_CONFIG). Prints "ready <task pid>\n" once
// both are in place. Needs root (CAP_SYS_ADMIN). Exit: 2 on a set-up error (with the reason).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <unistd.h>

static int Fail(const char* what) {
  fprintf(stderr, "fuse_hang: %s: %s\n", what, strerror(errno));
  return 2;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: fuse_hang ROOT\n");
    return 2;
  }
  char etc[4096];
  snprintf(etc, sizeof etc, "%s/etc", argv[1]);
  if (unshare(CLONE_NEWNS) != 0) return Fail("unshare(CLONE_NEWNS)");
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) return Fail("mount --make-rprivate");
  const int fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
  if (fd < 0) return Fail("/dev/fuse");
  char opts[256];
  snprintf(opts, sizeof opts, "fd=%d,rootmode=40755,user_id=0,group_id=0,allow_other", fd);
  if (mount("fuse_hang", etc, "fuse", MS_NOSUID | MS_NODEV, opts) != 0) return Fail("mount fuse");
  int ready[2];
  if (pipe(ready) != 0) return Fail("pipe");
  const pid_t task = fork();
  if (task < 0) return Fail("fork");
  if (task == 0) {
    close(fd);
    close(ready[0]);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (chroot(argv[1]) != 0 || chdir("/") != 0) _exit(3);
    (void)!write(ready[1], "x", 1);
    close(ready[1]);
    char c;
    (void)!read(0, &c, 1);
    _exit(0);
  }
  close(ready[1]);
  char c;
  if (read(ready[0], &c, 1) != 1) return Fail("task chroot");
  close(ready[0]);
  static char buf[FUSE_MIN_READ_BUFFER + (1 << 20)];
  int announced = 0;
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == ENOENT)) continue;
    if (n < (ssize_t)sizeof(struct fuse_in_header)) return n < 0 ? Fail("read /dev/fuse") : 2;
    const struct fuse_in_header* in = (const struct fuse_in_header*)buf;
    if (in->opcode == FUSE_INIT) {
      struct {
        struct fuse_out_header h;
        struct fuse_init_out o;
      } reply;
      memset(&reply, 0, sizeof reply);
      reply.h.len = sizeof reply;
      reply.h.unique = in->unique;
      reply.o.major = FUSE_KERNEL_VERSION;
      reply.o.minor = FUSE_KERNEL_MINOR_VERSION;
      reply.o.max_readahead = 4096;
      reply.o.max_background = 16;
      reply.o.congestion_threshold = 12;
      reply.o.max_write = 4096;
      reply.o.time_gran = 1;
      if (write(fd, &reply, sizeof reply) != (ssize_t)sizeof reply) return Fail("FUSE_INIT reply");
      if (!announced) {
        printf("ready %d\n", (int)task);
        fflush(stdout);
        announced = 1;
      }
    }
    // Every other request: read, never answered.
  }
}
