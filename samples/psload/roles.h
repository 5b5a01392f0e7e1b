// psload's three roles. Each runs on the calling (main) thread until a signal, its duration or
// its work ends, fills `summary`, and returns the process exit code (0 clean, 1 runtime error).
// main() blocks SIGTERM, SIGINT and SIGPIPE in every thread before calling a role, so signals
// arrive only through WaitForSignalOr.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include "samples/psload/options.h"
#include "samples/psload/summary.h"

namespace psload {

// PS: serves pull/push on its cluster address with a pool of `ps_threads` "tf_ps_rpc" threads.
int RunPs(const Options& o, Summary* summary);
// Worker (or chief): steps against every PS, optionally reading input from an hdfs server.
int RunWorker(const Options& o, Summary* summary);
// HDFS-like input server: streams input bytes on request, rate-capped per connection.
int RunHdfs(const Options& o, Summary* summary);

// Blocks until SIGTERM/SIGINT arrives (returns true) or done() is true (returns false); done() is
// polled every 20 ms.
bool WaitForSignalOr(const std::function<bool()>& done);

// Starts a thread named `name` (at most 15 characters, as /proc/<pid>/task/<tid>/comm shows it).
std::thread StartNamedThread(const char* name, std::function<void()> fn);

// Burns `us` microseconds of this thread's CPU time (CLOCK_THREAD_CPUTIME_ID), so that
// oversubscribed threads take longer in wall time, as real kernels do; returns a value to keep.
float SpinCpu(int64_t us, float seed);

// Seconds since `start` on the steady clock.
double SecondsSince(std::chrono::steady_clock::time_point start);

// Runs a server role (PS or hdfs): Start, serve until a signal or --duration, Stop, Fill the
// summary. `Server` has Start(std::string* error), address(), Stop(), Fill(Summary*).
template <typename Server>
int RunServer(const Options& o, Summary* summary) {
  Server server(o);
  std::string error;
  if (!server.Start(&error)) {
    summary->error = error;
    return 1;
  }
  summary->address = server.address();
  auto start = std::chrono::steady_clock::now();
  bool signal =
      WaitForSignalOr([&] { return o.duration_set && SecondsSince(start) >= o.duration_s; });
  server.Stop();
  server.Fill(summary);
  summary->wall_time_s = SecondsSince(start);
  summary->exit_reason = signal ? "signal" : "duration";
  return 0;
}

}  // namespace psload
