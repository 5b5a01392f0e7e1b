// deploy/grafana-dashboard.json (issue 31, item 7): a Grafana dashboard over the agents' tfdiag_*
// series and the recording rules of deploy/tfdiag.rules.yml. Checked here:
//  - its shape: Grafana's dashboard JSON model (schemaVersion, panels on the 24-column grid, one
//    datasource variable that every query uses, unique panel ids);
//  - every query, its template variables replaced, parses with promtool (`promtool check rules`
//    on a rules file made of the queries, offline);
//  - every query returns series from a real Prometheus that holds what a cluster gives it: a TF
//    job's cAdvisor and kube-state-metrics series (backfilled, tests/cluster_metrics.h), a real
//    tfdiag agent (`tfdiag attach --serve`) scraped every second while it watches a psload PS and
//    worker, and deploy/tfdiag.rules.yml loaded as its rule file. So every series a panel names
//    exists, under the labels the panel selects by. The eBPF panels need root and kernel BTF;
//    without them they are only parsed, and the test says so.
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <ctime>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "collectors/prometheus/prom_client.h"
#include "tests/bpf_job.h"
#include "tests/cluster_metrics.h"
#include "tests/psload_pair.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

const std::string kDashboard = std::string(TFDIAG_SOURCE_DIR) + "/deploy/grafana-dashboard.json";

struct Query {
  std::string where;  // "panel 'Title' A", "variable tf_job"
  std::string expr;   // PromQL, template variables replaced
  bool ebpf = false;  // its series come from the agents' eBPF probes
};

// Grafana's template variables as "All" selects them, and $__rate_interval as Grafana computes it
// for a 1 s scrape interval (4 x the interval, at least 1m in practice).
std::string Substitute(std::string e) {
  e = std::regex_replace(e, std::regex("\\$__rate_interval"), "1m");
  e = std::regex_replace(e, std::regex("\\$\\{?(namespace|tf_job)\\}?"), ".*");
  return e;
}

// label_values(SELECTOR, LABEL) -> a query with the same series: count by (LABEL) (SELECTOR).
std::string LabelValuesQuery(const std::string& q) {
  static const std::regex lv("^label_values\\((.*),\\s*([a-zA-Z_][a-zA-Z0-9_]*)\\)$");
  std::smatch m;
  if (!std::regex_match(q, m, lv)) return "";
  return "count by (" + m[2].str() + ") (" + m[1].str() + ")";
}

bool IsEbpf(const std::string& e) {
  return e.find("tfdiag_traffic_") != std::string::npos ||
         e.find("tfdiag:worker_ps_bytes") != std::string::npos ||
         e.find("tfdiag_runqueue_latency") != std::string::npos ||
         e.find("tfdiag_hdfs_read_bytes") != std::string::npos;
}

// Every query of the dashboard (panels, rows' panels, query variables), checking the shape on the
// way.
std::vector<Query> DashboardQueries(const rapidjson::Document& d) {
  std::vector<Query> out;
  EXPECT_TRUE(d.HasMember("uid") && d["uid"].IsString() && d["uid"].GetStringLength() > 0);
  EXPECT_TRUE(d.HasMember("title") && d["title"].IsString());
  EXPECT_TRUE(d.HasMember("schemaVersion") && d["schemaVersion"].IsInt() &&
              d["schemaVersion"].GetInt() >= 36);
  std::set<std::string> vars;
  bool datasource_var = false;
  for (const auto& v : d["templating"]["list"].GetArray()) {
    const std::string name = v["name"].GetString(), type = v["type"].GetString();
    vars.insert(name);
    if (type == "datasource") {
      datasource_var = std::string(v["query"].GetString()) == "prometheus";
      continue;
    }
    EXPECT_EQ(type, "query") << name;
    EXPECT_EQ(std::string(v["datasource"]["uid"].GetString()), "${datasource}") << name;
    const std::string q =
        v["query"].IsObject() ? v["query"]["query"].GetString() : v["query"].GetString();
    const std::string count = LabelValuesQuery(q);
    EXPECT_FALSE(count.empty()) << "variable " << name << ": not label_values(...): " << q;
    if (!count.empty()) out.push_back({"variable " + name, Substitute(count), IsEbpf(q)});
  }
  EXPECT_TRUE(datasource_var) << "a datasource variable of type prometheus";
  EXPECT_TRUE(vars.count("namespace") && vars.count("tf_job"));
  std::set<int> ids;
  std::vector<const rapidjson::Value*> panels;
  for (const auto& p : d["panels"].GetArray()) {
    panels.push_back(&p);
    if (p.HasMember("panels")) {
      for (const auto& q : p["panels"].GetArray()) panels.push_back(&q);
    }
  }
  for (const rapidjson::Value* pp : panels) {
    const rapidjson::Value& p = *pp;
    const std::string title = p["title"].GetString();
    EXPECT_TRUE(ids.insert(p["id"].GetInt()).second) << "panel id " << p["id"].GetInt();
    const auto& g = p["gridPos"];
    EXPECT_GE(g["x"].GetInt(), 0) << title;
    EXPECT_LE(g["x"].GetInt() + g["w"].GetInt(), 24) << title << ": past the 24-column grid";
    EXPECT_GT(g["h"].GetInt(), 0) << title;
    if (std::string(p["type"].GetString()) == "row") continue;
    EXPECT_EQ(std::string(p["datasource"]["uid"].GetString()), "${datasource}") << title;
    EXPECT_TRUE(p.HasMember("description")) << title << ": say what the panel shows";
    EXPECT_TRUE(p.HasMember("targets") && p["targets"].Size() > 0) << title;
    if (!p.HasMember("targets")) continue;
    for (const auto& t : p["targets"].GetArray()) {
      const std::string expr = t["expr"].GetString();
      out.push_back(
          {"panel '" + title + "' " + t["refId"].GetString(), Substitute(expr), IsEbpf(expr)});
      EXPECT_EQ(out.back().expr.find('$'), std::string::npos)
          << out.back().where << ": a template variable the test does not know: " << expr;
    }
  }
  return out;
}

