// Issue 18, the live sweep: a psload job (2 PS, hot placement: every embedding row on ps:0) run
// with 1, 2 and 4 workers on this machine, each recorded by `tfdiag attach` (eBPF probes on)
// for a short window while the workers export their step counters (psload --step-file), then
// `tfdiag scaling` on the three bundles. Throughput must come from the step counters and agree
// with what the workers themselves counted, and the limit named must be the one the machine
// shows: on this 2-core box the node's CPUs (the tasks' threads wait on the run queue) or ps:0.
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "collectors/procfs/proc_reader.h"
#include "tests/bpf_job.h"
#include "tests/ledger.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

constexpr double kWorkerS = 5;  // worker run time, s
constexpr char kWindow[] = "3s";

struct SweepRun {
  int workers = 0;
  std::string bundle;
  double summary_steps_per_s = 0;  // from the workers' own summaries (steps / wall time)
  double foreign_cores = 0;        // other work's CPU during the run, cores (ForeignCores)
  double foreign_peak_cores = 0;   // ... in its busiest second (ForeignLoadWatch)
};

// CPU seconds of this process and every process below it, live or reaped: its own and its
// reaped children's (getrusage), and each live descendant's with its reaped children's
// (/proc/PID/stat utime, stime, cutime, cstime; proc(5)); a zombie's still count.
double OwnTreeSeconds() {
  rusage self{}, children{};
  getrusage(RUSAGE_SELF, &self);
  getrusage(RUSAGE_CHILDREN, &children);
  auto seconds = [](const rusage& u) {
    return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
  };
  double own = seconds(self) + seconds(children);
  StatusOr<std::vector<pid_t>> pids = ListPids("/");
  if (!pids.ok()) return own;
  std::map<pid_t, std::pair<pid_t, double>> procs;  // pid -> (ppid, its tree's CPU s)
  const double tick = 1.0 / double(sysconf(_SC_CLK_TCK));
  for (pid_t p : *pids) {
    const std::string st = ReadFile(fmt::format("/proc/{}/stat", p));
    const size_t close = st.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream in(st.substr(close + 2));
    std::string state;
    long long ppid = 0, skip = 0, utime = 0, stime = 0, cutime = 0, cstime = 0;
    in >> state >> ppid;
    for (int f = 5; f <= 13; ++f) in >> skip;  // fields 5-13
    in >> utime >> stime >> cutime >> cstime;  // fields 14-17
    procs[p] = {static_cast<pid_t>(ppid), double(utime + stime + cutime + cstime) * tick};
  }
  const pid_t me = getpid();
  for (const auto& [p, v] : procs) {
    pid_t up = v.first;
    for (int depth = 0; depth < 32 && up > 1 && up != me; ++depth) {
      auto it = procs.find(up);
      up = it == procs.end() ? 0 : it->second.first;
    }
    if (up == me) own += v.second;
  }
  return own;
}

// Other work's CPU while a run goes on, every 250 ms: the node's busy CPU (/proc/stat) less this
// process tree's (OwnTreeSeconds). A whole-run average dilutes a compiler that starts for two
// seconds of a five-second run; the busiest second does not.
class ForeignLoadWatch {
 public:
  ForeignLoadWatch()
      : t_([this] {
          std::vector<std::pair<double, double>> points;  // (wall s, foreign CPU s so far)
          double foreign = 0;
          CpuClock last = ReadCpuClock();
          double last_own = OwnTreeSeconds();
          points.push_back({last.wall_s, 0});
          while (!stop_) {
            std::this_thread::sleep_for(std::chrono::milliseconds(250));
            const CpuClock now = ReadCpuClock();
            const double own = OwnTreeSeconds();
            foreign += std::max(0.0, (now.busy_s - last.busy_s) - (own - last_own));
            last = now, last_own = own;
            points.push_back({now.wall_s, foreign});
            // The busiest span of at least 1 s ending here.
            for (size_t j = points.size() - 1; j-- > 0;) {
              const double span = now.wall_s - points[j].first;
              if (span < 1) continue;
              peak_ = std::max(peak_, (foreign - points[j].second) / span);
              break;
            }
          }
        }) {}
  ~ForeignLoadWatch() { Stop(); }
  // Stops watching; the most other work's CPU in any second of the run, cores.
  double Stop() {
    if (t_.joinable()) stop_ = true, t_.join();
    return peak_;
  }

 private:
  std::atomic<bool> stop_{false};
  double peak_ = 0;
  std::thread t_;
};

