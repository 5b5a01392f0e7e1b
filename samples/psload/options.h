// psload's command line: the task's role (TF_CONFIG or TF1 flags) and the load knobs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace psload {

// Where the embedding rows go. kBalanced: id % num_ps picks the PS (a partitioned variable).
// kHot: every row lives on ps:0 (one unpartitioned table); the other PS serve only a small dense
// pull per step.
enum class Placement { kBalanced, kHot };

// Everything one psload process needs. Plain data; parsed once in main.
struct Options {
  // Role, as TF sees it: job "ps", "worker", "chief" (a worker), or "hdfs" (the input server).
  std::string job;
  int index = 0;
  std::string role_source;                                      // "TF_CONFIG" or "flags"
  std::vector<std::string> ps_hosts, worker_hosts, hdfs_hosts;  // "host:port" each

  // Load knobs.
  Placement placement = Placement::kBalanced;
  int ps_threads = 2;         // PS RPC pool size, threads named tf_ps_rpc
  int worker_threads = 1;     // worker compute threads, named tf_intra_op
  int64_t compute_us = 1000;  // CPU time per step, microseconds, split over worker_threads
  // Worker: wall time added to each step's compute without using this machine's CPU (a sleep),
  // microseconds: a compute that runs elsewhere (a device, or a slow host of the worker's own),
  // so a slow worker on a shared test machine does not take the PS's CPU. 0 = none.
  int64_t compute_sleep_us = 0;
  int rows_per_step = 512;        // embedding ids pulled and pushed per step
  int dim = 16;                   // floats per embedding row
  int64_t rows = 65536;           // rows held by each PS shard
  int dense_floats = 256;         // floats of the dense pull from PS != 0 in hot placement
  bool parallel_rpcs = false;     // worker: send every PS its request before reading any reply
  int64_t ps_cpu_ns_per_row = 0;  // PS: CPU time spent per row gathered or updated, ns
  double duration_s = 10;         // run time in seconds; PS and hdfs run until a signal unless set
  bool duration_set = false;      // --duration given explicitly
  int64_t max_steps = 0;          // 0 = no cap
  double connect_timeout_s = 30;  // how long a worker waits for its servers to come up

  // Input (HDFS-like) knobs.
  std::string hdfs;  // worker: "host:port" of the hdfs server; empty = none
  int64_t input_bytes_per_step = 256 * 1024;  // bytes read from hdfs before each step
  double hdfs_rate_mbps = 0;  // hdfs server: per-connection cap, megabits/s; 0 = none
  // Worker: batches read ahead of the step by a "tf_data_iter" thread (tf.data's
  // prefetch(N)); 0 = each step reads its input itself, before its pull.
  int prefetch = 0;
  std::string listen;  // hdfs server: "host:port" to bind (default 0.0.0.0:9866)

  std::string summary;  // JSON summary path; empty = none
  // Worker: a step counter file (name ending in ".tfdiag-steps", the convention tfdiag attach
  // reads, collectors/attach/step_counter.h) kept open and rewritten after every step; "" none.
  std::string step_file;
  // A TF1 timeline of the task's own ops (samples/psload/timeline.h), written at exit; "" none.
  std::string timeline;
  // PS: the timeline also gives each variable the task holds with its size, as TF's
  // generate_chrome_trace_format(show_memory=True) does (a tensor snapshot, requested_bytes).
  bool show_memory = false;
  uint64_t seed = 0;  // id generator seed; 0 = derived from the task index

  // "worker:0" style task name.
  std::string TaskName() const { return job + ":" + std::to_string(index); }
  bool IsWorker() const { return job == "worker" || job == "chief"; }
};

// Parses argv (flags "--name=value" or "--name value"; '_' and '-' are interchangeable in names)
// and, when --job_name is absent, the TF_CONFIG JSON in `tf_config` (nullptr = unset).
// Returns false with `error` naming the flag or the TF_CONFIG field on any problem.
bool ParseOptions(int argc, char** argv, const char* tf_config, Options* out, std::string* error);

// Parses a TF_CONFIG value into out->job/index/ps_hosts/worker_hosts/hdfs_hosts.
bool ParseTfConfig(const std::string& json, Options* out, std::string* error);

// The usage text printed for --help and after a flag error.
std::string Usage();

const char* PlacementName(Placement p);

}  // namespace psload