// The metric names a query selects (tfdiag_*, tfdiag:*, ALERTS).
std::set<std::string> MetricNames(const std::string& expr) {
  std::set<std::string> out;
  static const std::regex name("\\b(tfdiag[_:][a-zA-Z0-9_:]+|ALERTS)\\b");
  for (std::sregex_iterator it(expr.begin(), expr.end(), name), end; it != end; ++it) {
    out.insert((*it)[1]);
  }
  return out;
}

rapidjson::Document ReadDashboard() {
  rapidjson::Document d;
  d.Parse(ReadFile(kDashboard).c_str());
  return d;
}

TEST(GrafanaDashboard, EveryQueryParsesWithPromtool) {
  if (access("/usr/bin/promtool", X_OK) != 0)
    GTEST_SKIP() << "no /usr/bin/promtool (Debian package prometheus)";
  const rapidjson::Document d = ReadDashboard();
  ASSERT_FALSE(d.HasParseError()) << kDashboard << ": not JSON, byte " << d.GetErrorOffset();
  const std::vector<Query> queries = DashboardQueries(d);
  ASSERT_GE(queries.size(), 12u);
  // promtool parses each expression of a rules file: one recording rule per query.
  TempDir tmp;
  std::string rules = "groups:\n  - name: dashboard\n    rules:\n";
  for (size_t i = 0; i < queries.size(); ++i) {
    std::string quoted;
    for (char c : queries[i].expr) quoted += c == '\'' ? std::string("''") : std::string(1, c);
    rules +=
        "      - record: dashboard:q" + std::to_string(i) + "\n        expr: '" + quoted + "'\n";
  }
  WriteFile(tmp.File("dashboard.rules.yml"), rules);
  RunResult r = RunShell("promtool check rules '" + tmp.File("dashboard.rules.yml") + "'");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("SUCCESS: " + std::to_string(queries.size()) + " rules found"),
            std::string::npos)
      << r.out;
  // And a query that does not parse fails the same way (the check can fail).
  WriteFile(tmp.File("bad.rules.yml"),
            "groups:\n  - name: bad\n    rules:\n      - record: bad:q\n        expr: "
            "'rate(tfdiag_task_cpu_seconds_total[1m]'\n");
  EXPECT_NE(RunShell("promtool check rules '" + tmp.File("bad.rules.yml") + "'").exit_code, 0);
}

