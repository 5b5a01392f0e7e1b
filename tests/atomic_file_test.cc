// Issue 15, files tfdiag writes (as root on nodes): the temporary output file is created with
// mkstemp in the target's directory, so a symlink planted where the old "<path>.tmp.<pid>" went
// is never followed; it is not readable by others while written; `fix --in-place` keeps the
// file's mode, owner and group and rewrites a symlink's target (the link stays); a symlink in a
// sticky world-writable directory owned by someone else is refused; temporaries left by a killed
// run are removed by the next one.
#include "core/atomic_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

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
  EXPECT_NE(r.err.find("refusing to follow a symlink owned by uid 65534"), std::string::npos)
      << r.err;
  EXPECT_EQ(ReadFile(dir.File("shadow")), "root:x:0:0\n");
  // Our own symlink there is followed (the user named it).
  ASSERT_EQ(::lchown(planted.c_str(), 0, 0), 0);
  WriteFile(dir.File("mine.json"), "");
  ASSERT_EQ(::unlink(planted.c_str()), 0);
  ASSERT_EQ(::symlink(dir.File("mine.json").c_str(), planted.c_str()), 0);
  r = RunTfdiag("analyze -f json -o '" + planted + "' '" + dir.File("t.json") + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(ReadFile(dir.File("mine.json")).find("\"findings\""), std::string::npos);
}

}  // namespace
}  // namespace tfdiag::test
