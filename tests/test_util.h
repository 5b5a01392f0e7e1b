// Helpers for tfdiag tests: temp dirs, running the built binary, reading files, real inputs.
#pragma once

#include <sys/types.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/capture.h"
#include "core/status.h"

#define TFDIAG_BINARY (::tfdiag::test::BuiltTfdiag())
#define PSLOAD_BINARY (::tfdiag::test::BuiltPsload())
#define TFDIAG_SOURCE_DIR (::tfdiag::test::SourceDir())
#define TFDIAG_SHARED_DIR (::tfdiag::test::SharedDir())

namespace tfdiag::test {

// Paths fixed at configure time (tests/test_paths.cc alone is compiled with them, so that the
// other test objects do not depend on where the tree is checked out).
const char* BuiltTfdiag();  // the tfdiag binary under test
const char* BuiltPsload();  // the psload binary
const char* BuiltViewer();  // tfdiag_view, or "" when the viewer is not built
const char* SourceDir();    // the repository's root
const char* SharedDir();    // ../shared beside the repository

// A fresh temporary directory, removed (recursively) by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

struct RunResult {
  int exit_code = -1;
  std::string out, err;
};

// Runs `command` (a shell command line) with stdin from /dev/null, capturing stdout and stderr.
RunResult RunShell(const std::string& command);
// Runs the built tfdiag binary with `args` (a shell-quoted string), capturing stdout and stderr.
RunResult RunTfdiag(const std::string& args);

// Whether python3 runs here (the bench generators and harnesses under bench/twins need it; a test
// without it skips, naming what needed it).
bool HavePython3();

// Runs an independent-simulator bench script (`script`, relative to the repository root, e.g.
// bench/twins/indep/run_indep.py) with the built tfdiag on one job spec: writes `spec_json` to
// dir/spec.json and runs `script TFDIAG SPEC_FLAG dir/spec.json --work dir --json dir/out.json`,
// its output in dir/out.txt. Returns "" when it exited 0; else why: a reason starting "python3 is
// not installed" (a capability this machine lacks: skip), or the script's exit and output.
std::string RunIndepBench(const std::string& script, const std::string& spec_flag,
                          const std::string& spec_json, const TempDir& dir);

std::string ReadFile(const std::string& path);
void WriteFile(const std::string& path, const std::string& contents);

// ../shared/traces/<name>; the shared folder sits beside the repository.
std::string SharedTrace(const std::string& name);
bool SharedAvailable();
// ../shared/realworld/<name>.
std::string SharedRealworld(const std::string& name);
// True when the folder ../shared/realworld/<dir> exists.
bool SharedRealworldAvailable(const std::string& dir);
// In a test: skips it, with the reason, when ../shared/realworld/<dir> is absent.
#define TFDIAG_REQUIRE_REALWORLD(dir)                 \
  if (!::tfdiag::test::SharedRealworldAvailable(dir)) \
  GTEST_SKIP() << "no " << ::tfdiag::test::SharedRealworld(dir) << " (shared inputs absent)"

// GET `path` from 127.0.0.1:`port` over HTTP/1.0; the whole response (status line, headers,
// body), or "" when the connection fails.
std::string HttpGet(int port, const std::string& path);

// `n` distinct TCP ports on 127.0.0.1 the kernel reports free (bound to port 0, then released).
std::vector<int> FreePorts(int n);

// Spawns `sh -c '...; read x' <extra...>` with `env`, blocked on a pipe, returning once it runs
// (exec over): its pid (-1 failed) and *stdin_fd, the pipe's write end (close/write releases it).
pid_t SpawnWaitingShell(const std::vector<std::string>& extra, const std::vector<std::string>& env,
                        int* stdin_fd);

// Loads timeline files into a Capture; fails the calling test on error.
Capture LoadOrDie(const std::vector<std::string>& paths);

// The median of every worker step of `c` (ns: end - start over all workers' steps, the upper
// median); 0 when it has no worker step.
double MedianWorkerStepNs(const Capture& c);

// Writes `value` to `path` (a cgroup or /proc control file) and flushes; false when the kernel
// refused it (a bad value, a missing controller).
bool WriteControlFile(const std::string& path, const std::string& value);

// The machine's busy CPU time (/proc/stat's first line: user, nice, system, irq, softirq and
// steal, proc(5)) and this test process's own with its reaped children's (getrusage), both s,
// at one CLOCK_MONOTONIC time; steal_s is the steal part of busy_s (time the hypervisor gave
// this VM's CPUs to other guests: no process here ran then). Live tests take one before and one
// after a run to judge load.
struct CpuClock {
  double busy_s = 0, own_s = 0, wall_s = 0, steal_s = 0;
};
CpuClock ReadCpuClock();

// The cores other work used between `a` and `b`: the machine's busy time less this process's
// and its reaped children's, over the wall time (clock ticks: +-0.01 s per CPU); 0 when no time
// passed. Children still running at `b` count as other work.
double ForeignCores(const CpuClock& a, const CpuClock& b);

// The 99th percentile of `v` (the value below which 99% of them lie: v[n * 99 / 100] sorted); 0
// when empty. Live tests use it for wake-up lateness.
inline double Percentile99(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + v.size() * 99 / 100, v.end());
  return v[v.size() * 99 / 100];
}

}  // namespace tfdiag::test
