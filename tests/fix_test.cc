// tfdiag fix: the fixed manifest re-analyzes clean, loads in an independent YAML parser
// (python3-yaml) with every field the fix does not own unchanged, the --patch merge patches
// rebuild the same objects, and --in-place writes atomically.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "actions/k8s_fix.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

// A job that shows ps-colocation, cpu-qos, thread-config and ps-on-gpu (2 PS, 4 workers: the
// ratio is fine, so everything left after the fix would be a fix bug).
const char* kJob = R"(# leading comment, kept
apiVersion: kubeflow.org/v1
kind: TFJob
metadata:
  name: fix-me
  labels: {team: "42", tier: batch}
spec:
  runPolicy: {cleanPodPolicy: None}
  tfReplicaSpecs:
    PS:
      replicas: 2
      template:
        metadata:
          annotations: {note: "on: yes"}
        spec:
          containers:
          - name: tensorflow
            image: "tf:1.15"
            command: [python, train.py, --port, "2222"]
            resources:
              requests: {cpu: 500m, memory: 1Gi}
              limits: {cpu: "1.5", memory: 2Gi, nvidia.com/gpu: 1}
            env:
            - {name: TF_NUM_INTRAOP_THREADS, value: "16"}
            - {name: KEEP, value: "007"}
    Worker:
      replicas: 4
      template:
        spec:
          nodeSelector: {pool: cpu}
          containers:
          - name: tensorflow
            image: "tf:1.15"
            args:
            - |
              python train.py
              --job_name=worker
            resources:
              requests: {cpu: "3", memory: 4Gi}
)";

// Python: loads original and fixed, removes what the fix owns (resources, the thread env, the
// tfdiag.io labels, PS affinity), and compares what is left. Prints OK or the difference.
const char* kCompare = R"(
import sys, yaml
a = list(yaml.safe_load_all(open(sys.argv[1])))
b = list(yaml.safe_load_all(open(sys.argv[2])))
OWN = {"TF_NUM_INTRAOP_THREADS", "TF_NUM_INTEROP_THREADS", "OMP_NUM_THREADS"}
def strip(x, orig):
    if isinstance(x, dict):
        out = {}
        for k, v in x.items():
            if k == "resources": continue
            if k == "affinity" and not (isinstance(orig, dict) and "affinity" in orig): continue
            if k in ("tfdiag.io/role", "tfdiag.io/job"): continue
            o = orig.get(k) if isinstance(orig, dict) else None
            s = strip(v, o)
            if k in ("labels", "metadata") and s == {} and o is None: continue
            if k == "env" and s == [] and o is None: continue
            out[k] = s
        return out
    if isinstance(x, list):
        items = [e for e in x if not (isinstance(e, dict) and e.get("name") in OWN)]
        o = orig if isinstance(orig, list) else []
        return [strip(e, o[i] if i < len(o) else None) for i, e in enumerate(items)]
    return x
for i, (x, y) in enumerate(zip(a, b)):
    sx, sy = strip(x, x), strip(y, x)
    if sx != sy:
        print("doc", i, "differs:\n", sx, "\n", sy); sys.exit(1)
print("OK" if len(a) == len(b) else "document count differs")
)";

bool HavePythonYaml() { return std::system("python3 -c 'import yaml' >/dev/null 2>&1") == 0; }

