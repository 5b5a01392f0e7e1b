// The column names of a bundle's sample tables (core/bundle.h: "process_sample_columns", ...),
// in the order core/bundle.cc writes each row and core/bundle_reader.cc expects it. Internal to
// core/. Constants; thread-safe.
#pragma once

namespace tfdiag {

inline constexpr const char* kProcessColumns[] = {
    "ts_ns",     "process",     "threads",    "runnable",     "cpu_ns",
    "voluntary", "involuntary", "nr_periods", "nr_throttled", "throttled_ns"};
inline constexpr const char* kTrafficColumns[] = {
    "ts_ns", "process", "local", "peer", "peer_task", "hdfs", "bytes_sent", "bytes_received"};
// "runq_hist" is an array of kRunqHistSlots counts (log2 ns buckets).
inline constexpr const char* kSchedColumns[] = {"ts_ns",       "process",  "voluntary",
                                                "involuntary", "oncpu_ns", "runq_wait_ns",
                                                "runq_waits",  "runq_hist"};
inline constexpr const char* kStepCountColumns[] = {"ts_ns", "process", "steps"};
inline constexpr const char* kThreadColumns[] = {"ts_ns", "process", "tid",       "name",
                                                 "state", "cpu_ns",  "voluntary", "involuntary"};

}  // namespace tfdiag
