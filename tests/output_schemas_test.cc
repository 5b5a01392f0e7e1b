// What tfdiag writes for other tools is checked against published schemas (issue 39, items 5
// and 6), with Debian's python3-jsonschema (tests/validate_json.py), never by the code that
// writes it:
//   - `analyze -f json` of every simulated scenario, of a profile with its pod list and
//     manifest, of every real input in the shared traces/ and realworld/ folders that analyze
//     accepts (the others must be refused with exit 2), of a bundle `tfdiag attach` recorded of
//     a running psload job and of a job read from a real Prometheus, against
//     docs/schemas/tfdiag.analysis-1; `scaling -f json` against docs/schemas/tfdiag.scaling-1
//     (here a timeline sweep; tests/scaling_prometheus_test.cc: jobs read from Prometheus):
//     every key always present, -1 for an unknown figure, null for a section that does not
//     apply, integer *_ns;
//   - `analyze -f sarif` of each kind of input against what GitHub code scanning requires of an
//     upload (tests/schemas/sarif-2.1.0-github.schema.json: the SARIF 2.1.0 schema itself is in
//     no Debian package): a physical location for every result, the driver's version and an
//     absolute information URI; and here, that each result's relative URI resolves against
//     %SRCROOT% to the input it came from, and that the validation refuses what GitHub would.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cluster_metrics.h"
#include "tests/psload_pair.h"
#include "tests/test_util.h"
#include "tests/validate_schema.h"

