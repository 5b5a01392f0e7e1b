// Issue 37: series Prometheus holds twice for one identity are counted once and said. Two real
// Prometheus servers hold the same jobs; on the second, every cAdvisor series of "dup-job" is also
// scraped by a second job (kubelet-cadvisor, as when a kubelet and a cadvisor job scrape one
// kubelet), and agent-job's tfdiag agent series come from a second agent on node-9 (another
// instance, the same node). `analyze --prometheus` gives both servers the same figures and
// findings, with a note naming the duplicates on the second (before: CPU, threads, restarts and
// the agents' figures were summed over the copies: twice the CPU).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <sstream>
#include <string>

#include "tests/cluster_metrics.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

// `om` with the chosen lines copied under other labels.
std::string WithDuplicates(const std::string& om) {
  std::istringstream in(om);
  std::string out, line;
  auto replaced = [](std::string l, const std::string& from, const std::string& to) {
    const size_t at = l.find(from);
    return at == std::string::npos ? l : l.replace(at, from.size(), to);
  };
  while (std::getline(in, line)) {
    out += line + "\n";
    if (line.rfind("container_", 0) == 0 && line.find("pod=\"dup-job-") != std::string::npos) {
      out += replaced(line, "job=\"kubelet\"", "job=\"kubelet-cadvisor\"") + "\n";
    } else if (line.find("tf_job=\"agent-job\"") != std::string::npos) {
      out += replaced(line, "instance=\"10.0.0.19:9464\"", "instance=\"10.0.0.19:9465\"") + "\n";
    }
  }
  return out;
}

// The pods' figures and the findings of one report, as comparable text.
std::string Figures(const rapidjson::Document& d) {
  std::string out;
  for (const auto& p : d["prometheus"]["pods"].GetArray()) {
    out += fmt::format("{} cpu {:.3f} throttled {:.1f} threads {:.1f} restarts {}\n",
                       p["pod"].GetString(), p["cpu_cores"].GetDouble(),
                       p["throttled_pct"].GetDouble(), p["threads"].GetDouble(),
                       p["restarts"].GetInt());
  }
  for (const auto& f : d["findings"].GetArray()) {
    out += fmt::format("{}: {}\n", f["rule"].GetString(), f["summary"].GetString());
  }
  return out;
}

TEST(ClusterDuplicates, SeriesHeldTwiceAreCountedOnceAndNoted) {
  if (std::string skip = PromServer::SkipReason(); !skip.empty()) GTEST_SKIP() << skip;
  const ClusterWindow w = TestWindow();
  ClusterJobSpec spec;
  spec.name = "dup-job";
  spec.ps = 2;
  spec.workers = 4;
  spec.nodes = 2;
  spec.throttled_node = 1;
  spec.restart_worker = 2;
  std::string om;
  AppendClusterJob(spec, w.start, w.end, 15, &om);
  AppendAgentJob(w, &om);
  const std::string dup = WithDuplicates(om);
  ASSERT_GT(dup.size(), om.size() * 3 / 2);
  PromServer clean, doubled;
  std::string error;
  ASSERT_TRUE(clean.Start(om, "", &error)) << error;
  ASSERT_TRUE(doubled.Start(dup, "", &error)) << error;
  for (const char* job : {"dup-job", "agent-job"}) {
    rapidjson::Document d[2];
    std::string err[2];
    for (int k = 0; k < 2; ++k) {
      RunResult r =
          RunTfdiag(fmt::format("analyze --prometheus {} --job {} --start {:.0f} --end "
                                "{:.0f} -f json",
                                k ? doubled.url() : clean.url(), job, w.start, w.end));
      ASSERT_EQ(r.exit_code, 0) << job << ": " << r.err;
      d[k].Parse(r.out.c_str());
      ASSERT_FALSE(d[k].HasParseError()) << r.out.substr(0, 500);
      err[k] = r.err;
    }
    EXPECT_EQ(Figures(d[1]), Figures(d[0])) << job;
    const std::string note =
        std::string(job) == "dup-job"
            ? "cAdvisor series from 2 scrape jobs (kubelet, kubelet-cadvisor), the same "
              "container counted once"
            : "on node node-9: tfdiag agent series from 2 scrape targets "
              "(tfdiag-agent/10.0.0.19:9464, tfdiag-agent/10.0.0.19:9465), the same task "
              "counted once";
    EXPECT_NE(err[1].find(note), std::string::npos) << job << ": " << err[1];
    EXPECT_EQ(err[0].find("counted once"), std::string::npos) << job << ": " << err[0];
  }
}

}  // namespace
}  // namespace tfdiag::test
