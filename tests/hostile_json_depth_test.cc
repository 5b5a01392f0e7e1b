// Issue 37 item 1: a TF_CONFIG (or rules file) of 131,000 '[' (under the kernel's 128 KiB limit
// for one environment variable) crashed attach, the agent, `analyze --tf-config` and `--rules`
// with SIGSEGV: RapidJSON's recursive DOM parser takes one stack frame per level. Every JSON entry
// point now parses iteratively with a depth limit and names the offset.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "collectors/discovery/discovery.h"
#include "collectors/discovery/tf_config.h"
#include "core/json_dom.h"
#include "rules/rule_set.h"
#include "tests/tenant.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

const std::string& DeepBrackets() {
  static const std::string s(131000, '[');
  return s;
}

TEST(HostileJsonDepth, TfConfigOf131000BracketsIsAnErrorNotACrash) {
  StatusOr<TfTaskConfig> c = ParseTfConfig(DeepBrackets());
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidInput);
  EXPECT_TRUE(Contains(c.status().message(), "TF_CONFIG: byte 64: nesting deeper than 64"))
      << c.status().message();
  // Deep objects too, and a deep value under a known key.
  std::string objects;
  for (int i = 0; i < 60000; ++i) objects += "{\"a\":";
  c = ParseTfConfig(objects);
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(Contains(c.status().message(), "nesting deeper than")) << c.status().message();
  // A normal TF_CONFIG still parses.
  c = ParseTfConfig(
      R"({"cluster":{"ps":["a:1"],"worker":["b:1"]},"task":{"type":"ps","index":0}})");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->job, "ps");
}

TEST(HostileJsonDepth, ParseJsonTextLimitsDepthAndNamesTheOffset) {
  rapidjson::Document d;
  Status s = ParseJsonText("x.json", "[[[1]]]", &d, 3);
  EXPECT_TRUE(s.ok()) << s.message();
  s = ParseJsonText("x.json", "[[[[1]]]]", &d, 3);
  EXPECT_EQ(s.message(), "x.json: byte 3: nesting deeper than 3 arrays and objects");
  s = ParseJsonText("x.json", std::string_view("{}\0{", 4), &d);
  EXPECT_EQ(s.message(), "x.json: byte 2: a NUL byte; expected JSON text");
  s = ParseJsonText("x.json", "{\"a\":}", &d);
  EXPECT_TRUE(Contains(s.message(), "x.json: byte 5: Invalid value.")) << s.message();
}

TEST(HostileJsonDepth, RulesFileAndTfConfigArgumentEndToEnd) {
  TempDir dir;
  WriteFile(dir.File("deep.rules.json"), "{\"rules\":" + DeepBrackets());
  const std::string trace = std::string(TFDIAG_SOURCE_DIR) + "/samples/hot-ps.tf1.json.gz";
  RunResult r = RunTfdiag("rules list --rules " + dir.File("deep.rules.json"));
  EXPECT_EQ(r.exit_code, 2) << r.err;  // main's exit code for bad input
  // The object is level 1: the 64th '[' (byte 9 + 63) opens level 65.
  EXPECT_TRUE(Contains(r.err, "deep.rules.json: byte 72: nesting deeper than 64")) << r.err;

  WriteFile(dir.File("tf_config.json"), DeepBrackets());
  r = RunTfdiag("analyze --tf-config " + dir.File("tf_config.json") + " " + trace);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(Contains(r.err, "nesting deeper than 64")) << r.err;
}

// The attack as a tenant mounts it: a process of another user whose TF_CONFIG is 131,000 '['.
// `attach` reads it as root and must neither crash nor stop watching the node.
TEST(HostileJsonDepth, AttachBesideTenantWithDeepTfConfig) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to start the tenant as another user";
  if (access("/usr/bin/setpriv", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/setpriv";
  const std::string env_tf = "TF_CONFIG=" + DeepBrackets();
  TenantShell tenant({"PATH=/usr/bin:/bin", env_tf});
  const pid_t pid = tenant.pid();
  ASSERT_GT(pid, 0);
  TempDir dir;
  RunResult r = RunTfdiag("attach --no-bpf --duration 1s --interval 200ms --pid " +
                          std::to_string(pid) + " -o " + dir.File("b.tfdiag"));
  // The discovery library directly (what the agent's rescan calls): a warning, no task.
  DiscoveryOptions o;
  o.pids = {pid};
  StatusOr<DiscoveryResult> d = DiscoverTfTasks(o);
  // Before: killed by SIGSEGV (the shell reports 139).
  EXPECT_LT(r.exit_code, 128) << r.err;
  EXPECT_TRUE(Contains(r.err, "nesting deeper than 64")) << r.err;
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_TRUE(d->tasks.empty());
  std::string warnings;
  for (const std::string& w : d->warnings) warnings += w + "\n";
  EXPECT_TRUE(Contains(warnings, "TF_CONFIG: byte 64: nesting deeper than 64")) << warnings;
}

}  // namespace
}  // namespace tfdiag::test
