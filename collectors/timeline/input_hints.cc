#include "collectors/timeline/input_hints.h"

#include <cstdio>
#include <string>
#include <vector>

#include "core/checked_number.h"

namespace tfdiag {

namespace {

// The pieces of `text` between `sep`s, empty ones skipped.
std::vector<std::string_view> Split(std::string_view text, char sep) {
  std::vector<std::string_view> out;
  size_t at = 0;
  while (at < text.size()) {
    const size_t next = text.find(sep, at);
    const size_t end = next == std::string_view::npos ? text.size() : next;
    if (end > at) out.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

// The non-empty lines of `text`, the last one dropped when the text was cut mid-line (`cut`).
std::vector<std::string_view> Lines(std::string_view text, bool cut) {
  std::vector<std::string_view> out = Split(text, '\n');
  if (cut && !out.empty() && text.back() != '\n') out.pop_back();
  return out;
}

// "12:cpu,cpuacct:/kubepods/..." or "0::/..." (proc(5), /proc/PID/cgroup).
bool CgroupLine(std::string_view l) {
  const size_t a = l.find(':');
  if (a == std::string_view::npos || !AllDigits(l.substr(0, a))) return false;
  const size_t b = l.find(':', a + 1);
  return b != std::string_view::npos && b + 1 < l.size() && l[b + 1] == '/';
}

// "36 35 98:0 /mnt1 /mnt2 rw,noatime ..." (proc(5), /proc/PID/mountinfo).
bool MountinfoLine(std::string_view l) {
  const size_t a = l.find(' ');
  if (a == std::string_view::npos || !AllDigits(l.substr(0, a))) return false;
  const size_t b = l.find(' ', a + 1);
  if (b == std::string_view::npos || !AllDigits(l.substr(a + 1, b - a - 1))) return false;
  const size_t c = l.find(' ', b + 1);
  return c != std::string_view::npos &&
         l.substr(b + 1, c - b - 1).find(':') != std::string_view::npos && c + 1 < l.size() &&
         l[c + 1] == '/';
}

// One number ("-1", "100000") or a CPU list ("0-3,8": numbers and ranges, comma-separated).
bool NumberOrCpuList(std::string_view f) {
  if (f.size() > 1 && f[0] == '-') return AllDigits(f.substr(1));
  for (std::string_view item : Split(f, ',')) {
    const size_t dash = item.find('-');
    if (dash == std::string_view::npos
            ? !AllDigits(item)
            : !AllDigits(item.substr(0, dash)) || !AllDigits(item.substr(dash + 1))) {
      return false;
    }
  }
  return !f.empty() && f.back() != ',' && f.front() != ',';
}

// What a one-line file of numbers is, by its field count (proc(5); the kernel's cgroup-v2 doc
// for cpu.max "$MAX $PERIOD"): "" when none of these.
std::string OneLineOfNumbers(std::string_view l) {
  const std::vector<std::string_view> f = Split(l, ' ');
  for (size_t i = 0; i < f.size(); ++i) {
    if (!(i == 0 && f[i] == "max") && !NumberOrCpuList(f[i])) return "";
  }
  switch (f.size()) {
    case 1:
      return "one number or CPU list, as a cgroup file holds (cpu.cfs_quota_us, cpu.shares, "
             "cpuset.cpus)";
    case 2:
      return "a cgroup cpu.max file";
    case 3:
      return "a /proc/PID/schedstat file";
    case 7:
      return "a /proc/PID/statm file";
    default:
      return "";
  }
}

}  // namespace

std::string FileHead(const std::string& path, size_t max_bytes) {
  std::string head(max_bytes, '\0');
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return "";
  head.resize(std::fread(head.data(), 1, max_bytes, f));
  std::fclose(f);
  return head;
}

std::string KernelTextHint(std::string_view head) {
  const std::vector<std::string_view> lines = Lines(head, head.size() >= 4096);
  if (lines.empty()) return "";
  auto starts = [](std::string_view l, std::string_view p) { return l.substr(0, p.size()) == p; };
  auto all = [&](bool (*pred)(std::string_view)) {
    for (std::string_view l : lines) {
      if (!pred(l)) return false;
    }
    return true;
  };
  const std::string_view first = lines.front();
  std::string what;
  bool has_pid = false, has_state = false;
  for (std::string_view l : lines) {
    has_pid = has_pid || starts(l, "Pid:");
    has_state = has_state || starts(l, "State:");
  }
  const size_t paren = first.find(" (");
  if (starts(first, "Name:") && has_pid && has_state) {
    what = "a /proc/PID/status file";
  } else if (paren != std::string_view::npos && AllDigits(first.substr(0, paren)) &&
             first.rfind(") ") != std::string_view::npos) {
    what = "a /proc/PID/stat file";
  } else if (starts(first, "cpu ") && lines.size() > 1 && starts(lines[1], "cpu")) {
    what = "a /proc/stat file";
  } else if (all(CgroupLine)) {
    what = "a /proc/PID/cgroup file";
  } else if (all(MountinfoLine)) {
    what = "a /proc/PID/mountinfo file";
  } else if (starts(first, "MemTotal:")) {
    what = "a /proc/meminfo file";
  } else if (starts(first, "Inter-|")) {
    what = "a /proc/net/dev file";
  } else if (starts(first, "some avg10=")) {
    what = "a pressure (PSI) file";
  } else if (starts(first, "nr_periods ") || starts(first, "usage_usec ")) {
    what = "a cgroup cpu.stat file";
  } else if (starts(first, "rchar: ")) {
    what = "a /proc/PID/io file";
  } else if (starts(first, "Limit ") && first.find("Soft Limit") != std::string_view::npos) {
    what = "a /proc/PID/limits file";
  } else if (lines.size() == 1) {
    what = OneLineOfNumbers(first);
  }
  if (what.empty()) return "";
  return " (" + what +
         ", not a profile: on the node, `tfdiag attach` (or the node agent, deploy/) reads /proc "
         "and the cgroup files itself and writes a bundle for `tfdiag analyze`)";
}

namespace {

// Where a cluster's metrics belong, for files of Prometheus's formats given as profiles.
constexpr std::string_view kPrometheusHint =
    " (Prometheus metrics, not a profile: tfdiag reads a cluster's metrics from its Prometheus "
    "server, `tfdiag analyze --prometheus URL --job NAME`)";

}  // namespace

// For JSON without trace events: what the first 4 KiB look like when they are a Prometheus HTTP
// API reply ({"status":"success","data":{"resultType":...}}) or a kubelet stats summary
// (/stats/summary: {"node":{...},"pods":[...]}); else "".
std::string NotTraceHint(const std::string& path) {
  const std::string head = FileHead(path, 4096);
  if (head.find("\"resultType\"") != std::string::npos) return std::string(kPrometheusHint);
  if (head.find("\"nodeName\"") != std::string::npos &&
      head.find("\"pods\"") != std::string::npos) {
    return " (a kubelet stats summary, not a profile: tfdiag reads CPU and throttling from "
           "cAdvisor through the cluster's Prometheus, `tfdiag analyze --prometheus URL --job "
           "NAME`, or records a node with `tfdiag attach`)";
  }
  return "";
}

// A hint for files that are clearly not JSON.
std::string NotJsonHint(const std::string& path) {
  const std::string whole = FileHead(path, 4096);
  const std::string head = whole.substr(0, 64);
  const size_t n = head.size();
  size_t binary = 0;
  for (unsigned char ch : head) {
    if (ch < 0x09 || (ch > 0x0d && ch < 0x20)) ++binary;
  }
  // A RunMetadata in protobuf text format (RunMetadata.pbtxt) starts with one of its fields.
  std::string_view text(head);
  size_t start = text.find_first_not_of(" \t\r\n");
  if (binary == 0 && start != std::string_view::npos) {
    for (std::string_view field : {"step_stats", "cost_graph", "partition_graphs",
                                   "function_graphs", "dev_stats", "session_metadata"}) {
      std::string_view rest = text.substr(start);
      if (rest.substr(0, field.size()) != field) continue;
      rest.remove_prefix(field.size());
      size_t brace = rest.find_first_not_of(" \t");
      if (brace != std::string_view::npos && (rest[brace] == '{' || rest[brace] == ':')) {
        return " (protobuf text: a RunMetadata (step_stats {...}) is not a timeline; convert it "
               "with tensorflow.python.client.timeline.Timeline(run_metadata.step_stats)"
               ".generate_chrome_trace_format(show_memory=True) and pass the JSON)";
      }
    }
  }
  // A Prometheus scrape (text exposition format 0.0.4) that opens with `# HELP` or `# TYPE`.
  if (binary == 0 && start != std::string_view::npos &&
      (text.substr(start, 7) == "# HELP " || text.substr(start, 7) == "# TYPE ")) {
    return std::string(kPrometheusHint);
  }
  if (binary == 0) {
    const std::string kernel = KernelTextHint(whole);
    if (!kernel.empty()) return kernel;
  }
  if (n == 0 || binary == 0) return "";
  return " (binary data that is not a TF2 XSpace (*.xplane.pb), a TF 2.0 profiler Trace (*.trace) "
         "or a RunMetadata/StepStats protobuf either)";
}

}  // namespace tfdiag
