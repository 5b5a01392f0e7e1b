// Tests of collectors/procfs/proc_reader: real /proc fixtures (../shared/realworld/procfs, read
// in place, never copied into the repository), edge cases, and the live test process.
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <sstream>
#include <thread>

#include "collectors/procfs/proc_reader.h"
#include "tests/test_util.h"

namespace tfdiag {
namespace {

using test::ReadFile;
using test::TempDir;
using test::WriteFile;

using test::SharedRealworld;
#define REQUIRE_REALWORLD() TFDIAG_REQUIRE_REALWORLD("procfs")

std::string Fixture(const std::string& name) { return ReadFile(SharedRealworld("procfs/" + name)); }

constexpr int64_t kTicks = 100;  // the fixtures come from machines with CLK_TCK 100

TEST(ProcfsFixtureTest, Stat26231Vim) {
  REQUIRE_REALWORLD();
  auto st = ParseProcStat(Fixture("prometheus-procfs__fixtures_proc_26231_stat"), kTicks);
  ASSERT_TRUE(st.ok()) << st.status().message();
  EXPECT_EQ(st->pid, 26231);
  EXPECT_EQ(st->comm, "vim");
  EXPECT_EQ(st->state, 'R');
  EXPECT_EQ(st->ppid, 5392);
  EXPECT_EQ(st->utime_ticks, 1677);
  EXPECT_EQ(st->stime_ticks, 44);
  EXPECT_EQ(st->utime_ns, 16'770'000'000);  // 1677 ticks / 100 Hz = 16.77 s
  EXPECT_EQ(st->stime_ns, 440'000'000);
  EXPECT_EQ(st->num_threads, 1);
  EXPECT_EQ(st->start_time_ticks, 82375);
  EXPECT_EQ(st->start_time_ns, 823'750'000'000);
  EXPECT_EQ(st->processor, 0);
}

TEST(ProcfsFixtureTest, Stat27079ProcessAndItsFiveThreads) {
  REQUIRE_REALWORLD();
  auto st = ParseProcStat(Fixture("prometheus-procfs__fixtures_proc_27079_stat"), kTicks);
  ASSERT_TRUE(st.ok()) << st.status().message();
  EXPECT_EQ(st->comm, "pthread_load");
  EXPECT_EQ(st->num_threads, 5);
  EXPECT_EQ(st->utime_ticks, 58125);
  EXPECT_EQ(st->stime_ticks, 15);
  EXPECT_EQ(st->processor, 2);

  struct Want {
    int tid;
    char state;
    int64_t utime, stime;
    int processor;
  };
  const Want want[] = {{27079, 'S', 0, 0, 2},
                       {27080, 'R', 34136, 3, 0},
                       {27081, 'S', 13680, 4, 5},
                       {27082, 'S', 6859, 3, 1},
                       {27083, 'S', 3452, 4, 4}};
  // Lay the fixtures out as a fake /proc, exercising the root prefix and ReadThreads.
  TempDir root;
  std::string task_dir = root.path() + "/proc/27079/task";
  ASSERT_EQ(std::system(("mkdir -p " + task_dir).c_str()), 0);
  for (const Want& w : want) {
    std::string dir = task_dir + "/" + std::to_string(w.tid);
    ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
    WriteFile(dir + "/stat", Fixture("prometheus-procfs__fixtures_proc_27079_task_" +
                                     std::to_string(w.tid) + "_stat"));
    // Synthetic status (the fixture set has none per task): switch counters only.
    WriteFile(dir + "/status", "Name:\tpthread_load\nvoluntary_ctxt_switches:\t" +
                                   std::to_string(w.tid - 27000) +
                                   "\nnonvoluntary_ctxt_switches:    7\n");
    auto t = ParseProcStat(ReadFile(dir + "/stat"), kTicks);
    ASSERT_TRUE(t.ok()) << t.status().message();
    EXPECT_EQ(t->pid, w.tid);
    EXPECT_EQ(t->state, w.state) << w.tid;
    EXPECT_EQ(t->utime_ticks, w.utime) << w.tid;
    EXPECT_EQ(t->stime_ticks, w.stime) << w.tid;
    EXPECT_EQ(t->processor, w.processor) << w.tid;
    EXPECT_EQ(t->num_threads, 5);
  }
  auto threads = ReadThreads(27079, root.path());
  ASSERT_TRUE(threads.ok()) << threads.status().message();
  ASSERT_EQ(threads->size(), 5u);
  for (size_t i = 0; i < 5; ++i) {
    const ThreadInfo& t = (*threads)[i];
    EXPECT_EQ(t.tid, want[i].tid);
    EXPECT_EQ(t.name, "pthread_load");  // no comm file: falls back to stat's comm
    EXPECT_EQ(t.state, want[i].state);
    EXPECT_EQ(t.utime_ns, want[i].utime * 1'000'000'000 / ClockTicksPerSecond());
    EXPECT_EQ(t.cpu_ns, t.utime_ns + t.stime_ns);
    EXPECT_EQ(t.voluntary_switches, want[i].tid - 27000);
    EXPECT_EQ(t.involuntary_switches, 7);  // space-separated value
    EXPECT_EQ(t.run_ns, -1);               // no schedstat in the fake tree
  }
}

TEST(ProcfsFixtureTest, StatCommWithSpacesAndParentheses) {
  REQUIRE_REALWORLD();
  auto st = ParseProcStat(Fixture("prometheus-procfs__fixtures_proc_584_stat"), kTicks);
  ASSERT_TRUE(st.ok()) << st.status().message();
  EXPECT_EQ(st->pid, 1020);
  EXPECT_EQ(st->comm, "(a b ) ( c d) ");
  EXPECT_EQ(st->state, 'R');
  EXPECT_EQ(st->ppid, 28378);
  EXPECT_EQ(st->start_time_ticks, 10839175);
  EXPECT_EQ(st->processor, 5);

  auto g = ParseProcStat(Fixture("gopsutil__linux_68927_stat"), kTicks);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->pid, 68927);
  EXPECT_EQ(g->comm, "test(cmd).sh");
  EXPECT_EQ(g->state, 'S');
  EXPECT_EQ(g->ppid, 68044);
  EXPECT_EQ(g->start_time_ticks, 114413973);
  EXPECT_EQ(g->processor, 1);

  auto p = ParseProcStat(Fixture("process-exporter__fixtures_14804_stat"), kTicks);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->comm, "process-exporte");  // truncated to 15 bytes by the kernel
  EXPECT_EQ(p->num_threads, 7);
  EXPECT_EQ(p->utime_ticks, 10);
  EXPECT_EQ(p->stime_ticks, 4);
  EXPECT_EQ(p->processor, 4);
}

TEST(ProcfsFixtureTest, StatusTabsAndSpaces) {
  REQUIRE_REALWORLD();
  auto a = ParseProcStatus(Fixture("prometheus-procfs__fixtures_proc_26231_status"));
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->name, "prometheus");
  EXPECT_EQ(a->state, 'S');
  EXPECT_EQ(a->tgid, 26231);
  EXPECT_EQ(a->threads, 1);
  EXPECT_EQ(a->voluntary_ctxt_switches, 4742839);
  EXPECT_EQ(a->nonvoluntary_ctxt_switches, 1727500);
  EXPECT_EQ(a->cpus_allowed_list, "0-7");
  EXPECT_EQ(a->cpus_allowed, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));