TEST(GrafanaDashboard, EveryQueryReturnsSeriesFromAgentsAndRecordingRules) {
  const std::string skip = PromServer::SkipReason();
  if (!skip.empty()) GTEST_SKIP() << skip;
  const rapidjson::Document d = ReadDashboard();
  ASSERT_FALSE(d.HasParseError());
  const std::vector<Query> queries = DashboardQueries(d);
  const bool ebpf = BpfSkipReason().empty();

  // A psload PS and worker (TF tasks by TF_CONFIG; the worker counts its steps in a file).
  TempDir tmp;
  PsloadPair job_pods;
  job_pods.Start(tmp, {"--step-file=" + tmp.File("w0.tfdiag-steps")});
  const int agent_port = FreePorts(1)[0];
  std::vector<pid_t> pids;
  struct Kill {
    std::vector<pid_t>* pids;
    ~Kill() {
      for (pid_t p : *pids) kill(p, SIGKILL), waitpid(p, nullptr, 0);
    }
  } kill_agent{&pids};
  // The agent, as the DaemonSet runs it (eBPF probes on where they can load).
  std::vector<std::string> agent_args = {"attach",
                                         "--interval",
                                         "500ms",
                                         "--rescan",
                                         "500ms",
                                         "--node-name",
                                         "node-0",
                                         "--tf-job",
                                         "mnist",
                                         "--serve",
                                         "127.0.0.1:" + std::to_string(agent_port)};
  if (!ebpf) agent_args.push_back("--no-bpf");
  pids.push_back(
      SpawnProcess(TFDIAG_BINARY, agent_args, "PATH=/usr/bin:/bin", tmp.File("agent.log")));
  // Prometheus: the cluster's series of a TF job (a hot PS, two PS on one node, a throttled
  // node) up to now, the agent scraped every second, the project's rules evaluated every second.
  ClusterJobSpec job;
  job.ps = 3;
  job.workers = 6;
  job.nodes = 3;
  job.throttled_node = 1;
  const double now = std::floor(static_cast<double>(std::time(nullptr)));
  std::string om;
  AppendClusterJob(job, now - 1800, now - 5, 15, &om);
  const std::string config =
      "  - job_name: tfdiag-agent\n    scrape_interval: 1s\n    static_configs:\n"
      "      - targets: ['127.0.0.1:" +
      std::to_string(agent_port) + "']\nrule_files:\n  - '" + TFDIAG_SOURCE_DIR +
      "/deploy/tfdiag.rules.yml'\n";
  PromServer prom;
  std::string error;
  ASSERT_TRUE(prom.Start(om, config, &error)) << error;
  PromClientOptions po;
  po.url = prom.url();
  po.timeout_s = 5;
  po.deadline_s = 600;
  auto client = PromClient::Create(po);
  ASSERT_TRUE(client.ok()) << client.status().message();

  // Every query until each returns series (scrapes, rule evaluations and 1m rates need a few
  // seconds), at most 90 s. A query error (bad_data) fails at once.
  std::vector<bool> answered(queries.size(), false);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
  size_t left = queries.size();
  while (left > 0 && std::chrono::steady_clock::now() < deadline) {
    left = 0;
    for (size_t i = 0; i < queries.size(); ++i) {
      if (answered[i] || (queries[i].ebpf && !ebpf)) continue;
      StatusOr<std::vector<PromSeries>> r =
          (*client)->Query(queries[i].expr, static_cast<double>(std::time(nullptr)));
      ASSERT_TRUE(r.ok()) << queries[i].where << ": " << queries[i].expr << "\n"
                          << r.status().message();
      answered[i] = !r->empty();
      left += !answered[i];
    }
    if (left > 0) std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  std::set<std::string> names;
  for (size_t i = 0; i < queries.size(); ++i) {
    if (queries[i].ebpf && !ebpf) {
      std::printf("not run (%s): %s\n", BpfSkipReason().c_str(), queries[i].where.c_str());
      continue;
    }
    EXPECT_TRUE(answered[i]) << queries[i].where
                             << " returned no series in 90 s: " << queries[i].expr
                             << "\nagent: " << ReadFile(tmp.File("agent.log"))
                             << "\nprometheus: " << ReadFile(prom.dir() + "/prometheus.log");
    for (const std::string& n : MetricNames(queries[i].expr)) names.insert(n);
  }
  // Each series name a panel uses exists, agents' and recording rules' alike.
  for (const char* must : {"tfdiag_task_up", "tfdiag_task_cpu_seconds_total",
                           "tfdiag_task_steps_total", "tfdiag:ps_cpu_share:ratio5m",
                           "tfdiag:pod_cfs_throttled:ratio5m", "tfdiag:ps_pods_per_node:count"}) {
    EXPECT_TRUE(names.count(must)) << "the dashboard shows " << must;
  }
  for (const std::string& n : names) {
    StatusOr<std::vector<PromSeries>> r = (*client)->Query("count({__name__=\"" + n + "\"})",
                                                           static_cast<double>(std::time(nullptr)));
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_FALSE(r->empty()) << n << ": no such series in the test Prometheus";
  }
}

}  // namespace
}  // namespace tfdiag::test