// Other work's CPU during a run above which the sweep is not judged, cores. A sweep compares
// runs made one after another: other work during one of them moves its throughput, not the
// others'. Here (2026-11-28, this 2-core VM) two spinning processes during the sweep left the
// 1-worker run 197 steps/s against 652 quiet, and 4 workers then looked 77% efficient.
constexpr double kMaxForeignCores = 0.5;
// The 1-worker run is the sweep's baseline: other work during it lowers the throughput every
// efficiency is divided by, and so raises them all. Here (2026-11-29, this 2-core VM) 0.31 cores
// of other work in that run (under the 0.5 gate) put 4 workers at 0.725 efficiency, and the same
// sweep rerun at a quiet moment passed; so the baseline is held to a quieter bar than the runs
// compared with it.
constexpr double kMaxForeignCoresBaseline = 0.2;

// One run: 2 PS and `workers` hot-placement workers with step counter files; attach records
// them all from 1 s after the start for kWindow. Returns false with a reason on a setup failure.
bool RecordRun(const TempDir& dir, int workers, SweepRun* out, std::string* why) {
  const std::string tag = fmt::format("w{}", workers);
  std::vector<int> ports = FreePorts(2 + workers);
  const std::string ps_json = fmt::format(R"(["127.0.0.1:{}","127.0.0.1:{}"])", ports[0], ports[1]);
  std::string w_json = "[";
  for (int i = 0; i < workers; ++i) {
    w_json += fmt::format(R"({}"127.0.0.1:{}")", i ? "," : "", ports[2 + i]);
  }
  w_json += "]";
  const std::string cluster =
      fmt::format(R"({{"cluster":{{"ps":{},"worker":{}}},)", ps_json, w_json);
  const CpuClock started = ReadCpuClock();
  ForeignLoadWatch watch;
  std::vector<pid_t> ps, ws;
  for (int i = 0; i < 2; ++i) {
    ps.push_back(SpawnProcess(
        PSLOAD_BINARY, {"--placement=hot"},
        "TF_CONFIG=" + cluster + fmt::format(R"("task":{{"type":"ps","index":{}}}}})", i),
        dir.File(fmt::format("{}-ps-{}.log", tag, i))));
  }
  for (int i = 0; i < workers; ++i) {
    ws.push_back(SpawnProcess(
        PSLOAD_BINARY,
        {"--placement=hot", fmt::format("--duration={}", kWorkerS),
         "--summary=" + dir.File(fmt::format("{}-worker-{}.json", tag, i)),
         "--step-file=" + dir.File(fmt::format("{}-worker-{}.tfdiag-steps", tag, i))},
        "TF_CONFIG=" + cluster + fmt::format(R"("task":{{"type":"worker","index":{}}}}})", i),
        dir.File(fmt::format("{}-worker-{}.log", tag, i))));
  }
  std::this_thread::sleep_for(std::chrono::seconds(1));  // connected and stepping
  out->workers = workers;
  out->bundle = dir.File(tag + ".tfdiag.json");
  std::string args = fmt::format("attach --interval 500ms -d {} -o {}", kWindow, out->bundle);
  for (pid_t p : ps) args += fmt::format(" --pid {}", p);
  for (pid_t p : ws) args += fmt::format(" --pid {}", p);
  RunResult a = RunTfdiag(args);
  out->foreign_peak_cores = watch.Stop();  // before the workers are reaped (their CPU moves)
  for (pid_t p : ws) waitpid(p, nullptr, 0);
  for (pid_t p : ps) kill(p, SIGTERM);
  for (pid_t p : ps) waitpid(p, nullptr, 0);
  out->foreign_cores = ForeignCores(started, ReadCpuClock());
  if (a.exit_code != 0) {
    *why = fmt::format("attach ({} workers) exited {}: {}", workers, a.exit_code, a.err);
    return false;
  }
  for (int i = 0; i < workers; ++i) {
    rapidjson::Document s = Json(ReadFile(dir.File(fmt::format("{}-worker-{}.json", tag, i))));
    if (!s.IsObject() || !s.HasMember("steps_per_s")) {
      *why = fmt::format("worker {} of the {}-worker run wrote no summary", i, workers);
      return false;
    }
    out->summary_steps_per_s += s["steps_per_s"].GetDouble();
  }
  return true;
}

class ScalingLive : public BpfLive {};

