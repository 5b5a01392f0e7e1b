// Hints appended to the error of an input that is not a profile, from the file's first bytes:
// what the file looks like and where tfdiag takes that kind of evidence. Each returns "" or a
// text that starts with " (" and ends with ")". They open `path` again (a regular file the user
// gave, read once more after its parse failed). Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace tfdiag {

// The first `max_bytes` of the file at `path`, "" when it cannot be opened.
std::string FileHead(const std::string& path, size_t max_bytes);

// For JSON that holds no trace events: a Prometheus HTTP API reply ({"status":"success",
// "data":{"resultType":...}}) or a kubelet stats summary (/stats/summary).
std::string NotTraceHint(const std::string& path);

// For a file the JSON parser refused: a RunMetadata in protobuf text format, a Prometheus scrape
// (text exposition format 0.0.4), kernel text from /proc or a cgroup (KernelTextHint), or binary
// data that is no profile format tfdiag reads.
std::string NotJsonHint(const std::string& path);

// For text `head` (a file's first bytes) that /proc or a cgroup filesystem holds, as proc(5) and
// the kernel's cgroup-v1/v2 docs lay them out: /proc/PID/status, /proc/PID/stat, /proc/stat,
// /proc/PID/cgroup, mountinfo, /proc/meminfo, /proc/net/dev, /proc/PID/io, limits, schedstat and
// statm, PSI files, cgroup cpu.stat and cpu.max, and a file of one number or CPU list
// (cpu.cfs_quota_us, cpu.shares, cpuset.cpus).
// Names what it looks like and that `tfdiag attach` (or the node agent) reads those itself.
std::string KernelTextHint(std::string_view head);

}  // namespace tfdiag
