// Issue 15, files tfdiag writes (as root on nodes): the temporary output file is created with
// mkstemp in the target's directory, so a symlink planted where the old "<path>.tmp.<pid>" went
// is never followed; it is not readable by others while written; `fix --in-place` keeps the
// file's mode, owner and group and rewrites a symlink's target (the link stays); a symlink in a
// sticky world-writable directory owned by someone else is refused; temporaries left by a killed
// run are removed by the next one.
// Issue 32 item 12, `-o` as root: a planted file in a sticky directory is replaced by a file of
// ours with the umask mode (not the planter's owner and 0666); without root, another user's file
// there is refused by name; a planted FIFO neither receives the report nor blocks; a symlink at the
// -o path is never written through; `fix --in-place` keeps xattrs (ACLs, user.*, trusted.*).
#include "core/atomic_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cstring>
#include <functional>

#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

constexpr uid_t kOtherUid = 65534;  // nobody

const char* kJob = R"(apiVersion: kubeflow.org/v1
kind: TFJob
metadata: {name: secret-job}
spec:
  tfReplicaSpecs:
    PS:
      replicas: 2
      template:
        spec:
          containers:
          - name: tensorflow
            env: [{name: AWS_SECRET_ACCESS_KEY, value: "s3cr3t"}]
            resources: {requests: {cpu: 500m, memory: 1Gi}, limits: {cpu: 1, memory: 1Gi}}
)";

struct stat Stat(const std::string& p) {
  struct stat st {};
  EXPECT_EQ(::lstat(p.c_str(), &st), 0) << p;
  return st;
}

TEST(AtomicFile, PlantedSymlinkAtTheOldTemporaryNameIsNotFollowed) {
  TempDir dir;
  WriteFile(dir.File("victim"), "root only\n");
  ::chmod(dir.File("victim").c_str(), 0600);
  // Where the old writer put its temporary: "<path>.tmp.<pid>", opened with fopen("wb").
  const std::string out = dir.File("report.txt");
  ASSERT_EQ(
      ::symlink(dir.File("victim").c_str(), (out + ".tmp." + std::to_string(::getpid())).c_str()),
      0);
  ASSERT_TRUE(WriteFileAtomically(out, "report\n").ok());
  EXPECT_EQ(ReadFile(dir.File("victim")), "root only\n");
  EXPECT_EQ(ReadFile(out), "report\n");
  EXPECT_TRUE(S_ISREG(Stat(out).st_mode));
}

TEST(AtomicFile, TemporaryIsPrivateAndNewFilesGetTheUmaskMode) {
  TempDir dir;
  AtomicFile f;
  ASSERT_TRUE(f.Open(dir.File("out.json")).ok());
  ASSERT_FALSE(f.temporary_path().empty());
  EXPECT_EQ(f.temporary_path().rfind(dir.File(".out.json.tfdiag-"), 0), 0u) << f.temporary_path();
  EXPECT_EQ(Stat(f.temporary_path()).st_mode & 07777, 0600u);
  ASSERT_TRUE(f.Write("{}").ok());
  ASSERT_TRUE(f.Commit().ok());
  mode_t mask = ::umask(0);
  ::umask(mask);
  EXPECT_EQ(Stat(dir.File("out.json")).st_mode & 07777, 0666u & ~mask);
  EXPECT_NE(::access(f.temporary_path().c_str(), F_OK), 0);
}

TEST(AtomicFile, StaleTemporariesOfDeadRunsAreRemoved) {
  TempDir dir;
  pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ASSERT_GT(child, 0);
  ::waitpid(child, nullptr, 0);  // its pid is now free: a run killed with -9
  const std::string stale = dir.File(".out.json.tfdiag-" + std::to_string(child) + "-Ab12Cd");
  const std::string live = dir.File(".out.json.tfdiag-" + std::to_string(::getppid()) + "-Ab12Cd");
  WriteFile(stale, "half");
  WriteFile(live, "being written by a running process");
  ASSERT_TRUE(WriteFileAtomically(dir.File("out.json"), "x").ok());
  EXPECT_NE(::access(stale.c_str(), F_OK), 0) << "a dead run's temporary is removed";
  EXPECT_EQ(::access(live.c_str(), F_OK), 0) << "a live run's temporary is kept";
}