std::string Python(const TempDir& dir, const std::string& script, const std::string& args) {
  WriteFile(dir.File("check.py"), script);
  std::string cmd = "python3 '" + dir.File("check.py") + "' " + args + " 2>&1";
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

// The TF jobs among the real manifests in ../shared/realworld/manifests.
const char* const kRealManifests[] = {"training-operator_release-1.9_dist-mnist_tf_job_mnist.yaml",
                                      "tf-operator_v0.3_tf_job_v1alpha1.yaml",
                                      "training-operator_v1.5_estimator-API_distributed_tfjob.yaml",
                                      "dlrover_criteo_deeprec_manual_job.yaml",
                                      "kueue_sample-tfjob.yaml",
                                      "volcano_kubecon-2019_tf-example.yaml"};

TEST(Fix, FixedJobReanalyzesCleanAndKeepsEverythingElse) {
  TempDir dir;
  WriteFile(dir.File("job.yaml"), kJob);
  RunResult before = RunTfdiag("analyze --color never '" + dir.File("job.yaml") + "'");
  for (const char* rule : {"ps-colocation", "cpu-qos", "thread-config", "ps-on-gpu"})
    EXPECT_NE(before.out.find(rule), std::string::npos) << rule << "\n" << before.out;
  // --cpus 3: the worker has a CPU request and no limit; tfdiag adds a limit only when told.
  RunResult fixed = RunTfdiag("fix --cpus 3 --memory 8Gi '" + dir.File("job.yaml") + "'");
  ASSERT_EQ(fixed.exit_code, 0) << fixed.err;
  EXPECT_EQ(fixed.out.rfind("# leading comment, kept\n", 0), 0u) << fixed.out;
  WriteFile(dir.File("fixed.yaml"), fixed.out);
  RunResult after = RunTfdiag("analyze -f json '" + dir.File("fixed.yaml") + "'");
  ASSERT_EQ(after.exit_code, 0) << after.err;
  EXPECT_NE(after.out.find("\"findings\": []"), std::string::npos) << after.out << fixed.out;
  // The input is untouched without --in-place.
  EXPECT_EQ(ReadFile(dir.File("job.yaml")), kJob);
  if (!HavePythonYaml()) GTEST_SKIP() << "python3-yaml not installed (scripts/bootstrap.sh)";
  EXPECT_EQ(
      Python(dir, kCompare, "'" + dir.File("job.yaml") + "' '" + dir.File("fixed.yaml") + "'"),
      "OK\n");
  // The owned fields have their new values.
  const char* kOwned = R"(
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
ps = d["spec"]["tfReplicaSpecs"]["PS"]["template"]
c = ps["spec"]["containers"][0]
w = d["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]
env = {e["name"]: e["value"] for e in c["env"]}
print(c["resources"], env["TF_NUM_INTRAOP_THREADS"], env["OMP_NUM_THREADS"], env["KEEP"],
      ps["metadata"]["labels"], ps["spec"]["affinity"]["podAntiAffinity"]
      ["requiredDuringSchedulingIgnoredDuringExecution"][0]["topologyKey"], w["resources"])
)";
  EXPECT_EQ(
      Python(dir, kOwned, "'" + dir.File("fixed.yaml") + "'"),
      "{'requests': {'cpu': '2', 'memory': '2Gi'}, 'limits': {'cpu': '2', 'memory': '2Gi'}} "
      "2 2 007 {'tfdiag.io/role': 'ps', 'tfdiag.io/job': 'fix-me'} kubernetes.io/hostname "
      "{'requests': {'cpu': '3', 'memory': '4Gi'}, 'limits': {'cpu': '3', 'memory': '4Gi'}}\n");
}

TEST(Fix, RealManifestsFixCleanAndKeepUntouchedFields) {
  if (!SharedAvailable()) GTEST_SKIP() << "../shared not found";
  TempDir dir;
  for (const char* f : kRealManifests) {
    const std::string in = SharedRealworld(std::string("manifests/") + f);
    RunResult fixed = RunTfdiag("fix -q --cpus 4 --memory 8Gi '" + in + "'");
    ASSERT_EQ(fixed.exit_code, 0) << f << ": " << fixed.err;
    const std::string out = dir.File(f);
    WriteFile(out, fixed.out);
    RunResult after = RunTfdiag("analyze -f json '" + out + "'");
    ASSERT_EQ(after.exit_code, 0) << after.err;
    EXPECT_NE(after.out.find("\"findings\": []"), std::string::npos) << f << "\n" << after.out;
    if (HavePythonYaml()) {
      EXPECT_EQ(Python(dir, kCompare, "'" + in + "' '" + out + "'"), "OK\n") << f;
    }
  }
}

TEST(Fix, PatchRebuildsTheFixedObjects) {
  if (!HavePythonYaml()) GTEST_SKIP() << "python3-yaml not installed (scripts/bootstrap.sh)";
  TempDir dir;
  WriteFile(dir.File("job.yaml"), kJob);
  RunResult fixed = RunTfdiag("fix -q --memory 8Gi '" + dir.File("job.yaml") + "'");
  RunResult patch = RunTfdiag("fix -q --patch --memory 8Gi '" + dir.File("job.yaml") + "'");
  ASSERT_EQ(patch.exit_code, 0) << patch.err;
  WriteFile(dir.File("fixed.yaml"), fixed.out);
  WriteFile(dir.File("patch.ndjson"), patch.out);
  // RFC 7386 applied by an independent implementation.
  const char* kApply = R"(
import sys, yaml, json
def merge(t, p):
    if not isinstance(p, dict): return p
    t = dict(t) if isinstance(t, dict) else {}
    for k, v in p.items():
        if v is None: t.pop(k, None)
        else: t[k] = merge(t.get(k), v)
    return t
a = list(yaml.safe_load_all(open(sys.argv[1])))
b = list(yaml.safe_load_all(open(sys.argv[2])))
patches = [json.loads(l) for l in open(sys.argv[3]) if l.strip()]
print(len(patches), merge(a[0], patches[0]) == b[0])
)";
  EXPECT_EQ(Python(dir, kApply,
                   "'" + dir.File("job.yaml") + "' '" + dir.File("fixed.yaml") + "' '" +
                       dir.File("patch.ndjson") + "'"),
            "1 True\n");
}