  auto b = ParseProcStatus(Fixture("prometheus-procfs__fixtures_proc_26235_status"));
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ(b->name, "kube-proxy");  // "Name:   kube-proxy": spaces, not a tab
  EXPECT_EQ(b->tgid, 26235);
  EXPECT_EQ(b->threads, 51);
  EXPECT_EQ(b->voluntary_ctxt_switches, 4742839);
  EXPECT_EQ(b->cpus_allowed.size(), 8u);

  auto c = ParseProcStatus(Fixture("process-exporter__fixtures_14804_status"));
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->name, "process-exporte");
  EXPECT_EQ(c->threads, 7);
  EXPECT_EQ(c->voluntary_ctxt_switches, 72);
  EXPECT_EQ(c->nonvoluntary_ctxt_switches, 6);
}

// /proc/stat's first line as the node's CPU ticks: the fixture's fields summed by the test's own
// reading; this machine's, whose ticks advance at USER_HZ per CPU against the wall clock; and a
// malformed field named by its number and name.
TEST(ProcStatCpuTicks, FixtureThisMachineAndBadFields) {
  REQUIRE_REALWORLD();
  const std::string text = Fixture("prometheus-procfs__fixtures_proc_stat");
  std::istringstream first(text.substr(0, text.find('\n')));
  std::string cpu;
  int64_t v = 0, sum = 0, steal = 0;
  first >> cpu;
  for (int f = 1; f <= 8 && first >> v; ++f) sum += v, steal = f == 8 ? v : steal;
  StatusOr<NodeCpuTicks> t = ParseProcStatCpuTicks(text);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->total, sum);
  EXPECT_EQ(t->steal, steal);

  // This machine: over 300 ms of wall time the node's ticks grow by CPUs x USER_HZ x 0.3 s
  // (every tick is counted in one of the eight fields: busy, idle or iowait), within 25%.
  StatusOr<NodeCpuTicks> a = ReadNodeCpuTicks();
  const auto t0 = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  StatusOr<NodeCpuTicks> b = ReadNodeCpuTicks();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(a.ok() && b.ok()) << a.status().message() << b.status().message();
  const double expected = wall * sysconf(_SC_CLK_TCK) * HostCpuCount();
  EXPECT_NEAR(double(b->total - a->total), expected, 0.25 * expected);
  EXPECT_LE(b->steal - a->steal, b->total - a->total);
  const double pct = StealPct(*a, *b);
  EXPECT_GE(pct, 0);
  EXPECT_LE(pct, 100);
  EXPECT_EQ(StealPct(*b, *b), -1) << "no time passed";
  EXPECT_DOUBLE_EQ(StealPct({100, 10}, {300, 60}), 25);
  EXPECT_DOUBLE_EQ(StealPct({100, 10}, {200, 310}), 100) << "a jumped counter: at most the whole";

  for (const auto& [bad, expect] : std::vector<std::pair<std::string, std::string>>{
           {"cpu  1 2 x 4 5 6 7 8\n", "cpu field 3 (system): expected ticks >= 0, got \"x\""},
           {"cpu  1 2 3 -4 5 6 7 8\n", "cpu field 4 (idle)"},
           {"cpu0 1 2 3 4 5 6 7 8\n", "expected a first line"},
           {"cpu  1 2 3 4 5 6 7 99999999999999999\n", "cpu field 8 (steal)"},
           {"", "expected a first line"}}) {
    StatusOr<NodeCpuTicks> r = ParseProcStatCpuTicks(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput);
    EXPECT_NE(r.status().message().find(expect), std::string::npos) << r.status().message();
  }
  // Before Linux 2.6.11 the line ends at softirq: no steal.
  StatusOr<NodeCpuTicks> old = ParseProcStatCpuTicks("cpu  1 2 3 4 5 6 7\n");
  ASSERT_TRUE(old.ok()) << old.status().message();
  EXPECT_EQ(old->total, 28);
  EXPECT_EQ(old->steal, 0);
}