TEST(AtomicFile, FixInPlaceKeepsModeOwnerAndGroupAndEditsASymlinksTarget) {
  TempDir dir;
  const std::string job = dir.File("job.yaml");
  WriteFile(job, kJob);
  ASSERT_EQ(::chmod(job.c_str(), 0600), 0);
  const bool root = ::geteuid() == 0;
  if (root) {
    ASSERT_EQ(::chown(job.c_str(), kOtherUid, kOtherUid), 0);
  }
  const struct stat before = Stat(job);
  RunResult r = RunTfdiag("fix -q --in-place '" + job + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(ReadFile(job), kJob) << "the fix changed the file";
  const struct stat after = Stat(job);
  EXPECT_EQ(after.st_mode & 07777, 0600u);
  EXPECT_EQ(after.st_uid, before.st_uid);
  EXPECT_EQ(after.st_gid, before.st_gid);
  EXPECT_NE(after.st_ino, before.st_ino) << "replaced by rename, not rewritten in place";
  // Through a symlink: the target is fixed, the link stays a link.
  WriteFile(dir.File("real.yaml"), kJob);
  ASSERT_EQ(::symlink("real.yaml", dir.File("link.yaml").c_str()), 0);
  r = RunTfdiag("fix -q --in-place '" + dir.File("link.yaml") + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(S_ISLNK(Stat(dir.File("link.yaml")).st_mode));
  EXPECT_EQ(ReadFile(dir.File("real.yaml")), ReadFile(job));
  if (!root) GTEST_SKIP() << "owner kept only checked as root (chown to uid " << kOtherUid << ")";
}

TEST(AtomicFile, SymlinkOfAnotherUserInAStickyDirectoryIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to plant a symlink owned by another uid";
  TempDir dir;
  const std::string shared = dir.File("tmp");
  ASSERT_EQ(::mkdir(shared.c_str(), 01777), 0);
  ASSERT_EQ(::chmod(shared.c_str(), 01777), 0);
  WriteFile(dir.File("shadow"), "root:x:0:0\n");
  ASSERT_EQ(::chmod(dir.File("shadow").c_str(), 0600), 0);
  const std::string planted = shared + "/report.json";
  ASSERT_EQ(::symlink(dir.File("shadow").c_str(), planted.c_str()), 0);
  ASSERT_EQ(::lchown(planted.c_str(), kOtherUid, kOtherUid), 0);
  ASSERT_EQ(RunTfdiag("simulate balanced --steps 2 -o " + dir.File("t.json")).exit_code, 0);
  RunResult r = RunTfdiag("analyze -f json -o '" + planted + "' '" + dir.File("t.json") + "'");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(planted + ": is a symbolic link; refusing to write through it"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(ReadFile(dir.File("shadow")), "root:x:0:0\n");
  // `fix --in-place` edits a symlink's target, but not through one planted by another user here.
  WriteFile(dir.File("root-job.yaml"), kJob);
  ASSERT_EQ(::unlink(planted.c_str()), 0);
  ASSERT_EQ(::symlink(dir.File("root-job.yaml").c_str(), planted.c_str()), 0);
  ASSERT_EQ(::lchown(planted.c_str(), kOtherUid, kOtherUid), 0);
  r = RunTfdiag("fix -q --in-place '" + planted + "'");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("refusing to follow a symlink owned by uid 65534"), std::string::npos)
      << r.err;
  EXPECT_EQ(ReadFile(dir.File("root-job.yaml")), kJob);
  // Our own symlink is not written through either: -o never follows its last component.
  ASSERT_EQ(::lchown(planted.c_str(), 0, 0), 0);
  WriteFile(dir.File("mine.json"), "");
  ASSERT_EQ(::unlink(planted.c_str()), 0);
  ASSERT_EQ(::symlink(dir.File("mine.json").c_str(), planted.c_str()), 0);
  r = RunTfdiag("analyze -f json -o '" + planted + "' '" + dir.File("t.json") + "'");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("is a symbolic link; refusing to write through it"), std::string::npos)
      << r.err;
  EXPECT_EQ(ReadFile(dir.File("mine.json")), "");
}

std::string Trace(const TempDir& dir) {
  const std::string t = dir.File("t.json");
  EXPECT_EQ(RunTfdiag("simulate balanced --steps 2 -o " + t).exit_code, 0);
  return t;
}

// A sticky world-writable directory like /tmp, reachable by other users.
std::string StickyDir(const TempDir& dir) {
  EXPECT_EQ(::chmod(dir.path().c_str(), 0755), 0);
  const std::string shared = dir.File("tmp");
  EXPECT_EQ(::mkdir(shared.c_str(), 01777), 0);
  EXPECT_EQ(::chmod(shared.c_str(), 01777), 0);
  return shared;
}

TEST(AtomicFile, FilePlantedInAStickyDirectoryIsReplacedByOneOfOursWithTheUmaskMode) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to plant a file owned by uid " << kOtherUid;
  TempDir dir;
  const std::string shared = StickyDir(dir), trace = Trace(dir);
  const std::string planted = shared + "/report.json";
  WriteFile(planted, "planted\n");
  ASSERT_EQ(::chown(planted.c_str(), kOtherUid, kOtherUid), 0);
  ASSERT_EQ(::chmod(planted.c_str(), 0666), 0);
  const struct stat before = Stat(planted);
  RunResult r = RunTfdiag("analyze -f json -o '" + planted + "' '" + trace + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const struct stat after = Stat(planted);
  mode_t mask = ::umask(0);
  ::umask(mask);
  EXPECT_EQ(after.st_uid, 0u) << "the report is root's, not the planter's";
  EXPECT_EQ(after.st_gid, 0u);
  EXPECT_EQ(after.st_mode & 07777, 0666u & ~mask) << "not the planted 0666";
  EXPECT_NE(after.st_ino, before.st_ino) << "replaced by rename, not written into";
  EXPECT_NE(ReadFile(planted).find("\"findings\""), std::string::npos);
}

// A directory symlink planted mid-path (`-o /tmp/evil/report.json`, /tmp/evil -> a root-only
// directory) is not followed, for -o and for `fix --in-place`; one of ours there is. Before, the
// report was written into the link's target.
TEST(AtomicFile, DirectorySymlinkOfAnotherUserMidPathIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to plant a symlink owned by uid " << kOtherUid;
  TempDir dir;
  const std::string shared = StickyDir(dir), trace = Trace(dir);
  const std::string secret = dir.File("secret");
  ASSERT_EQ(::mkdir(secret.c_str(), 0700), 0);
  const std::string evil = shared + "/evil";
  ASSERT_EQ(::symlink(secret.c_str(), evil.c_str()), 0);
  ASSERT_EQ(::lchown(evil.c_str(), kOtherUid, kOtherUid), 0);
  RunResult r = RunTfdiag("analyze -f json -o '" + evil + "/report.json' '" + trace + "'");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("refusing to follow " + evil + ", a symlink owned by uid 65534"),
            std::string::npos)
      << r.err;
  EXPECT_NE(::access((secret + "/report.json").c_str(), F_OK), 0) << "written through the link";
  WriteFile(secret + "/job.yaml", kJob);
  r = RunTfdiag("fix -q --in-place '" + evil + "/job.yaml'");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(ReadFile(secret + "/job.yaml"), kJob);
  // The same link of ours (root's) is followed, as the kernel would.
  ASSERT_EQ(::lchown(evil.c_str(), 0, 0), 0);
  r = RunTfdiag("analyze -f json -o '" + evil + "/report.json' '" + trace + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(ReadFile(secret + "/report.json").find("\"findings\""), std::string::npos);
}

// Runs `fn` in a child process as uid/gid `uid`; returns what it wrote to the pipe.
std::string RunAs(uid_t uid, const std::function<std::string()>& fn) {
  int p[2];
  EXPECT_EQ(::pipe(p), 0);
  pid_t child = ::fork();
  if (child == 0) {
    ::close(p[0]);
    std::string out = ::setgid(uid) == 0 && ::setuid(uid) == 0 ? fn() : "setuid failed";
    (void)!::write(p[1], out.data(), out.size());
    ::_exit(0);
  }
  ::close(p[1]);
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::read(p[0], buf, sizeof buf)) > 0;) out.append(buf, n);
  ::close(p[0]);
  ::waitpid(child, nullptr, 0);
  return out;
}