TEST(Fix, InPlaceWritesAtomicallyAndMalformedInputFails) {
  TempDir dir;
  WriteFile(dir.File("job.yaml"), kJob);
  RunResult fixed = RunTfdiag("fix -q --memory 8Gi '" + dir.File("job.yaml") + "'");
  RunResult r = RunTfdiag("fix -q --in-place --memory 8Gi '" + dir.File("job.yaml") + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(ReadFile(dir.File("job.yaml")), fixed.out);
  // Idempotent: fixing the fixed file changes nothing.
  RunResult again = RunTfdiag("fix --memory 8Gi '" + dir.File("job.yaml") + "'");
  EXPECT_EQ(again.out, fixed.out);
  EXPECT_EQ(again.err.find("change:"), std::string::npos) << again.err;
  WriteFile(dir.File("bad.yaml"), "apiVersion: v1\nkind: Pod\nspec: {containers: [\n");
  r = RunTfdiag("fix '" + dir.File("bad.yaml") + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("bad.yaml: line "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(", column "), std::string::npos) << r.err;
  r = RunTfdiag("analyze '" + dir.File("bad.yaml") + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("bad.yaml: line "), std::string::npos) << r.err;
}

// `diff` between a manifest and its fix shows only the changed lines (issue 31 item 3).
struct DiffCount {
  int removed = 0, added = 0;
};

// Lines `diff` marks as removed (<) and added (>).
DiffCount Diff(const std::string& a, const std::string& b) {
  RunResult r = RunShell("diff '" + a + "' '" + b + "'");
  DiffCount d;
  size_t pos = 0;
  while (pos < r.out.size()) {
    size_t nl = r.out.find('\n', pos);
    if (nl == std::string::npos) nl = r.out.size();
    if (r.out.compare(pos, 2, "< ") == 0) ++d.removed;
    if (r.out.compare(pos, 2, "> ") == 0) ++d.added;
    pos = nl + 1;
  }
  return d;
}

int Count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

// One `-` line per removed key and one changed line per changed value: a fix of N changes that
// replace values removes at most N lines, and nothing is removed for what is only added.
TEST(Fix, RealManifestsChangeOnlyTheFixedLines) {
  if (!SharedAvailable()) GTEST_SKIP() << "../shared not found";
  TempDir dir;
  int files = 0;
  for (const char* f : kRealManifests) {
    const std::string in = SharedRealworld(std::string("manifests/") + f);
    RunResult fixed = RunTfdiag("fix --cpus 4 --memory 8Gi '" + in + "'");
    ASSERT_EQ(fixed.exit_code, 0) << f << ": " << fixed.err;
    const std::string out = dir.File(f);
    WriteFile(out, fixed.out);
    const int replaced = Count(fixed.err, " -> ");  // "requests.cpu 500m -> "4""
    const int changes = Count(fixed.err, "change: ");
    const DiffCount d = Diff(in, out);
    EXPECT_LE(d.removed, replaced) << f << "\n"
                                   << fixed.err << RunShell("diff '" + in + "' '" + out + "'").out;
    // Each change adds at most its own lines (a new env entry is 2 lines, a new resources block
    // with cpu and memory 7, an anti-affinity term with its labels 12).
    EXPECT_LE(d.added, 12 * changes) << f;
    EXPECT_EQ(fixed.err.find("written anew"), std::string::npos) << f << "\n" << fixed.err;
    if (changes > 0) ++files;
  }
  EXPECT_GE(files, 3);
}

// The report's case: removing one nvidia.com/gpu from a PS re-indented every block sequence,
// dropped the leading `---` and left `limits: {}`.
TEST(Fix, RemovingAGpuRemovesItsLinesOnly) {
  TempDir dir;
  const std::string job = R"(---
# Training job for the ranking model.
apiVersion: kubeflow.org/v1
kind: TFJob
metadata:
  name: rank   # owned by team ranking
spec:
  tfReplicaSpecs:
    PS:
      replicas: 2
      template:
        spec:
          affinity:
            podAntiAffinity:
              requiredDuringSchedulingIgnoredDuringExecution:
                - labelSelector:
                    matchLabels: {app: rank-ps}
                  topologyKey: kubernetes.io/hostname
          containers:
            - name: tensorflow
              image: 'tf:1.15'   # pinned
              args:
                - --job_name=ps
              resources:
                limits:
                  nvidia.com/gpu: 1
              env:
                - name: TF_NUM_INTRAOP_THREADS
                  valueFrom: {resourceFieldRef: {resource: limits.cpu}}
                - name: TF_NUM_INTEROP_THREADS
                  valueFrom: {resourceFieldRef: {resource: limits.cpu}}
                - name: OMP_NUM_THREADS
                  valueFrom: {resourceFieldRef: {resource: limits.cpu}}
)";
  WriteFile(dir.File("job.yaml"), job);
  RunResult fixed = RunTfdiag("fix --disable cpu-qos '" + dir.File("job.yaml") + "'");
  ASSERT_EQ(fixed.exit_code, 0) << fixed.err;
  WriteFile(dir.File("fixed.yaml"), fixed.out);
  EXPECT_EQ(Count(fixed.err, "change: "), 1) << fixed.err;
  const DiffCount d = Diff(dir.File("job.yaml"), dir.File("fixed.yaml"));
  // resources:, limits: and the GPU line go; nothing else changes.
  EXPECT_EQ(d.removed, 3)
      << RunShell("diff '" + dir.File("job.yaml") + "' '" + dir.File("fixed.yaml") + "'").out;
  EXPECT_EQ(d.added, 0) << fixed.out;
  EXPECT_EQ(fixed.out.rfind("---\n# Training job", 0), 0u) << fixed.out;
  EXPECT_EQ(fixed.out.find("{}"), std::string::npos) << fixed.out;
  EXPECT_NE(fixed.out.find("# owned by team ranking"), std::string::npos);
  EXPECT_NE(fixed.out.find("image: 'tf:1.15'   # pinned"), std::string::npos);
}

// What fix cannot choose is said (issue 31 item 4): findings that need --cpus or --memory are
// named with the flag, and requests that rise are a warning with the job's totals.
TEST(Fix, SaysWhichFindingsNeedWhichFlagAndWarnsOfRisingRequests) {
  TempDir dir;
  WriteFile(dir.File("job.yaml"), R"(apiVersion: kubeflow.org/v1
kind: TFJob
metadata: {name: big}
spec:
  tfReplicaSpecs:
    Worker:
      replicas: 4
      template:
        spec:
          containers:
          - name: tensorflow
            resources:
              requests: {cpu: "2"}
    PS:
      replicas: 2
      template:
        spec:
          containers:
          - name: tensorflow
            resources:
              requests: {cpu: "4", memory: 8Gi}
              limits: {cpu: "4", memory: 32Gi}
            env:
            - {name: TF_NUM_INTRAOP_THREADS, value: "4"}
            - {name: TF_NUM_INTEROP_THREADS, value: "4"}
            - {name: OMP_NUM_THREADS, value: "4"}
)");
  // Without --cpus: the PS are fixed, the workers need a CPU limit and memory.
  RunResult r = RunTfdiag("fix '" + dir.File("job.yaml") + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("still open, needing a choice: cpu-qos (1 container), thread-config (1 "
                       "container) needs --cpus N; cpu-qos (1 container) needs --memory Q"),
            std::string::npos)
      << r.err;
  // PS memory requests 2 x 8 GiB -> 2 x 32 GiB.
  EXPECT_NE(r.err.find("warning: TFJob 'big' (" + dir.File("job.yaml") +
                       "): requests rise (requests = limits, over all replicas): memory 16.0 GiB "
                       "-> 64.0 GiB"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("may no longer schedule"), std::string::npos) << r.err;
  // Nothing the fix can do alone: it says which flag would.
  WriteFile(dir.File("workers.yaml"), R"(apiVersion: apps/v1
kind: Deployment
metadata: {name: tf-worker}
spec:
  template:
    metadata: {labels: {role: worker}}
    spec:
      containers:
      - name: tf
        resources: {requests: {cpu: "2", memory: 4Gi}}
)");
  r = RunTfdiag("fix '" + dir.File("workers.yaml") + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("nothing changed in " + dir.File("workers.yaml") +
                       ": findings stand that need a choice: cpu-qos (1 container), "
                       "thread-config (1 container) needs --cpus N"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("no finding a fix can address"), std::string::npos) << r.err;
  r = RunTfdiag("fix --cpus 2 '" + dir.File("workers.yaml") + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("still open"), std::string::npos) << r.err;
  WriteFile(dir.File("fixed.yaml"), r.out);
  RunResult after = RunTfdiag("analyze -f json '" + dir.File("fixed.yaml") + "'");
  EXPECT_NE(after.out.find("\"findings\": []"), std::string::npos) << after.out;
}

// A JSON manifest stays JSON: the edit is placed in its text with JSON's quoting.
TEST(Fix, JsonManifestStaysJson) {
  TempDir dir;
  const std::string job =
      R"({"apiVersion":"kubeflow.org/v1","kind":"TFJob","metadata":{"name":"j"},"spec":)"
      R"({"tfReplicaSpecs":{"PS":{"replicas":2,"template":{"spec":{"containers":[{"name":"tf",)"
      R"("resources":{"limits":{"cpu":"1500m","memory":"2Gi"}}}]}}}}}})"
      "\n";
  WriteFile(dir.File("job.json"), job);
  RunResult r = RunTfdiag("fix --disable ps-colocation '" + dir.File("job.json") + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("written anew"), std::string::npos) << r.err;
  WriteFile(dir.File("fixed.json"), r.out);
  RunResult check = RunShell(
      "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); "
      "c=d[\"spec\"][\"tfReplicaSpecs\"][\"PS\"][\"template\"][\"spec\"][\"containers\"][0]; "
      "print(c[\"resources\"][\"requests\"], [e[\"value\"] for e in c[\"env\"]])' '" +
      dir.File("fixed.json") + "'");
  EXPECT_EQ(check.out, "{'cpu': '2', 'memory': '2Gi'} ['2', '2', '2']\n") << check.err << r.out;
}

// Per-role CPU (issue 48): --cpus ps=1,worker=4 gives each role its own limit (read back by
// python3-yaml, not by tfdiag); a bare --cpus N is every role's, which the summary says; a bad
// role or figure is exit 2 naming it.
TEST(Fix, CpusPerRoleSetsEachRolesLimit) {
  TempDir dir;
  WriteFile(dir.File("job.yaml"), R"(apiVersion: kubeflow.org/v1
kind: TFJob
metadata: {name: roles}
spec:
  tfReplicaSpecs:
    PS:
      replicas: 2
      template:
        spec:
          containers:
          - name: tensorflow
            resources: {requests: {cpu: 500m, memory: 1Gi}}
    Worker:
      replicas: 4
      template:
        spec:
          containers:
          - name: tensorflow
            resources: {requests: {cpu: "2", memory: 4Gi}}
)");
  const std::string read_back =
      "python3 -c 'import yaml,sys; d=yaml.safe_load(open(sys.argv[1])); "
      "s=d[\"spec\"][\"tfReplicaSpecs\"]; "
      "print(*[s[k][\"template\"][\"spec\"][\"containers\"][0][\"resources\"][\"limits\"]"
      "[\"cpu\"] for k in (\"PS\", \"Worker\")])' ";
  RunResult r = RunTfdiag("fix --cpus ps=1,worker=4 '" + dir.File("job.yaml") + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  WriteFile(dir.File("per-role.yaml"), r.out);
  EXPECT_EQ(RunShell(read_back + "'" + dir.File("per-role.yaml") + "'").out, "1 4\n") << r.err;
  EXPECT_EQ(r.err.find("every role"), std::string::npos) << r.err;
  // "ps=1,3": PS 1, every other role 3.
  r = RunTfdiag("fix --cpus ps=1,3 '" + dir.File("job.yaml") + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  WriteFile(dir.File("mixed.yaml"), r.out);
  EXPECT_EQ(RunShell(read_back + "'" + dir.File("mixed.yaml") + "'").out, "1 3\n") << r.err;
  // A bare number: every role, and said so.
  r = RunTfdiag("fix --cpus 4 '" + dir.File("job.yaml") + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  WriteFile(dir.File("all.yaml"), r.out);
  EXPECT_EQ(RunShell(read_back + "'" + dir.File("all.yaml") + "'").out, "4 4\n") << r.err;
  EXPECT_NE(r.err.find("every role"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--cpus ps=1,worker=4"), std::string::npos) << r.err;
  // Profile findings are no manifest change: the summary says where they are fixed.
  EXPECT_NE(r.err.find("findings of a profile (hot-ps"), std::string::npos) << r.err;
  for (const char* bad : {"ps=0", "gpu=2", "ps=1.5", "worker=", "4x"}) {
    r = RunTfdiag(std::string("fix --cpus ") + bad + " '" + dir.File("job.yaml") + "'");
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_NE(r.err.find(std::string("'") + bad + "'"), std::string::npos) << bad << ": " << r.err;
    EXPECT_EQ(r.out, "") << bad;
  }
}

// A pod list is what runs (issue 48): fix says so and names the object to fix, the pods' owner,
// where analyze judges the same file's TF pods; both agree it holds a TF job's pods.
TEST(Fix, PodListNamesTheObjectToFix) {
  const std::string pods = std::string(TFDIAG_SOURCE_DIR) + "/samples/pods.json";
  RunResult a = RunTfdiag("analyze -f json '" + pods + "'");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_NE(a.out.find("\"tf_pods\": 20"), std::string::npos);
  RunResult r = RunTfdiag("fix --cpus 4 '" + pods + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("no TF job"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("lists 20 TF pods as they run"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("TFJob 'hot-ps'"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace tfdiag::test

namespace tfdiag::test {
namespace {

// Issue 48: fix and analyze agree on every sample and on every real manifest and pod list: the
// same exit code (fix 0 where analyze finds a TF job or TF pods, with or without findings; 2 for
// both where there is nothing to judge or the file is not a manifest), and where both refuse a
// file, both name it.
TEST(Fix, AgreesWithAnalyzeOnEverySampleAndRealManifest) {
  std::vector<std::string> inputs = {std::string(TFDIAG_SOURCE_DIR) + "/samples/job.yaml",
                                     std::string(TFDIAG_SOURCE_DIR) + "/samples/pods.json"};
  if (SharedAvailable()) {
    for (const char* dir : {"manifests", "pods"}) {
      for (const auto& e : std::filesystem::directory_iterator(SharedRealworld(dir)))
        if (e.is_regular_file()) inputs.push_back(e.path().string());
    }
  }
  int judged = 0, refused = 0;
  for (const std::string& in : inputs) {
    const RunResult a = RunTfdiag("analyze '" + in + "'");
    const RunResult f = RunTfdiag("fix --cpus 4 '" + in + "'");
    const int analyze_exit = a.exit_code == 1 ? 0 : a.exit_code;  // 1: findings
    EXPECT_EQ(f.exit_code, analyze_exit) << in << "\nanalyze: " << a.err << "\nfix: " << f.err;
    if (f.exit_code == 2) {
      ++refused;
      EXPECT_NE(f.err.find(in), std::string::npos) << f.err;
      EXPECT_NE(a.err.find(in), std::string::npos) << a.err;
      EXPECT_EQ(f.out, "") << in << ": nothing printed where fix refuses";
    } else if (f.exit_code == 0) {
      ++judged;
    }
  }
  // Both kinds are in the set (the samples alone are judged; ../shared adds refusals).
  EXPECT_GE(judged, 2);
  if (SharedAvailable()) {
    EXPECT_GE(refused, 1);
  }
}

}  // namespace
}  // namespace tfdiag::test