TEST(ProcfsFixtureTest, SchedStatAndHostCpus) {
  REQUIRE_REALWORLD();
  auto s = ParseSchedStat(Fixture("prometheus-procfs__fixtures_proc_26231_schedstat"));
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->run_ns, 411605849);
  EXPECT_EQ(s->wait_ns, 93680043);
  EXPECT_EQ(s->timeslices, 79);
  EXPECT_EQ(ParseProcStatCpuCount(Fixture("prometheus-procfs__fixtures_proc_stat")), 8);

  TempDir root;  // ReadProcStat through a root prefix
  ASSERT_EQ(std::system(("mkdir -p " + root.path() + "/proc/26231").c_str()), 0);
  WriteFile(root.File("proc/26231/stat"), Fixture("prometheus-procfs__fixtures_proc_26231_stat"));
  WriteFile(root.File("proc/stat"), Fixture("prometheus-procfs__fixtures_proc_stat"));
  auto st = ReadProcStat(26231, root.path());
  ASSERT_TRUE(st.ok()) << st.status().message();
  EXPECT_EQ(st->utime_ticks, 1677);
  EXPECT_EQ(ReadProcStatCpuCount(root.path()).value(), 8);
  auto gone = ReadProcStat(26232, root.path());
  EXPECT_EQ(gone.status().code(), StatusCode::kNotFound);
  EXPECT_NE(gone.status().message().find("/proc/26232/stat"), std::string::npos);
}

