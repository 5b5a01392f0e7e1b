// Issue 32 item 13: YAML aliases are bounded by the bytes they copy, not only by nodes. One 1 MiB
// scalar aliased 1,000 times made `analyze` hold 3 GB for 45 s and `fix` run past 2 minutes;
// 5,000 times ended in bad_alloc. Through the built tfdiag: rc 2 naming the alias's line and
// column and the cap, quickly and in bounded memory (peak RSS of tfdiag from GNU time), and
// anchors used within the cap still give the right result.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "collectors/k8s/yaml_tree.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

// A TFJob whose PS container lists `aliases` copies of the anchored scalar `&b` (`mib` MiB of
// 'x') in its args; the PS has no CPU settings, so `fix --cpus 2` has something to change.
std::string AliasedJob(int aliases, size_t bytes, const std::string& name = "j") {
  std::string t = "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata:\n  name: " + name +
                  "\n  annotations:\n    big: &b " + std::string(bytes, 'x') +
                  "\nspec:\n  tfReplicaSpecs:\n    PS:\n      replicas: 1\n      template:\n"
                  "        spec:\n          containers:\n          - name: tensorflow\n"
                  "            image: tf\n            args: [";
  for (int i = 0; i < aliases; ++i) t += i ? ", *b" : "*b";
  return t + "]\n";
}

struct Child {
  int exit_code = -1;  // -signal when killed
  double seconds = 0;
  long peak_rss_kb = 0;
  std::string err;
};

