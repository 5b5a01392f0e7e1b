// psload: a miniature TensorFlow PS/worker job, one process per task (samples/psload/README.md).
// Exit codes: 0 clean stop (duration, step cap or SIGTERM/SIGINT), 1 runtime error (a peer
// unreachable or gone; the summary is still written), 2 bad flags or TF_CONFIG.
#include <fmt/format.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>

#include <chrono>
#include <cstdlib>

#include "samples/psload/roles.h"
#include "samples/psload/timeline.h"

namespace psload {

bool WaitForSignalOr(const std::function<bool()>& done) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  const timespec poll{0, 20'000'000};
  while (!done()) {
    if (sigtimedwait(&set, nullptr, &poll) > 0) return true;
  }
  return false;
}

std::thread StartNamedThread(const char* name, std::function<void()> fn) {
  std::thread t(std::move(fn));
  pthread_setname_np(t.native_handle(), name);
  CountThread(name);
  return t;
}

// Burns `us` microseconds of this thread's CPU time (CLOCK_THREAD_CPUTIME_ID), so that
// oversubscribed threads take longer in wall time, as real kernels do.
float SpinCpu(int64_t us, float seed) {
  timespec t0{}, t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
  const int64_t end_ns = t0.tv_sec * 1'000'000'000LL + t0.tv_nsec + us * 1000;
  float acc = seed;
  while (us > 0) {
    for (int i = 0; i < 512; ++i) acc = acc * 0.999999f + 1e-6f;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    if (t.tv_sec * 1'000'000'000LL + t.tv_nsec >= end_ns) break;
  }
  return acc;
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace psload

int main(int argc, char** argv) {
  using namespace psload;
  // Signals are taken synchronously by WaitForSignalOr; every thread inherits this mask.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);

  Options o;
  std::string error;
  if (!ParseOptions(argc, argv, std::getenv("TF_CONFIG"), &o, &error)) {
    if (error == "help") {
      fmt::print("{}", Usage());
      return 0;
    }
    fmt::print(stderr, "psload: {}\n{}", error, Usage());
    return 2;
  }

  Timeline timeline;
  if (!o.timeline.empty()) SetProcessTimeline(&timeline);
  Summary summary;
  int rc = o.job == "ps"     ? RunPs(o, &summary)
           : o.job == "hdfs" ? RunHdfs(o, &summary)
                             : RunWorker(o, &summary);
  if (!summary.error.empty()) fmt::print(stderr, "psload {}: {}\n", o.TaskName(), summary.error);

  uint64_t sent = 0, received = 0;
  for (const PeerSummary& p : summary.peers) {
    sent += p.bytes_sent;
    received += p.bytes_received;
  }
  fmt::print(stderr, "psload {}: {} after {:.2f} s, {} steps, sent {} B, received {} B\n",
             o.TaskName(), summary.exit_reason, summary.wall_time_s, summary.steps, sent, received);
  if (!o.timeline.empty()) {
    if (timeline.dropped() > 0) {
      fmt::print(stderr, "psload {}: timeline full, {} later ops not recorded\n", o.TaskName(),
                 timeline.dropped());
    }
    if (!timeline.Write(o, o.timeline, &error)) {
      fmt::print(stderr, "psload {}: {}\n", o.TaskName(), error);
      rc = 1;
    }
  }
  if (!o.summary.empty() && !WriteSummary(o, summary, o.summary, &error)) {
    fmt::print(stderr, "psload {}: {}\n", o.TaskName(), error);
    return 1;
  }
  return rc;
}