TEST(ProcfsParseTest, MalformedStatAndStatus) {
  EXPECT_EQ(ParseProcStat("").status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(ParseProcStat("12 (x) R 1 2 3").status().message().find("at least 20"),
            std::string::npos);
  EXPECT_NE(ParseProcStat("12 (x) R 1 1 1 1 1 1 1 1 1 1 abc 0 0 0 0 0 1 0 5")
                .status()
                .message()
                .find("utime (field 14)"),
            std::string::npos);
  EXPECT_NE(ParseProcStatus("State:\tS\n").status().message().find("Name"), std::string::npos);
  EXPECT_NE(ParseProcStatus("Name:\tx\nThreads:\tmany\n").status().message().find("Threads"),
            std::string::npos);
  EXPECT_EQ(ParseSchedStat("1 2").status().code(), StatusCode::kInvalidInput);
}

TEST(ProcfsParseTest, CpuLists) {
  EXPECT_EQ(ParseCpuList("0-5,8,10-11\n").value(), (std::vector<int>{0, 1, 2, 3, 4, 5, 8, 10, 11}));
  EXPECT_EQ(ParseCpuList("3").value(), std::vector<int>{3});
  EXPECT_TRUE(ParseCpuList("\n").value().empty());  // an unset cpuset
  EXPECT_NE(ParseCpuList("5-3").status().message().find("'5-3'"), std::string::npos);
  EXPECT_EQ(ParseCpuList("0-x").status().code(), StatusCode::kInvalidInput);
}

TEST(ProcfsParseTest, CmdlineAndEnvironMatching) {
  using namespace std::string_literals;
  EXPECT_EQ(ParseCmdline("python3\0train.py\0--job_name=ps\0"s),
            (std::vector<std::string>{"python3", "train.py", "--job_name=ps"}));
  EXPECT_EQ(ParseCmdline("a\0\0b\0"s), (std::vector<std::string>{"a", "", "b"}));
  EXPECT_TRUE(ParseCmdline("").empty());

  std::string env = "XTF_CONFIG=no\0TF_CONFIG_EXTRA=no\0TF_CONFIG={\"a\":1}\0TF_CONFIG=second\0"s;
  EXPECT_EQ(FindEnvVar(env, "TF_CONFIG"), std::optional<std::string>("{\"a\":1}"));
  EXPECT_EQ(FindEnvVar(env, "TF_CONFI"), std::nullopt);
  EXPECT_EQ(FindEnvVar("A=1\0B=last-without-nul"s, "B"),
            std::optional<std::string>("last-without-nul"));
  EXPECT_EQ(FindEnvVar("EMPTY=\0"s, "EMPTY"), std::optional<std::string>(""));
  EXPECT_EQ(FindEnvVar(env, "A=B"), std::nullopt);
  EXPECT_EQ(ReadEnvVar(::getpid(), "").status().code(), StatusCode::kInvalidInput);
}

TEST(ProcfsLiveTest, SelfStatStatusSchedstatCmdline) {
  pid_t self = ::getpid();
  auto st = ReadProcStat(self);
  ASSERT_TRUE(st.ok()) << st.status().message();
  EXPECT_EQ(st->pid, self);
  EXPECT_EQ(st->comm, "tfdiag_tests");
  EXPECT_EQ(st->state, 'R');  // reading its own stat, it is running
  EXPECT_GE(st->num_threads, 1);
  EXPECT_GE(st->processor, 0);
  auto status = ReadProcStatus(self);
  ASSERT_TRUE(status.ok()) << status.status().message();
  EXPECT_EQ(status->tgid, self);
  EXPECT_GE(status->voluntary_ctxt_switches, 0);
  EXPECT_FALSE(status->cpus_allowed.empty());
  auto sched = ReadSchedStat(self);
  ASSERT_TRUE(sched.ok()) << sched.status().message();
  EXPECT_GT(sched->run_ns, 0);
  EXPECT_GT(sched->timeslices, 0);
  auto argv = ReadCmdline(self);
  ASSERT_TRUE(argv.ok());
  ASSERT_FALSE(argv->empty());
  EXPECT_NE((*argv)[0].find("tfdiag_tests"), std::string::npos);
  EXPECT_EQ(HostCpuCount(), ReadProcStatCpuCount().value());
  EXPECT_GT(ClockTicksPerSecond(), 0);
}

TEST(ProcfsLiveTest, ExitedProcessIsNotFound) {
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(0);
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);
  EXPECT_EQ(ReadProcStat(child).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(ReadProcStatus(child).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(ReadThreads(child).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(ReadEnvVar(child, "TF_CONFIG").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(ReadCmdline(child).status().code(), StatusCode::kNotFound);
}

TEST(ProcfsLiveTest, NamedThreadsAndTheirSwitches) {
  std::atomic<bool> stop{false};
  std::atomic<int> ready{0};
  std::atomic<pid_t> tids[2] = {{0}, {0}};
  auto body = [&](int i, const char* name) {
    pthread_setname_np(pthread_self(), name);
    tids[i] = static_cast<pid_t>(::syscall(SYS_gettid));
    ++ready;
    while (!stop) {  // a little work, then block: both CPU time and voluntary switches grow
      auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(2);
      while (std::chrono::steady_clock::now() < until) {
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  };
  std::thread a(body, 0, "tf_inter_op"), b(body, 1, "tf_intra_op");
  while (ready < 2) std::this_thread::yield();
  auto find = [&](const std::vector<ThreadInfo>& v, pid_t tid) -> const ThreadInfo* {
    for (const ThreadInfo& t : v) {
      if (t.tid == tid) return &t;
    }
    return nullptr;
  };
  auto first = ReadThreads(::getpid());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto second = ReadThreads(::getpid());
  stop = true;
  a.join();
  b.join();
  ASSERT_TRUE(first.ok()) << first.status().message();
  ASSERT_TRUE(second.ok()) << second.status().message();
  const char* names[2] = {"tf_inter_op", "tf_intra_op"};
  for (int i = 0; i < 2; ++i) {
    const ThreadInfo* t0 = find(*first, tids[i]);
    const ThreadInfo* t1 = find(*second, tids[i]);
    ASSERT_NE(t0, nullptr) << names[i];
    ASSERT_NE(t1, nullptr) << names[i];
    EXPECT_EQ(t1->name, names[i]);
    EXPECT_NE(std::string("RSD").find(t1->state), std::string::npos) << t1->state;
    EXPECT_GT(t1->voluntary_switches, t0->voluntary_switches) << names[i];
    EXPECT_GE(t1->involuntary_switches, t0->involuntary_switches) << names[i];
    EXPECT_GE(t1->cpu_ns, t0->cpu_ns) << names[i];
    if (t0->run_ns >= 0) {  // -1 without CONFIG_SCHED_INFO
      EXPECT_GT(t1->run_ns, t0->run_ns) << names[i];
    }
  }
  EXPECT_EQ(ReadThread(::getpid(), tids[0]).status().code(), StatusCode::kNotFound);  // joined
}

}  // namespace
}  // namespace tfdiag
