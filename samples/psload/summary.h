// psload's exit summary: what one task did, written as JSON for tests and tfdiag's live tests.
// The schema (key "schema": "psload.summary.v1") is documented in samples/psload/README.md.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "samples/psload/net.h"
#include "samples/psload/options.h"

namespace psload {

// One socket peer's counters; peers with the same remote address are summed.
struct PeerSummary {
  std::string remote;  // "ip:port" of the other end (the key in "peers")
  std::string local;   // "ip:port" of this end
  std::string task;    // the other end's task: "ps:0", "worker:3", "hdfs:0"; "" if unknown
  uint64_t bytes_sent = 0, bytes_received = 0;    // header + payload bytes on the socket
  uint64_t frames_sent = 0, frames_received = 0;  // frames
  uint64_t rows_pulled = 0, rows_pushed = 0;      // embedding rows
  uint64_t hdfs_bytes = 0;                        // input data bytes (kData payload)
};

// Everything a task reports at exit. Plain data; filled by the role, written by WriteSummary.
struct Summary {
  std::string address;                // listen address of a PS or hdfs server; "" for workers
  std::string exit_reason = "error";  // "duration", "steps", "signal" or "error"
  std::string error;                  // why, when exit_reason is "error"
  int64_t steps = 0;                  // worker steps completed
  double wall_time_s = 0;             // seconds from serving/stepping start to stop
  uint64_t hdfs_bytes_read = 0;       // worker: input data bytes read
  uint64_t hdfs_bytes_served = 0;     // hdfs: input data bytes served
  uint64_t rows_pulled = 0, rows_pushed = 0;  // worker: rows requested; PS: rows served
  std::vector<PeerSummary> peers;
  // Worker: each completed step's wall time on the steady clock, microseconds, in order (the
  // first kMaxStepTimes steps; "step_us" in the JSON). Measured by psload itself, so tests can
  // check what tfdiag reads from the timelines against a clock it shares no code with.
  std::vector<int64_t> step_us;
};

// Step times a worker keeps for its summary (8 bytes each).
constexpr size_t kMaxStepTimes = 1 << 20;

// Adds (or sums into) the peer entry for `c`.
void AddPeer(const Conn& c, Summary* s);

// Records a thread started under `name` (StartNamedThread calls this). Thread-safe.
void CountThread(const std::string& name);
// Threads this process started over its run, by name, with the main thread's own name.
std::map<std::string, int> ThreadsStarted();

// The summary as pretty JSON.
std::string SummaryJson(const Options& o, const Summary& s);

// Writes the JSON to `path` atomically (temp file beside it, then rename). False with error set.
bool WriteSummary(const Options& o, const Summary& s, const std::string& path, std::string* error);

}  // namespace psload
