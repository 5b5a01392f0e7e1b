// Issue 37 item 8: output stays valid and readable whatever a workload named. Bytes that are not
// UTF-8 (file names, TF_CONFIG, cgroup names) went raw into JSON, SARIF and bundles with exit 0
// (invalid JSON); U+202E (right-to-left override) reached the text report and SARIF raw;
// `fix --in-place` followed a user's symlink and rewrote a root-only manifest.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "core/utf8.h"
#include "tests/tenant.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

const std::string kRlo = "\xE2\x80\xAE";  // U+202E RIGHT-TO-LEFT OVERRIDE

// Strict JSON: RapidJSON with encoding validation (RFC 8259 section 8.1).
bool StrictJson(const std::string& s) {
  rapidjson::Document d;
  d.Parse<rapidjson::kParseValidateEncodingFlag>(s.c_str());
  return !d.HasParseError();
}

// A trace whose file name holds a byte that is not UTF-8 and a right-to-left override: JSON and
// SARIF are valid UTF-8 (U+FFFD in its place), the text report shows both escaped.
TEST(HostileOutput, FileNameNotUtf8AndBidiInEveryFormat) {
  TempDir dir;
  const std::string name = dir.File("hot\xff" + kRlo + "gpj.tf1.json.gz");
  ASSERT_EQ(RunShell("cp '" + std::string(TFDIAG_SOURCE_DIR) + "/samples/hot-ps.tf1.json.gz' '" +
                     name + "'")
                .exit_code,
            0);
  RunResult json = RunTfdiag("analyze --no-progress -f json '" + name + "'");
  ASSERT_LT(json.exit_code, 2) << json.err;
  EXPECT_TRUE(IsValidUtf8(json.out));
  EXPECT_TRUE(StrictJson(json.out)) << json.out.substr(0, 400);
  EXPECT_TRUE(Contains(json.out, "hot\xEF\xBF\xBD")) << "U+FFFD where 0xff was";

  RunResult sarif = RunTfdiag("analyze --no-progress -f sarif '" + name + "'");
  ASSERT_LT(sarif.exit_code, 2) << sarif.err;
  EXPECT_TRUE(StrictJson(sarif.out)) << sarif.out.substr(0, 400);
  // No raw bidirectional control anywhere in either document (issue 48): JSON's \u202e escape
  // instead, the same string once parsed.
  EXPECT_FALSE(Contains(json.out, kRlo)) << "a raw U+202E in the JSON";
  EXPECT_FALSE(Contains(sarif.out, kRlo)) << "a raw U+202E in the SARIF";
  EXPECT_TRUE(Contains(json.out, "\\u202e")) << json.out.substr(0, 1500);

  RunResult text = RunTfdiag("analyze --no-progress '" + name + "'");
  ASSERT_LT(text.exit_code, 2) << text.err;
  EXPECT_FALSE(Contains(text.out, kRlo)) << "a raw U+202E in the text report";
  EXPECT_FALSE(Contains(text.out, "\xff"));
  EXPECT_TRUE(Contains(text.out, "hot\\xff\\u202egpj")) << text.out.substr(0, 1500);
}

// A manifest whose object names carry U+202E: SARIF message text has it escaped, never raw.
TEST(HostileOutput, BidiInManifestNamesIsEscapedInSarifMessages) {
  TempDir dir;
  const std::string m = dir.File("job.yaml");
  WriteFile(m, "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata:\n  name: \"evil" + kRlo +
                   "gpj\"\nspec:\n  tfReplicaSpecs:\n    PS:\n      replicas: 2\n      template:\n"
                   "        spec:\n          containers:\n          - name: tensorflow\n"
                   "            image: tf:1.15\n    Worker:\n      replicas: 4\n      template:\n"
                   "        spec:\n          containers:\n          - name: tensorflow\n"
                   "            image: tf:1.15\n");
  RunResult sarif = RunTfdiag("analyze --no-progress -f sarif " + m);
  ASSERT_LT(sarif.exit_code, 2) << sarif.err;
  rapidjson::Document d;
  d.Parse(sarif.out.c_str());
  ASSERT_TRUE(d.IsObject()) << sarif.out.substr(0, 400);
  const auto& results = d["runs"][0]["results"];
  ASSERT_GT(results.Size(), 0u) << sarif.out.substr(0, 2000);
  bool named = false;
  for (const auto& r : results.GetArray()) {
    const std::string text = r["message"]["text"].GetString();
    EXPECT_FALSE(Contains(text, kRlo)) << text;
    named |= Contains(text, "evil\\u202egpj");
  }
  EXPECT_TRUE(named) << sarif.out.substr(0, 3000);
  // Nowhere raw: not in the suggested fixes (whose inserted text carries the name) either.
  EXPECT_FALSE(Contains(sarif.out, kRlo)) << sarif.out.substr(0, 3000);
  EXPECT_TRUE(Contains(sarif.out, "\"fixes\"")) << "a suggested fix";
  RunResult text = RunTfdiag("analyze --no-progress " + m);
  EXPECT_FALSE(Contains(text.out, kRlo)) << text.out.substr(0, 2000);
}

