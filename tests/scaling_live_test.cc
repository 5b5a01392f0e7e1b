// Issue 18, the live sweep: a psload job (2 PS, hot placement: every embedding row on ps:0) run
// with 1, 2 and 4 workers on this machine, each recorded by `tfdiag attach` (eBPF probes on)
// for a short window while the workers export their step counters (psload --step-file), then
// `tfdiag scaling` on the three bundles. Throughput must come from the step counters and agree
// with what the workers themselves counted, and the limit named must be the one the machine
// shows: on this 2-core box the node's CPUs (the tasks' threads wait on the run queue) or ps:0.
// A run disturbed by other work (or, for the 1-worker baseline, by the hypervisor's steal) is
// made again before the sweep is given up as not judged.
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
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
  double foreign_cores = 0;        // other work's CPU during the run, cores (ForeignLoadWatch)
  double foreign_peak_cores = 0;   // ... in its busiest second
  double steal_cores = 0;          // steal during the run, cores (reported, not gated)
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
// process tree's (OwnTreeSeconds) and less steal. A whole-run average dilutes a compiler that
// starts for two seconds of a five-second run; the busiest second does not. Steal (the hypervisor
// running other guests: no process here) is measured apart, as it is judged apart (below).
class ForeignLoadWatch {
 public:
  ForeignLoadWatch()
      : t_([this] {
          std::vector<std::pair<double, double>> points;  // (wall s, foreign CPU s so far)
          double foreign = 0;
          CpuClock last = ReadCpuClock();
          double last_own = OwnTreeSeconds();
          const CpuClock first = last;
          points.push_back({last.wall_s, 0});
          while (!stop_) {
            std::this_thread::sleep_for(std::chrono::milliseconds(250));
            const CpuClock now = ReadCpuClock();
            const double own = OwnTreeSeconds();
            foreign += std::max(
                0.0, (now.busy_s - last.busy_s) - (now.steal_s - last.steal_s) - (own - last_own));
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
          const double wall = last.wall_s - first.wall_s;
          if (wall > 0) mean_ = foreign / wall, steal_ = (last.steal_s - first.steal_s) / wall;
        }) {}
  ~ForeignLoadWatch() { Stop(); }
  // Stops watching; the most other work's CPU in any second of the run, cores.
  double Stop() {
    if (t_.joinable()) stop_ = true, t_.join();
    return peak_;
  }
  // After Stop: other work's CPU over the whole watch, and steal over it, cores.
  double mean() const { return mean_; }
  double steal() const { return steal_; }

 private:
  std::atomic<bool> stop_{false};
  double peak_ = 0, mean_ = 0, steal_ = 0;
  std::thread t_;
};

// Other work's CPU during a run (its average and its busiest second) above which the run is made
// again, cores. Here (2026-11-28, this 2-core VM) two spinning processes during the sweep left the
// 1-worker run 197 steps/s against 652 quiet, and 4 workers then looked 77% efficient.
constexpr double kMaxForeignCores = 0.5;
// The 1-worker run is the sweep's baseline: what slows it lowers the throughput every efficiency
// is divided by and so raises them all, so it is held to quieter bars. Here (2026-11-29, this
// 2-core VM) 0.31 cores of other work in it put 4 workers at 0.725 efficiency; the same sweep at a
// quiet moment passed.
constexpr double kMaxForeignCoresBaseline = 0.2;
// Steal during the baseline, cores. The hypervisor's other guests come and go in spells of 10-40
// s; the 1-worker job (one worker and ps:0 answering each other over loopback) loses far more
// than the CPU stolen, as each wake-up waits. Here (2026-11-30, this 2-core VM, nothing else
// running in it) 1-worker runs made 700-720 steps/s at steal <= 0.02 cores, 624-631 at 0.10 and
// 395-435 at 0.40-0.46, and a sweep whose baseline saw 0.44 put 4 workers at 0.77 efficiency
// against 0.55 at 0.02. Over 0.1 (about 10% slower) the baseline is made again.
constexpr double kMaxStealBaseline = 0.1;
// Tries of one run, kRetryWaitS s apart, before the sweep is not judged: a run of a few seconds
// is made again, not the sweep. The baseline gets more (steal cannot be waited out while idle:
// an idle VM accrues none, so only a run shows it).
constexpr int kRunTries = 4;
constexpr int kBaselineTries = 10;
constexpr int kRetryWaitS = 3;

// One run: 2 PS and `workers` hot-placement workers with step counter files, their files named
// after `tag`; attach records them all from 1 s after the start for kWindow. Returns false with
// a reason on a setup failure.
bool RecordRun(const TempDir& dir, const std::string& tag, int workers, SweepRun* out,
               std::string* why) {
  std::vector<int> ports = FreePorts(2 + workers);
  const std::string ps_json = fmt::format(R"(["127.0.0.1:{}","127.0.0.1:{}"])", ports[0], ports[1]);
  std::string w_json = "[";
  for (int i = 0; i < workers; ++i) {
    w_json += fmt::format(R"({}"127.0.0.1:{}")", i ? "," : "", ports[2 + i]);
  }
  w_json += "]";
  const std::string cluster =
      fmt::format(R"({{"cluster":{{"ps":{},"worker":{}}},)", ps_json, w_json);
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
  out->foreign_cores = watch.mean();
  out->steal_cores = watch.steal();
  for (pid_t p : ws) waitpid(p, nullptr, 0);
  for (pid_t p : ps) kill(p, SIGTERM);
  for (pid_t p : ps) waitpid(p, nullptr, 0);
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
    const bool baseline = k == 0;
    const double foreign_gate = baseline ? kMaxForeignCoresBaseline : kMaxForeignCores;
    const double steal_gate = baseline ? kMaxStealBaseline : 1e9;
    const int tries = baseline ? kBaselineTries : kRunTries;
    for (int t = 1;; ++t) {
      std::string why;
      SweepRun& r = runs[k];
      r = SweepRun{};
      ASSERT_TRUE(RecordRun(dir, fmt::format("w{}-t{}", counts[k], t), counts[k], &r, &why)) << why;
      const bool judged = r.foreign_cores <= foreign_gate && r.foreign_peak_cores <= foreign_gate &&
                          r.steal_cores <= steal_gate;
      std::printf(
          "[ measured ] %d workers (try %d): other work %.2f cores over the run, %.2f at most in "
          "a second, steal %.2f cores, %.0f steps/s%s\n",
          counts[k], t, r.foreign_cores, r.foreign_peak_cores, r.steal_cores, r.summary_steps_per_s,
          judged ? "" : " (made again)");
      if (judged) break;
      if (t == tries) {
        GTEST_SKIP() << fmt::format(
            "{} to judge a sweep: on each of {} tries of the {}-worker run, other work or steal "
            "was over its bar (the last: other work {:.2f} cores over the run and {:.2f} in its "
            "busiest second, at most {:.2f}; steal {:.2f} cores{})",
            kTooLoaded, tries, counts[k], r.foreign_cores, r.foreign_peak_cores, foreign_gate,
            r.steal_cores, baseline ? fmt::format(", at most {:.2f}", steal_gate) : "");
      }
      std::this_thread::sleep_for(std::chrono::seconds(kRetryWaitS));
    }
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