// Runs tfdiag with `args`, stdout to `out` and stderr to a file, killed after `limit_s` seconds;
// the exit code, wall time and tfdiag's own peak RSS. The peak comes from GNU time (its wait4 of
// a process it forked itself), not from this process's wait4: a child forked from this test
// process starts as a copy of it, and Linux keeps that copy's high-water mark across exec, so in
// one gtest process that had run the whole suite (241 MB) the check read the suite's memory, not
// tfdiag's.
Child RunLimited(const std::vector<std::string>& args, const std::string& out,
                 const std::string& err, int limit_s) {
  Child c;
  const std::string rss = out + ".rss";
  auto start = std::chrono::steady_clock::now();
  std::fflush(stdout);  // or the child flushes this process's buffered output again
  pid_t pid = fork();
  if (pid == 0) {
    if (!freopen(out.c_str(), "w", stdout) || !freopen(err.c_str(), "w", stderr)) _exit(127);
    std::vector<std::string> a = {
        "/usr/bin/time",         "-f",         "%M", "-o", rss, "timeout", "-s", "KILL",
        std::to_string(limit_s), TFDIAG_BINARY};
    a.insert(a.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& x : a) argv.push_back(x.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  if (pid > 0 && waitpid(pid, &status, 0) == pid) {
    const int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    c.exit_code = rc > 128 ? -(rc - 128) : rc;  // timeout's 137: killed
  }
  c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  c.err = ReadFile(err);
  // GNU time's file: "Command exited with non-zero status N" or "... terminated by signal N"
  // before the figure, which is the last line (KiB).
  const std::string r = ReadFile(rss);
  const size_t nl = r.find_last_of('\n', r.size() >= 2 ? r.size() - 2 : 0);
  c.peak_rss_kb = std::atol(r.c_str() + (nl == std::string::npos ? 0 : nl + 1));
  EXPECT_GT(c.peak_rss_kb, 0) << "GNU time gave no peak RSS: " << r;
  return c;
}

// The shapes: 1,000 and 5,000 aliases of a 1 MiB scalar stop at the cap, in both
// commands, with the alias's position and the cap in the message.
TEST(YamlAliasBytesE2e, LargeScalarAliasedManyTimesStopsAtTheCap) {
  TempDir dir;
  for (int n : {1000, 5000}) {
    const std::string file = dir.File("alias" + std::to_string(n) + ".yaml");
    WriteFile(file, AliasedJob(n, size_t{1} << 20));
    for (const std::string cmd : {"analyze", "fix"}) {
      Child c = RunLimited({cmd, file}, dir.File("out"), dir.File("err"), 60);
      EXPECT_EQ(c.exit_code, 2) << cmd << " " << n << ": " << c.err.substr(0, 500);
      // The first alias past 16 MiB is the 16th on line 16 (each costs 1 MiB plus a node).
      EXPECT_NE(c.err.find(file + ": line 16, column "), std::string::npos) << c.err;
      EXPECT_NE(c.err.find("16777216 bytes (16 MiB, the cap on alias expansion)"),
                std::string::npos)
          << c.err;
      EXPECT_LT(c.peak_rss_kb, 200 * 1024) << cmd << " " << n << " (KiB)";
      EXPECT_LT(c.seconds, 30.0) << cmd << " " << n;
      std::printf("%s, 1 MiB aliased %d times: rc %d, %.2f s, peak RSS %ld KiB\n", cmd.c_str(), n,
                  c.exit_code, c.seconds, c.peak_rss_kb);
    }
  }
}

// Within the cap the aliases are expanded as before: `analyze` reads the job, and the manifest
// `fix` writes reads back with every copy (fix edits the text in place, so the anchor and its
// aliases stay as written), in bounded memory.
TEST(YamlAliasBytesE2e, AliasesWithinTheCapAreExpanded) {
  TempDir dir;
  const std::string file = dir.File("alias10.yaml");
  WriteFile(file, AliasedJob(10, size_t{1} << 20));
  Child a =
      RunLimited({"analyze", "--format", "json", file}, dir.File("a.json"), dir.File("err"), 60);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_NE(ReadFile(dir.File("a.json")).find("\"cpu-qos\""), std::string::npos);
  Child f = RunLimited({"fix", "--cpus", "2", file}, dir.File("fixed.yaml"), dir.File("err"), 60);
  ASSERT_EQ(f.exit_code, 0) << f.err;
  const std::string fixed = ReadFile(dir.File("fixed.yaml"));
  EXPECT_GE(fixed.size(), size_t{1} << 20);  // the anchored scalar, its aliases kept
  EXPECT_NE(fixed.find("OMP_NUM_THREADS"), std::string::npos);
  YamlStream back(fixed, "fixed.yaml");
  std::unique_ptr<YamlNode> doc;
  StatusOr<bool> more = back.Next(&doc);
  ASSERT_TRUE(more.ok()) << more.status().message();
  ASSERT_TRUE(*more);
  const YamlNode* c = &doc->Find("spec")
                           ->Find("tfReplicaSpecs")
                           ->Find("PS")
                           ->Find("template")
                           ->Find("spec")
                           ->Find("containers")
                           ->Item(0);
  ASSERT_EQ(c->Find("args")->size(), 10u);
  EXPECT_EQ(c->Find("args")->Item(9).value.size(), size_t{1} << 20);
  for (const Child& c : {a, f}) EXPECT_LT(c.peak_rss_kb, 300 * 1024) << "KiB";
  std::printf("within the cap: analyze %.2f s %ld KiB, fix %.2f s %ld KiB\n", a.seconds,
              a.peak_rss_kb, f.seconds, f.peak_rss_kb);
}

// The cap is over the whole stream: 100 documents, each within any per-document bound (a
// 200 KB scalar aliased 10 times), would make `fix` write 200 MB; it stops at 16 MiB instead.
TEST(YamlAliasBytesE2e, CapCoversTheWholeStream) {
  TempDir dir;
  std::string t;
  for (int i = 0; i < 100; ++i) t += "---\n" + AliasedJob(10, 200000, "j" + std::to_string(i));
  const std::string file = dir.File("docs.yaml");
  WriteFile(file, t);
  for (const std::string cmd : {"analyze", "fix"}) {
    Child c = RunLimited({cmd, file}, dir.File("out"), dir.File("err"), 60);
    EXPECT_EQ(c.exit_code, 2) << cmd << ": " << c.err.substr(0, 500);
    EXPECT_NE(c.err.find("the cap on alias expansion"), std::string::npos) << c.err;
    EXPECT_LT(c.peak_rss_kb, 200 * 1024) << cmd << " (KiB)";
  }
  // The same stream parsed directly stops in the 9th document (8 x 2 MB fit in 16 MiB).
  YamlStream s(t, "docs.yaml");
  std::unique_ptr<YamlNode> doc;
  int read = 0;
  StatusOr<bool> more = true;
  while ((more = s.Next(&doc)).ok() && *more) ++read;
  ASSERT_FALSE(more.ok());
  EXPECT_EQ(read, 8);
}

}  // namespace
}  // namespace tfdiag::test