namespace tfdiag::test {
namespace {

const std::string kSource = TFDIAG_SOURCE_DIR;

std::vector<std::string> Scenarios() {
  RunResult r = RunTfdiag("simulate --list");
  std::vector<std::string> names;
  std::istringstream is(r.out);
  std::string line;
  while (std::getline(is, line)) {  // "scenario  what it shows", then one line per scenario
    std::istringstream ls(line);
    std::string first;
    if (ls >> first && first != "scenario" &&
        first.find_first_not_of("abcdefghijklmnopqrstuvwxyz-0123456789") == std::string::npos)
      names.push_back(first);
  }
  return names;
}

// Every real input of ../shared that `analyze` might be given alone: the TF traces and profiles
// (a log directory too), the manifests (Helm templates among them), the pod lists and the
// Prometheus scrapes and replies; sorted paths.
std::vector<std::string> RealInputs() {
  std::vector<std::string> out;
  auto add_dir = [&](const std::string& dir) {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
      const std::string name = e.path().filename().string();
      if (name == "README.md" || name.find("README") != std::string::npos) continue;
      out.push_back(e.path().string());
    }
  };
  if (SharedAvailable()) add_dir(std::filesystem::path(SharedTrace("x")).parent_path().string());
  for (const char* d : {"manifests", "pods", "prometheus"}) {
    if (SharedRealworldAvailable(d)) add_dir(SharedRealworld(d));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Starts `prom` holding a job "ctr" (2 PS, 4 workers on 2 nodes, 20 minutes of samples) as the
// kubelet and kube-state-metrics export it; "" when it runs, else why not.
std::string StartCtrJob(PromServer* prom) {
  std::string skip = PromServer::SkipReason();
  if (!skip.empty()) return skip;
  ClusterJobSpec job;
  job.name = "ctr";
  job.ps = 2;
  job.workers = 4;
  job.nodes = 2;
  job.shared_ps = 0;
  job.throttled_node = -1;
  const double now = std::floor(static_cast<double>(std::time(nullptr)));
  std::string om, error;
  AppendClusterJob(job, now - 1200, now - 15, 15, &om);
  if (!prom->Start(om, "", &error)) return error;
  return "";
}

TEST(OutputSchemas, AnalysisJsonOfEveryScenarioAndRealInputValidates) {
  const std::string skip = SkipWithoutValidator();
  if (!skip.empty()) GTEST_SKIP() << skip;
  TempDir dir;
  const std::vector<std::string> scenarios = Scenarios();
  ASSERT_GE(scenarios.size(), 10u) << "simulate --list";
  std::vector<std::string> docs;
  auto analyze = [&](const std::string& args, const std::string& name) {
    const std::string out = dir.File(name + ".analysis.json");
    RunResult r = RunTfdiag("analyze -f json -o '" + out + "' " + args);
    EXPECT_TRUE(r.exit_code == 0) << args << "\n" << r.err;
    if (r.exit_code == 0) docs.push_back(out);
  };
  for (const std::string& s : scenarios) {
    const std::string trace = dir.File(s + ".json");
    RunResult sim = RunTfdiag("simulate " + s + " --steps 4 -o '" + trace + "'");
    ASSERT_EQ(sim.exit_code, 0) << s << "\n" << sim.err;
    analyze("'" + trace + "'", s);
  }
  // A profile with its pod list and manifest (deployment objects, pod figures, waits).
  ASSERT_EQ(RunTfdiag("simulate hot-ps --steps 4 --format xplane -o '" + dir.File("logs") + "'")
                .exit_code,
            0);
  analyze("'" + dir.File("logs") + "' '" + kSource + "/samples/pods.json' '" + kSource +
              "/samples/job.yaml'",
          "logs-with-pods");
  // Each real input is analysed, or refused with exit 2 and one line saying why (a Helm
  // template, a pod list without TF pods, a Prometheus scrape): never another exit code.
  int n = 0, refused = 0;
  const std::vector<std::string> real = RealInputs();
  for (const std::string& in : real) {
    const std::string out = dir.File("real" + std::to_string(n++) + ".analysis.json");
    RunResult r = RunTfdiag("analyze -f json -o '" + out + "' '" + in + "'");
    if (r.exit_code == 0) {
      docs.push_back(out);
      continue;
    }
    ++refused;
    EXPECT_EQ(r.exit_code, 2) << in << "\n" << r.err;
    EXPECT_TRUE(r.err.find("error: ") != std::string::npos) << in << "\n" << r.err;
    EXPECT_FALSE(std::filesystem::exists(out)) << in << ": no document for a refused input";
  }
  if (SharedAvailable()) {
    EXPECT_GE(real.size(), 20u);
    EXPECT_GE(real.size() - refused, 10u) << "real inputs analysed";
  }
  // A recorded bundle of a live job (processes[], sched[] from eBPF where the kernel allows).
  if (geteuid() == 0) {
    PsloadPair job;
    job.Start(dir);
    RunResult a =
        RunTfdiag("attach --duration 2s --pid " + std::to_string(job.pids[0]) + " --pid " +
                  std::to_string(job.pids[1]) + " -o '" + dir.File("run.tfdiag.json") + "'");
    ASSERT_EQ(a.exit_code, 0) << a.err;
    analyze("'" + dir.File("run.tfdiag.json") + "'", "bundle");
  }
  // A job read from a real Prometheus: its "prometheus" section (window, queries, pods) too.
  PromServer prom;
  const std::string prom_skip = StartCtrJob(&prom);
  if (prom_skip.empty()) {
    analyze("--prometheus " + prom.url() + " --job ctr", "prometheus");
  } else {
    std::printf("not run: the Prometheus case (%s)\n", prom_skip.c_str());
  }
  ASSERT_GE(docs.size(), scenarios.size() + 1);
  const std::string report =
      Validate(kSource + "/docs/schemas/tfdiag.analysis-1.schema.json", docs);
  EXPECT_EQ(report, "") << docs.size() << " documents";
  // Every key of every document is named in docs/json.md, in the row of its section (a script
  // written from the page reads every output: issue 48).
  std::string cmd = "/usr/bin/python3 '" + kSource + "/tests/json_keys_documented.py' '" + kSource +
                    "/docs/json.md'";
  for (const std::string& doc : docs) cmd += " '" + doc + "'";
  RunResult keys = RunShell(cmd);
  EXPECT_EQ(keys.exit_code, 0) << keys.out << keys.err;

  // The conventions the schema states, on one document: integer *_ns in waits and impact, and
  // keys that used to be left out when empty.
  rapidjson::Document d;
  d.Parse(ReadFile(dir.File("hot-ps.analysis.json")).c_str());
  ASSERT_TRUE(d.IsObject());
  ASSERT_TRUE(d.HasMember("deployment"));
  // A section that does not apply is null, not left out.
  ASSERT_TRUE(d.HasMember("prometheus"));
  EXPECT_TRUE(d["prometheus"].IsNull());
  if (prom_skip.empty()) {
    rapidjson::Document p;
    p.Parse(ReadFile(dir.File("prometheus.analysis.json")).c_str());
    ASSERT_TRUE(p.IsObject() && p.HasMember("prometheus"));
    ASSERT_TRUE(p["prometheus"].IsObject());
    EXPECT_GT(p["prometheus"]["queries"].Size(), 10u);
    EXPECT_EQ(p["prometheus"]["pods"].Size(), 6u);
  }
  bool saw_impact = false;
  for (const auto& f : d["findings"].GetArray()) {
    for (const char* k : {"cause", "pod", "node", "waits", "impact"})
      EXPECT_TRUE(f.HasMember(k)) << f["rule"].GetString() << " has no " << k;
    if (f["impact"]["method"] == "replay") {
      saw_impact = true;
      EXPECT_TRUE(f["impact"]["step_ns"].IsInt64());
    }
  }
  EXPECT_TRUE(saw_impact) << "hot-ps's fix is modelled";
  // impact in its three documented states, over every document: predicted (numbers), withheld
  // (null figures and the reason; never the step as it is now), nothing modelled (-1,
  // confidence "none"). The states are told apart by the figures alone.
  int states[3] = {0, 0, 0};
  for (const std::string& path : docs) {
    rapidjson::Document doc;
    doc.Parse(ReadFile(path).c_str());
    ASSERT_TRUE(doc.IsObject()) << path;
    for (const auto& f : doc["findings"].GetArray()) {
      const auto& im = f["impact"];
      const std::string what = path + ": " + f["rule"].GetString();
      const std::string method = im["method"].GetString();
      const std::string confidence = im["confidence"].GetString();
      const std::string withheld = im["withheld"].GetString();
      if (method == "replay") {
        ++states[0];
        EXPECT_NE(confidence, "none") << what;
        EXPECT_TRUE(im["step_ns_after_fix"].IsInt64() && im["saving_pct"].IsNumber()) << what;
        EXPECT_GT(im["step_ns_after_fix"].GetInt64(), 0) << what;
        EXPECT_TRUE(withheld.empty()) << what;
      } else if (!withheld.empty()) {
        ++states[1];
        EXPECT_EQ(confidence, "none") << what;
        for (const char* k : {"step_ns_after_fix", "saving_pct", "low_ns", "high_ns"})
          EXPECT_TRUE(im[k].IsNull()) << what << ": " << k;
        EXPECT_FALSE(im["trusted"].GetBool()) << what;
      } else {
        ++states[2];
        EXPECT_EQ(confidence, "none") << what;
        for (const char* k : {"step_ns_after_fix", "saving_pct", "low_ns", "high_ns"})
          EXPECT_TRUE(im[k].IsNumber() && im[k].GetDouble() == -1) << what << ": " << k;
        EXPECT_FALSE(im["trusted"].GetBool()) << what;
      }
    }
  }
  EXPECT_GT(states[0], 0) << "predicted";
  EXPECT_GT(states[2], 0) << "nothing modelled";
  std::printf("impact states: %d predicted, %d withheld, %d not modelled\n", states[0], states[1],
              states[2]);
}

// Each published schema is complete alone: its $refs are local (the scaling schema carries the
// analysis definitions it uses), so any validator reads it offline; the bundle is the one
// scripts/bundle_schemas.py writes from the analysis schema as it is now.
TEST(OutputSchemas, SchemasResolveOfflineAndTheBundleIsCurrent) {
  for (const char* name : {"tfdiag.analysis-1.schema.json", "tfdiag.scaling-1.schema.json"}) {
    const std::string text = ReadFile(kSource + "/docs/schemas/" + name);
    const std::regex ref("\"\\$ref\"\\s*:\\s*\"([^\"]*)\"");
    int refs = 0;
    for (std::sregex_iterator it(text.begin(), text.end(), ref), end; it != end; ++it, ++refs)
      EXPECT_EQ((*it)[1].str().rfind("#/", 0), 0u) << name << ": " << (*it)[1].str();
    EXPECT_GT(refs, 10) << name;
  }
  RunResult r = RunShell("/usr/bin/python3 '" + kSource + "/scripts/bundle_schemas.py' --check '" +
                         kSource + "/docs/schemas'");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

TEST(OutputSchemas, ScalingJsonValidates) {
  const std::string skip = SkipWithoutValidator();
  if (!skip.empty()) GTEST_SKIP() << skip;
  TempDir dir;
  ASSERT_EQ(RunTfdiag("simulate hot-ps --workers 2,4,8 --embedding-dim 256 --steps 6 -o '" +
                      dir.File("sweep") + "'")
                .exit_code,
            0);
  const std::string out = dir.File("scaling.json");
  RunResult r =
      RunTfdiag("scaling -f json -o '" + out + "' '" + dir.File("sweep/workers-2.json") + "' '" +
                dir.File("sweep/workers-4.json") + "' '" + dir.File("sweep/workers-8.json") + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Validate(kSource + "/docs/schemas/tfdiag.scaling-1.schema.json", {out}), "");
  RunResult keys = RunShell("/usr/bin/python3 '" + kSource + "/tests/json_keys_documented.py' '" +
                            kSource + "/docs/json.md' '" + out + "'");
  EXPECT_EQ(keys.exit_code, 0) << keys.out << keys.err;
  // Unknown is -1 here as in the analysis document (a timeline has no CFS figures).
  rapidjson::Document d;
  d.Parse(ReadFile(out).c_str());
  ASSERT_TRUE(d.IsObject());
  EXPECT_EQ(d["runs"][0]["throttled_pct"].GetDouble(), -1);
}

// The SARIF of `analyze -f sarif` for `args`, run in `cwd`, written to `out`; its results'
// artifact URIs.
std::vector<std::string> SarifUris(const std::string& cwd, const std::string& args,
                                   const std::string& out) {
  // In a subshell, so that a redirection in `args` (standard input) is not RunShell's.
  RunResult r = RunShell("(cd '" + cwd + "' && '" + TFDIAG_BINARY + "' analyze -f sarif -o '" +
                         out + "' " + args + ")");
  EXPECT_TRUE(r.exit_code == 0) << args << "\n" << r.err;
  std::vector<std::string> uris;
  rapidjson::Document d;
  d.Parse(ReadFile(out).c_str());
  if (!d.IsObject()) return uris;
  const auto& run = d["runs"][0];
  EXPECT_TRUE(run["tool"]["driver"].HasMember("semanticVersion"));
  // The information URI (CMake's TFDIAG_INFORMATION_URI) is absolute: a scheme and a host.
  const std::string info = run["tool"]["driver"]["informationUri"].GetString();
  EXPECT_TRUE(std::regex_match(info, std::regex("https?://[^/\\s?#]+([/?#]\\S*)?"))) << info;
  for (const auto& res : run["results"].GetArray()) {
    const auto& loc = res["locations"][0]["physicalLocation"]["artifactLocation"];
    uris.push_back(loc["uri"].GetString());
    // Every location is relative, against a base the run declares (issue 48).
    EXPECT_TRUE(loc.HasMember("uriBaseId")) << uris.back();
    if (!loc.HasMember("uriBaseId")) continue;
    const std::string base = loc["uriBaseId"].GetString();
    EXPECT_TRUE(run["originalUriBaseIds"].HasMember(base.c_str())) << base;
    if (base != "%SRCROOT%") uris.back() = base + ":" + uris.back();
  }
  return uris;
}

// The file a SARIF location names: its base's file: URI (originalUriBaseIds) joined with its
// relative URI, both percent-decoded by python3's urllib (not by tfdiag's code).
std::vector<std::string> SarifFiles(const std::string& sarif) {
  RunResult r = RunShell(
      "/usr/bin/python3 -c 'import json,sys,urllib.parse as u\n"
      "d=json.load(open(sys.argv[1]))[\"runs\"][0]\n"
      "for res in d[\"results\"]:\n"
      "  a=res[\"locations\"][0][\"physicalLocation\"][\"artifactLocation\"]\n"
      "  b=d[\"originalUriBaseIds\"][a[\"uriBaseId\"]][\"uri\"]\n"
      "  print(u.unquote(u.urlparse(u.urljoin(b, a[\"uri\"])).path))' '" +
      sarif + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> files;
  std::istringstream is(r.out);
  for (std::string line; std::getline(is, line);) files.push_back(line);
  return files;
}

TEST(OutputSchemas, SarifOfEveryInputKindIsWhatGithubAccepts) {
  const std::string skip = SkipWithoutValidator();
  if (!skip.empty()) GTEST_SKIP() << skip;
  TempDir dir;
  const std::string work = dir.File("repo");
  std::filesystem::create_directories(work + "/k8s");
  std::filesystem::copy_file(kSource + "/samples/job.yaml", work + "/k8s/job.yaml");
  std::filesystem::copy_file(kSource + "/samples/pods.json", work + "/k8s/pods.json");
  ASSERT_EQ(RunTfdiag("simulate hot-ps --steps 4 -o '" + work + "/hot.json'").exit_code, 0);
  ASSERT_EQ(RunTfdiag("simulate hot-ps --steps 4 --format xplane -o '" + work + "/logs'").exit_code,
            0);
  struct Case {
    std::string name, args;
  };
  std::vector<Case> cases = {
      {"timeline", "hot.json"},
      {"profile and pod list", "logs k8s/pods.json"},
      {"manifest", "k8s/job.yaml"},
      // An absolute path under the working directory is written relative to it.
      {"absolute", "'" + work + "/hot.json' '" + work + "/k8s/job.yaml'"},
  };
  if (geteuid() == 0) {
    PsloadPair job;
    job.Start(dir);
    RunResult a =
        RunTfdiag("attach --duration 2s --pid " + std::to_string(job.pids[0]) + " --pid " +
                  std::to_string(job.pids[1]) + " -o '" + work + "/run.tfdiag.json'");
    ASSERT_EQ(a.exit_code, 0) << a.err;
    cases.push_back({"bundle", "run.tfdiag.json k8s/job.yaml"});
  }
  std::vector<std::string> docs;
  int results = 0;
  for (const Case& c : cases) {
    const std::string out = dir.File(std::to_string(docs.size()) + ".sarif");
    const std::vector<std::string> uris = SarifUris(work, c.args, out);
    EXPECT_FALSE(uris.empty()) << c.name << ": no result";
    results += static_cast<int>(uris.size());
    for (const std::string& u : uris) {
      EXPECT_NE(u[0], '/') << c.name << ": " << u;
      EXPECT_TRUE(std::filesystem::exists(work + "/" + u)) << c.name << ": " << u;
    }
    docs.push_back(out);
  }
  // Inputs outside the working directory: relative to a base of their own directory, which
  // resolves to the file; the fingerprints are those of the same inputs typed from inside.
  {
    const std::string elsewhere = dir.File("elsewhere");
    std::filesystem::create_directories(elsewhere);
    std::filesystem::copy_file(kSource + "/samples/job.yaml", elsewhere + "/job.yaml");
    const std::string out = dir.File("outside.sarif");
    const std::vector<std::string> uris = SarifUris(work, "'" + elsewhere + "/job.yaml'", out);
    ASSERT_FALSE(uris.empty());
    for (const std::string& u : uris) EXPECT_EQ(u.rfind("INPUT1:job.yaml", 0), 0u) << u;
    for (const std::string& f : SarifFiles(out)) EXPECT_EQ(f, elsewhere + "/job.yaml");
    docs.push_back(out);
    // The same file typed four ways: the same locations and fingerprints.
    auto prints = [&](const std::string& cwd, const std::string& arg) {
      const std::string o = dir.File("fp.sarif");
      SarifUris(cwd, arg, o);
      rapidjson::Document d;
      d.Parse(ReadFile(o).c_str());
      std::vector<std::string> p;
      for (const auto& res : d["runs"][0]["results"].GetArray())
        p.push_back(res["partialFingerprints"]["tfdiagSubject/v1"].GetString() +
                    std::string(" @ ") +
                    res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].GetString());
      return p;
    };
    const std::vector<std::string> want = prints(work, "k8s/job.yaml");
    ASSERT_FALSE(want.empty());
    EXPECT_EQ(prints(work, "./k8s/../k8s/job.yaml"), want);
    EXPECT_EQ(prints(work, "'" + work + "/k8s/job.yaml'"), want);
    EXPECT_EQ(prints(work + "/k8s", "../k8s/job.yaml").size(), want.size());
  }
  // A job read from Prometheus: no file; the placeholder path, described by the query.
  PromServer prom;
  const std::string prom_skip = StartCtrJob(&prom);
  if (prom_skip.empty()) {
    const std::string out = dir.File("prom.sarif");
    const std::vector<std::string> uris =
        SarifUris(work, "--prometheus " + prom.url() + " --job ctr", out);
    ASSERT_FALSE(uris.empty());
    // Located on the instant query that found the job's pods, relative to the server it was read
    // from (issue 48), not on a made-up path.
    for (const std::string& u : uris) {
      EXPECT_EQ(u.rfind("PROMETHEUS:api/v1/query?query=", 0), 0u) << u;
      EXPECT_NE(u.find("%22ctr%22"), std::string::npos) << "the job in the PromQL: " << u;
    }
    const std::string sarif = ReadFile(out);
    {
      rapidjson::Document d;
      d.Parse(sarif.c_str());
      ASSERT_FALSE(d.HasParseError());
      const auto& bases = d["runs"][0]["originalUriBaseIds"];
      ASSERT_TRUE(bases.HasMember("PROMETHEUS")) << sarif.substr(0, 3000);
      EXPECT_EQ(std::string(bases["PROMETHEUS"]["uri"].GetString()), prom.url() + "/");
    }
    // Resolved by python3's urllib (not tfdiag's code): the server's instant-query endpoint with
    // the PromQL the description names.
    RunResult q = RunShell(
        "/usr/bin/python3 -c 'import json,sys,urllib.parse as u\n"
        "d=json.load(open(sys.argv[1]))[\"runs\"][0]\n"
        "a=d[\"results\"][0][\"locations\"][0][\"physicalLocation\"][\"artifactLocation\"]\n"
        "x=u.urlparse(u.urljoin(d[\"originalUriBaseIds\"][a[\"uriBaseId\"]][\"uri\"], "
        "a[\"uri\"]))\n"
        "q=u.parse_qs(x.query)[\"query\"][0]\n"
        "print(x.scheme+\"://\"+x.netloc+x.path)\n"
        "print(q in a[\"description\"][\"text\"])' '" +
        out + "'");
    EXPECT_EQ(q.exit_code, 0) << q.err;
    EXPECT_EQ(q.out, prom.url() + "/api/v1/query\nTrue\n");
    EXPECT_NE(sarif.find("the job's pods as Prometheus at " + prom.url() + " found them: "),
              std::string::npos)
        << sarif.substr(0, 3000);
    EXPECT_NE(sarif.find("\\\"ctr\\\""), std::string::npos) << "the job in the PromQL";
    docs.push_back(out);
  } else {
    std::printf("not run: the Prometheus case (%s)\n", prom_skip.c_str());
  }
  // A manifest piped on standard input: the documented placeholder "stdin", not "-".
  {
    const std::string out = dir.File("stdin.sarif");
    const std::vector<std::string> uris = SarifUris(work, "- < k8s/job.yaml", out);
    ASSERT_FALSE(uris.empty());
    for (const std::string& u : uris) EXPECT_EQ(u, "stdin");
    EXPECT_EQ(ReadFile(out).find("\"fixes\""), std::string::npos) << "no file to edit";
    docs.push_back(out);
  }
  EXPECT_GT(results, 5);
  EXPECT_EQ(Validate(kSource + "/tests/schemas/sarif-2.1.0-github.schema.json", docs), "");
}

// ps-colocation on a pod list names a node, not a line of the file: its result points at the
// first PS pod the list places on that node (samples/pods.json: hot-ps-ps-0 and -1 on node-1),
// not at line 1.
TEST(OutputSchemas, SarifPutsAPodListsNodeFindingOnItsFirstPsPod) {
  TempDir dir;
  const std::string out = dir.File("pods.sarif");
  RunResult r = RunShell("cd '" + kSource + "' && '" + TFDIAG_BINARY + "' analyze -f sarif -o '" +
                         out + "' samples/pods.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The line of the '{' that opens hot-ps-ps-0's item, read off the file.
  std::istringstream pods(ReadFile(kSource + "/samples/pods.json"));
  std::string line;
  int n = 0, open = 0, want = 0;
  while (std::getline(pods, line) && want == 0) {
    ++n;
    if (line.find_first_not_of(' ') != std::string::npos &&
        line.substr(line.find_first_not_of(' ')) == "{")
      open = n;
    if (line.find("\"name\": \"hot-ps-ps-0\"") != std::string::npos) want = open;
  }
  ASSERT_GT(want, 1);
  rapidjson::Document d;
  d.Parse(ReadFile(out).c_str());
  ASSERT_TRUE(d.IsObject());
  int found = 0;
  for (const auto& res : d["runs"][0]["results"].GetArray()) {
    if (std::string(res["ruleId"].GetString()) != "ps-colocation") continue;
    ++found;
    const auto& loc = res["locations"][0]["physicalLocation"];
    EXPECT_STREQ(loc["artifactLocation"]["uri"].GetString(), "samples/pods.json");
    EXPECT_EQ(loc["region"]["startLine"].GetInt(), want);
  }
  EXPECT_EQ(found, 1);
}

// The validation above can fail where GitHub would refuse an upload: a driver whose
// informationUri is not an absolute URI (no scheme, no host, a space, a bad %-escape; jsonschema
// alone checks the "uri" format only beside the rfc3987 module, which Debian does not pull in),
// and an originalUriBaseIds entry that is not a URI.
TEST(OutputSchemas, SarifValidationRefusesAnInformationUriThatIsNotAbsolute) {
  const std::string skip = SkipWithoutValidator();
  if (!skip.empty()) GTEST_SKIP() << skip;
  TempDir dir;
  const std::string good = dir.File("good.sarif");
  RunResult r = RunTfdiag("analyze -f sarif -o '" + good + "' '" + kSource + "/samples/job.yaml'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string schema = kSource + "/tests/schemas/sarif-2.1.0-github.schema.json";
  ASSERT_EQ(Validate(schema, {good}), "");
  const std::string text = ReadFile(good);
  const std::string key = "\"informationUri\": \"";
  const size_t value = text.find(key);
  ASSERT_NE(value, std::string::npos) << text.substr(0, 400);
  const size_t start = value + key.size(), end = text.find('"', start);
  for (const char* bad : {"github.com/tfdiag/tfdiag", "https://", "https://exa mple.com/tfdiag",
                          "https://example.com/a%zz", "/usr/share/doc/tfdiag"}) {
    std::string doc = text;
    doc.replace(start, end - start, bad);
    const std::string path = dir.File("bad.sarif");
    WriteFile(path, doc);
    const std::string report = Validate(schema, {path});
    EXPECT_NE(report.find("informationUri"), std::string::npos) << bad << ": " << report;
  }
  std::string doc = text;
  const size_t base = doc.find("\"uri\": \"file:///", doc.find("originalUriBaseIds"));
  ASSERT_NE(base, std::string::npos);
  doc.insert(base + 16, "a b/");  // file:///a b/...: a space
  WriteFile(dir.File("base.sarif"), doc);
  EXPECT_NE(Validate(schema, {dir.File("base.sarif")}).find("originalUriBaseIds"),
            std::string::npos);
}

}  // namespace
}  // namespace tfdiag::test