TEST_F(ScalingLive, HotPsSweepOfOneTwoFourWorkersNamesTheLimitThisMachineShows) {
  TempDir dir;
  std::vector<SweepRun> runs(3);
  const int counts[] = {1, 2, 4};
  for (int k = 0; k < 3; ++k) {
    std::string why;
    ASSERT_TRUE(RecordRun(dir, counts[k], &runs[k], &why)) << why;
    // Judged on the run as a whole and on its busiest second: a build that started for two
    // seconds of a run moved its throughput while the run's average stayed under the gate.
    const double gate = k == 0 ? kMaxForeignCoresBaseline : kMaxForeignCores;
    if (runs[k].foreign_cores > gate || runs[k].foreign_peak_cores > gate) {
      GTEST_SKIP() << fmt::format(
          "{} to judge a sweep: other work used {:.2f} cores during the {}-worker run, {:.2f} in "
          "its busiest second (at most {:.2f} for both)",
          kTooLoaded, runs[k].foreign_cores, counts[k], runs[k].foreign_peak_cores, gate);
    }
    std::printf(
        "[ measured ] %d workers: other work %.2f cores over the run, %.2f at most in a "
        "second\n",
        counts[k], runs[k].foreign_cores, runs[k].foreign_peak_cores);
  }
  // The bundles carry the workers' step counters, with their source named.
  for (const SweepRun& r : runs) {
    rapidjson::Document b = Json(ReadFile(r.bundle));
    ASSERT_TRUE(b.IsObject() && b.HasMember("step_counts")) << r.bundle;
    int sources = 0;
    for (const auto& p : b["processes"].GetArray()) {
      if (!p.HasMember("step_source")) continue;
      ++sources;
      EXPECT_NE(std::string(p["step_source"].GetString()).find(".tfdiag-steps"), std::string::npos);
      EXPECT_EQ(std::string(p["task"].GetString()).rfind("worker:", 0), 0u)
          << "only workers export a step counter";
    }
    EXPECT_EQ(sources, r.workers) << r.bundle;
  }
  RunResult res = RunTfdiag(
      fmt::format("scaling -f json {} {} {}", runs[2].bundle, runs[0].bundle, runs[1].bundle));
  ASSERT_EQ(res.exit_code, 0) << res.err;
  rapidjson::Document d = Json(res.out);
  ASSERT_TRUE(d.IsObject()) << res.out;
  const auto& jr = d["runs"];
  ASSERT_EQ(jr.Size(), 3u);
  for (rapidjson::SizeType k = 0; k < 3; ++k) {
    const SweepRun& r = runs[k];
    EXPECT_EQ(jr[k]["workers"].GetInt(), r.workers) << "runs ordered by workers";
    EXPECT_FALSE(jr[k]["throughput_proxy"].GetBool());
    EXPECT_NE(std::string(jr[k]["throughput_source"].GetString()).find("step counter"),
              std::string::npos);
    // The window sits inside the workers' stepping, so its rate is theirs within noise (the
    // machine is shared: 25%).
    const double got = jr[k]["throughput_steps_per_s"].GetDouble();
    EXPECT_NEAR(got, r.summary_steps_per_s, 0.25 * r.summary_steps_per_s)
        << r.workers << " workers";
    EXPECT_GE(jr[k]["runq_wait_pct"].GetDouble(), 0) << "eBPF sched rows";
    std::printf(
        "[ measured ] %d workers: %.0f steps/s (workers' summaries %.0f), efficiency %.2f, "
        "ps:0 %s, node CPU used %.0f%%, run-queue wait %.0f%%\n",
        r.workers, got, r.summary_steps_per_s, jr[k]["efficiency"].GetDouble(),
        jr[k]["ps_busy_pct"]["ps:0"].GetDouble() < 0
            ? "?"
            : fmt::format("{:.0f}%", jr[k]["ps_busy_pct"]["ps:0"].GetDouble()).c_str(),
        jr[k]["cpu_used_pct"].GetDouble(), jr[k]["runq_wait_pct"].GetDouble());
  }
  // Two cores, 1 -> 4 workers each wanting about one CPU plus two PS: four workers cannot give
  // 4x, so the rule fires at least once, and every finding names what saturated with evidence.
  const double eff_total = jr[2]["efficiency"].GetDouble();
  EXPECT_LT(eff_total, 0.7) << "4 workers on 2 cores cannot scale linearly from 1";
  ASSERT_GE(d["findings"].Size(), 1u) << res.out;
  for (const auto& f : d["findings"].GetArray()) {
    const std::string subject = f["subject"].GetString();
    const std::string cause = f["cause"].GetString();
    std::printf("[ measured ] finding: %s\n", f["summary"].GetString());
    ASSERT_TRUE(subject == "the node's CPUs" || subject == "ps:0") << f["summary"].GetString();
    bool evidence = false;
    for (const auto& e : f["evidence"].GetArray()) {
      const std::string label = e["label"].GetString();
      const double v = e["value"].GetDouble();
      if (subject == "the node's CPUs") {
        evidence |=
            (label.rfind("run-queue wait share of runnable time after", 0) == 0 && v >= 30) ||
            (label.rfind("CPU used of the node's CPUs after", 0) == 0 && v >= 80);
      } else {
        evidence |= label.rfind("busy share of ps:0 after", 0) == 0 && v >= 50;
      }
    }
    EXPECT_TRUE(evidence) << cause << ": " << f["summary"].GetString();
  }
}

}  // namespace
}  // namespace tfdiag::test