TEST(AtomicFile, WithoutRootAnotherUsersFileInAStickyDirectoryIsRefusedByName) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to create two users' files";
  TempDir dir;
  const std::string shared = StickyDir(dir);
  const std::string planted = shared + "/report.json";
  WriteFile(planted, "planted\n");
  ASSERT_EQ(::chown(planted.c_str(), kOtherUid, kOtherUid), 0);
  ASSERT_EQ(::chmod(planted.c_str(), 0666), 0);
  const std::string err = RunAs(kOtherUid - 1, [&] {
    Status s = WriteFileAtomically(planted, "report\n");
    return s.ok() ? std::string("ok") : std::string(s.message());
  });
  EXPECT_NE(err.find("belongs to uid 65534 in the sticky directory " + shared), std::string::npos)
      << err;
  EXPECT_EQ(ReadFile(planted), "planted\n");
  // No temporary is left behind.
  RunResult ls = RunShell("ls -A '" + shared + "'");
  EXPECT_EQ(ls.out, "report.json\n");
}

TEST(AtomicFile, PlantedFifoNeitherReceivesTheReportNorBlocks) {
  TempDir dir;
  const std::string trace = Trace(dir), fifo = dir.File("report.json");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0666), 0);
  // No reader: opening it for writing would block for good (`timeout` turns that into rc 124).
  RunResult r = RunShell("timeout 20 '" + std::string(BuiltTfdiag()) + "' analyze -f json -o '" +
                         fifo + "' '" + trace + "'");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(fifo + ": is a FIFO, not a regular file"), std::string::npos) << r.err;
  // A reader waiting on it (the planter): it receives nothing.
  const int rd = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(rd, 0);
  r = RunShell("timeout 20 '" + std::string(BuiltTfdiag()) + "' analyze -f json -o '" + fifo +
               "' '" + trace + "'");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  char buf[64];
  EXPECT_LE(::read(rd, buf, sizeof buf), 0) << "the report went into the FIFO";
  ::close(rd);
  EXPECT_TRUE(S_ISFIFO(Stat(fifo).st_mode));
  // A character device is still a fine target.
  EXPECT_EQ(RunTfdiag("analyze -f json -o /dev/null '" + trace + "'").exit_code, 0);
}