// A tenant's TF_CONFIG with 0xff in its task type: the bundle attach writes is valid UTF-8.
TEST(HostileOutput, AttachBundleOfTenantWithNonUtf8TfConfigIsValidJson) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to start the tenant as another user";
  if (access("/usr/bin/setpriv", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/setpriv";
  const std::string env_tf = "TF_CONFIG={\"cluster\":{\"ps\":[\"127.0.0.1:2922\"],\"w\xff" + kRlo +
                             "\":[\"127.0.0.1:2923\"]},\"task\":{\"type\":\"w\xff" + kRlo +
                             "\",\"index\":0}}";
  TenantShell tenant({"PATH=/usr/bin:/bin", env_tf});
  const pid_t pid = tenant.pid();
  ASSERT_GT(pid, 0);
  TempDir dir;
  RunResult r = RunTfdiag("attach --no-bpf --duration 1s --interval 200ms --pid " +
                          std::to_string(pid) + " -o " + dir.File("b.tfdiag"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string bundle = ReadFile(dir.File("b.tfdiag"));
  EXPECT_TRUE(IsValidUtf8(bundle));
  EXPECT_TRUE(StrictJson(bundle)) << bundle.substr(0, 600);
  EXPECT_TRUE(Contains(bundle, "w\xEF\xBF\xBD")) << bundle.substr(0, 600);
  EXPECT_FALSE(Contains(r.err, kRlo)) << r.err;
}

// `fix --in-place` as root on a tenant's symlink to a root-only manifest: refused, the file
// untouched; root's own link is still edited through (the documented behaviour).
TEST(HostileOutput, FixInPlaceRefusesATenantsSymlinkToARootOnlyFile) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (the victim file is root's)";
  if (access("/usr/bin/setpriv", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/setpriv";
  TempDir dir;
  const std::string manifest =
      "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata:\n  name: j\nspec:\n  tfReplicaSpecs:\n"
      "    PS:\n      replicas: 2\n      template:\n        spec:\n          containers:\n"
      "          - name: tensorflow\n            image: tf:1.15\n            resources:\n"
      "              requests: {cpu: 1}\n              limits: {cpu: 2}\n";
  const std::string secret = dir.File("root-only.yaml");
  WriteFile(secret, manifest);
  ASSERT_EQ(chmod(secret.c_str(), 0600), 0);
  const std::string tenant_dir = dir.File("tenant");
  ASSERT_EQ(mkdir(tenant_dir.c_str(), 0755), 0);
  ASSERT_EQ(chown(tenant_dir.c_str(), 65534, 65534), 0);
  ASSERT_EQ(chmod(dir.path().c_str(), 0755), 0);
  // The tenant plants the link in its own (not sticky) directory.
  RunResult ln = RunShell("/usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups ln -s " +
                          secret + " " + tenant_dir + "/job.yaml");
  ASSERT_EQ(ln.exit_code, 0) << ln.err;
  RunResult r = RunTfdiag("fix --in-place --cpus 2 " + tenant_dir + "/job.yaml");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(Contains(r.err, "refusing to follow a symlink owned by uid 65534")) << r.err;
  EXPECT_EQ(ReadFile(secret), manifest);

  const std::string own = dir.File("own.yaml");
  ASSERT_EQ(symlink(secret.c_str(), own.c_str()), 0);
  r = RunTfdiag("fix --in-place --cpus 2 " + own);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(ReadFile(secret), manifest) << "root's own link is edited through";
  struct stat st {};
  ASSERT_EQ(lstat(own.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
}

}  // namespace
}  // namespace tfdiag::test
