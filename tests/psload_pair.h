// A psload PS and worker (tests' stand-in for a TF job's pods, samples/psload), found as TF tasks
// by their TF_CONFIG, on loopback ports; killed by the destructor.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "tests/bpf_job.h"
#include "tests/test_util.h"

namespace tfdiag::test {

struct PsloadPair {
  std::vector<pid_t> pids;  // ps:0, worker:0

  // Starts ps:0 and worker:0 (which runs until killed, with `worker_args` added), logging to
  // DIR/ps.log and DIR/worker.log, and waits 0.3 s for both to exec and read TF_CONFIG.
  void Start(const TempDir& dir, const std::vector<std::string>& worker_args = {}) {
    const std::vector<int> ports = FreePorts(2);
    const std::string cluster =
        "TF_CONFIG={\"cluster\":{\"ps\":[\"127.0.0.1:" + std::to_string(ports[0]) +
        "\"],\"worker\":[\"127.0.0.1:" + std::to_string(ports[1]) + "\"]},";
    pids.push_back(SpawnProcess(PSLOAD_BINARY, {}, cluster + R"("task":{"type":"ps","index":0}})",
                                dir.File("ps.log")));
    std::vector<std::string> args = {"--duration=0"};
    args.insert(args.end(), worker_args.begin(), worker_args.end());
    pids.push_back(SpawnProcess(PSLOAD_BINARY, args,
                                cluster + R"("task":{"type":"worker","index":0}})",
                                dir.File("worker.log")));
    usleep(300 * 1000);
  }
  ~PsloadPair() {
    for (pid_t p : pids) kill(p, SIGKILL), waitpid(p, nullptr, 0);
  }
};

}  // namespace tfdiag::test