TEST(AtomicFile, UsersSymlinkInTheirOwnDirectoryIsNotWrittenThrough) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to own a directory as uid " << kOtherUid;
  TempDir dir;
  ASSERT_EQ(::chmod(dir.path().c_str(), 0755), 0);
  const std::string trace = Trace(dir), victim = dir.File("root-only");
  WriteFile(victim, "secret\n");
  ASSERT_EQ(::chmod(victim.c_str(), 0600), 0);
  const std::string home = dir.File("home");
  ASSERT_EQ(::mkdir(home.c_str(), 0755), 0);
  ASSERT_EQ(::chown(home.c_str(), kOtherUid, kOtherUid), 0);
  const std::string link = home + "/report.json";
  ASSERT_EQ(::symlink(victim.c_str(), link.c_str()), 0);
  ASSERT_EQ(::lchown(link.c_str(), kOtherUid, kOtherUid), 0);
  for (const char* cmd : {"analyze -f json", "analyze"}) {
    RunResult r = RunTfdiag(std::string(cmd) + " -o '" + link + "' '" + trace + "'");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find(link + ": is a symbolic link"), std::string::npos) << r.err;
  }
  EXPECT_EQ(ReadFile(victim), "secret\n");
  EXPECT_EQ(Stat(victim).st_mode & 07777, 0600u);
  EXPECT_TRUE(S_ISLNK(Stat(link).st_mode));
}

std::string Xattr(const std::string& path, const char* name) {
  char buf[256];
  ssize_t n = ::getxattr(path.c_str(), name, buf, sizeof buf);
  return n < 0 ? "(none)" : std::string(buf, static_cast<size_t>(n));
}

TEST(AtomicFile, FixInPlaceKeepsExtendedAttributes) {
  TempDir dir;
  const std::string job = dir.File("job.yaml");
  WriteFile(job, kJob);
  ASSERT_EQ(::chmod(job.c_str(), 0640), 0);
  if (::setxattr(job.c_str(), "user.origin", "team-a", 6, 0) != 0) {
    GTEST_SKIP() << "no user xattrs on " << dir.path() << ": " << std::strerror(errno);
  }
  // A POSIX access ACL (the kernel's xattr form, linux/posix_acl_xattr.h): user::rw-,
  // user:65534:r--, group::r--, mask::r--, other::---.
  struct Entry {
    uint16_t tag, perm;
    uint32_t id;
  };
  struct {
    uint32_t version = 2;
    Entry e[5] = {
        {0x01, 6, ~0u}, {0x02, 4, kOtherUid}, {0x04, 4, ~0u}, {0x10, 4, ~0u}, {0x20, 0, ~0u}};
  } acl;
  const bool have_acl =
      ::setxattr(job.c_str(), "system.posix_acl_access", &acl, sizeof acl, 0) == 0;
  const bool root = ::geteuid() == 0;
  if (root) {
    ASSERT_EQ(::setxattr(job.c_str(), "trusted.label", "x", 1, 0), 0);
  }
  const std::string acl_before = Xattr(job, "system.posix_acl_access");
  RunResult r = RunTfdiag("fix -q --in-place '" + job + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(ReadFile(job), kJob) << "the fix changed the file";
  EXPECT_EQ(Xattr(job, "user.origin"), "team-a");
  if (have_acl) {
    EXPECT_EQ(Xattr(job, "system.posix_acl_access"), acl_before);
    EXPECT_EQ(Stat(job).st_mode & 07777, 0640u);
  }
  if (root) {
    EXPECT_EQ(Xattr(job, "trusted.label"), "x");
  }
  // An output file (-o) is new: it takes none of them.
  const std::string out = dir.File("out.yaml");
  WriteFile(out, "old");
  ASSERT_EQ(::setxattr(out.c_str(), "user.origin", "planted", 7, 0), 0);
  ASSERT_TRUE(WriteFileAtomically(out, "new").ok());
  EXPECT_EQ(Xattr(out, "user.origin"), "(none)");
  if (!have_acl) GTEST_SKIP() << "no POSIX ACLs here: only user.* checked";
}

}  // namespace
}  // namespace tfdiag::test
