#include "collectors/procfs/cgroup_reader.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <charconv>

#include "collectors/procfs/proc_reader.h"

namespace tfdiag {
namespace {

bool ParseI64(std::string_view s, int64_t* out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  for (;;) {
    size_t i = s.find(sep);
    out.push_back(s.substr(0, i));
    if (i == std::string_view::npos) return out;
    s.remove_prefix(i + 1);
  }
}

std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> out = Split(text, '\n');
  if (!out.empty() && out.back().empty()) out.pop_back();
  return out;
}

std::vector<std::string_view> Fields(std::string_view s) {
  std::vector<std::string_view> out;
  for (std::string_view f : Split(Trim(s), ' ')) {
    f = Trim(f);
    if (!f.empty()) out.push_back(f);
  }
  return out;
}

// mountinfo escapes space, tab, newline and backslash as \ooo (proc.rst 3.5).
std::string Unescape(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '7' && s[i + 2] >= '0' &&
        s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
      out.push_back(
          static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0')));
      i += 3;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

bool Has(const std::vector<std::string>& v, std::string_view x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// Reads an optional file: nullopt when it does not exist, an error for any other failure.
StatusOr<std::optional<std::string>> ReadOptional(const std::string& path) {
  auto text = ReadKernelFile(path);
  if (text.ok()) return std::optional<std::string>(std::move(*text));
  if (text.status().code() == StatusCode::kNotFound) return std::optional<std::string>();
  return text.status();
}

// The directory of `entry`'s cgroup under mount `m`, or an error when it is not visible there.
StatusOr<std::string> CgroupDir(const CgroupEntry& entry, const CgroupMount& m,
                                const std::string& root) {
  std::string_view rel = entry.path;
  if (rel == "/.." || rel.find("/../") != std::string_view::npos || rel.substr(0, 3) == "/..") {
    return Status(StatusCode::kUnavailable,
                  fmt::format("cgroup '{}' lies outside this cgroup namespace", entry.path));
  }
  if (m.root != "/") {
    std::string_view mr = m.root;
    if (rel.substr(0, mr.size()) != mr || (rel.size() > mr.size() && rel[mr.size()] != '/')) {
      return Status(StatusCode::kUnavailable,
                    fmt::format("cgroup '{}' is not below mount {} (root {})", entry.path,
                                m.mount_point, m.root));
    }
    rel.remove_prefix(mr.size());
  }
  if (rel == "/") rel = "";
  return RootedPath(root, m.mount_point + std::string(rel));
}

// The directories from `dir` up to `top` (both included), innermost first.
std::vector<std::string> Ancestors(const std::string& dir, const std::string& top) {
  std::vector<std::string> out{dir};
  if (dir.compare(0, top.size(), top) != 0) return out;
  std::string d = dir;
  while (d.size() > top.size()) {
    size_t slash = d.rfind('/');
    d.resize(slash == std::string::npos || slash < top.size() ? top.size() : slash);
    out.push_back(d);
  }
  return out;
}

double Limit(const CfsQuota& q) {
  return q.quota_us >= 0 && q.period_us > 0 ? static_cast<double>(q.quota_us) / q.period_us : 0.0;
}

// Reads one optional integer file into `out`.
Status ReadIntInto(const std::string& path, std::optional<int64_t>* out) {
  auto text = ReadOptional(path);
  if (!text.ok()) return text.status();
  if (!text->has_value()) return OkStatus();
  auto v = ParseIntFile(**text, path);
  if (!v.ok()) return v.status();
  *out = *v;
  return OkStatus();
}

Status ReadCpuStatInto(const std::string& path, CpuStat* out) {
  auto text = ReadOptional(path);
  if (!text.ok()) return text.status();
  if (!text->has_value()) return OkStatus();
  auto st = ParseCpuStat(**text);
  if (!st.ok()) return st.status().WithPrefix(path);
  *out = *st;
  return OkStatus();
}

// The CPU list in the first of `files` found in `dirs` (innermost first).
Status ReadCpuset(const std::vector<std::string>& dirs, std::initializer_list<const char*> files,
                  CgroupCpu* out) {
  for (const std::string& d : dirs) {
    for (const char* f : files) {
      std::string path = d + "/" + f;
      auto text = ReadOptional(path);
      if (!text.ok()) return text.status();
      if (!text->has_value()) continue;
      auto cpus = ParseCpuList(**text);
      if (!cpus.ok()) return cpus.status().WithPrefix(path);
      out->cpuset = std::move(*cpus);
      out->cpuset_count = static_cast<int>(out->cpuset.size());
      return OkStatus();
    }
  }
  return OkStatus();
}

// Quota of one directory: v1 cpu.cfs_{quota,period}_us or v2 cpu.max; nullopt when absent.
StatusOr<std::optional<CfsQuota>> ReadQuota(const std::string& dir, int version) {
  if (version == 2) {
    std::string path = dir + "/cpu.max";
    auto text = ReadOptional(path);
    if (!text.ok()) return text.status();
    if (!text->has_value()) return std::optional<CfsQuota>();
    auto q = ParseCpuMax(**text);
    if (!q.ok()) return q.status().WithPrefix(path);
    return std::optional<CfsQuota>(*q);
  }
  auto quota = ReadOptional(dir + "/cpu.cfs_quota_us");
  if (!quota.ok()) return quota.status();
  auto period = ReadOptional(dir + "/cpu.cfs_period_us");
  if (!period.ok()) return period.status();
  if (!quota->has_value() || !period->has_value()) return std::optional<CfsQuota>();
  auto q = ParseCfsQuotaPeriod(**quota, **period);
  if (!q.ok()) return q.status().WithPrefix(dir + "/cpu.cfs_{quota,period}_us");
  return std::optional<CfsQuota>(*q);
}

Status FillQuota(const std::string& dir, const std::string& top, int version, CgroupCpu* out) {
  auto own = ReadQuota(dir, version);
  if (!own.ok()) return own.status();
  if (own->has_value()) {
    out->quota_us = (*own)->quota_us;
    out->period_us = (*own)->period_us;
    out->cpu_limit = Limit(**own);
  }
  out->effective_cpu_limit = out->cpu_limit;
  for (const std::string& d : Ancestors(dir, top)) {
    if (d == dir) continue;
    auto q = ReadQuota(d, version);
    if (!q.ok()) return q.status();
    double l = q->has_value() ? Limit(**q) : 0.0;
    if (l > 0 && (out->effective_cpu_limit == 0 || l < out->effective_cpu_limit)) {
      out->effective_cpu_limit = l;
    }
  }
  return OkStatus();
}

const CgroupMount* FindMount(const std::vector<CgroupMount>& mounts, bool v2,
                             std::string_view controller) {
  for (const CgroupMount& m : mounts) {
    if (m.v2 == v2 && (v2 || Has(m.controllers, controller))) return &m;
  }
  return nullptr;
}

const CgroupEntry* FindEntry(const std::vector<CgroupEntry>& entries, bool v2,
                             std::string_view controller) {
  for (const CgroupEntry& e : entries) {
    if (e.v2() == v2 && (v2 || Has(e.controllers, controller))) return &e;
  }
  return nullptr;
}

// The v1 directory of `controller`, or "" when that controller is not mounted or not listed.
StatusOr<std::string> V1Dir(const std::vector<CgroupEntry>& entries,
                            const std::vector<CgroupMount>& mounts, std::string_view controller,
                            const std::string& root, std::string* top) {
  const CgroupMount* m = FindMount(mounts, false, controller);
  const CgroupEntry* e = FindEntry(entries, false, controller);
  if (m == nullptr || e == nullptr) return std::string();
  if (top != nullptr) *top = RootedPath(root, m->mount_point);
  return CgroupDir(*e, *m, root);
}

}  // namespace

StatusOr<std::vector<CgroupEntry>> ParseProcCgroup(std::string_view text) {
  std::vector<CgroupEntry> out;
  int line_no = 0;
  for (std::string_view line : Lines(text)) {
    ++line_no;
    if (Trim(line).empty()) continue;
    size_t c1 = line.find(':');
    size_t c2 = c1 == std::string_view::npos ? c1 : line.find(':', c1 + 1);
    CgroupEntry e;
    int64_t id = 0;
    if (c2 == std::string_view::npos || !ParseI64(line.substr(0, c1), &id) || id < 0 ||
        c2 + 1 >= line.size() || line[c2 + 1] != '/') {
      return InvalidInput("cgroup: line {}: '{}': expected 'ID:controllers:/path'", line_no, line);
    }
    e.hierarchy_id = static_cast<int>(id);
    std::string_view ctrls = line.substr(c1 + 1, c2 - c1 - 1);
    if (!ctrls.empty()) {
      for (std::string_view c : Split(ctrls, ',')) e.controllers.emplace_back(c);
    }
    e.path = std::string(line.substr(c2 + 1));
    out.push_back(std::move(e));
  }
  return out;
}

StatusOr<std::vector<CgroupEntry>> ReadProcCgroup(pid_t pid, const std::string& root) {
  std::string path = RootedPath(root, fmt::format("/proc/{}/cgroup", pid));
  auto text = ReadKernelFile(path);
  if (!text.ok()) return text.status();
  auto r = ParseProcCgroup(*text);
  if (!r.ok()) return r.status().WithPrefix(path);
  return r;
}

StatusOr<std::vector<CgroupMount>> ParseMountInfo(std::string_view text) {
  std::vector<CgroupMount> out;
  int line_no = 0;
  for (std::string_view line : Lines(text)) {
    ++line_no;
    size_t sep = line.find(" - ");
    std::vector<std::string_view> pre = Fields(line.substr(0, sep));
    if (sep == std::string_view::npos) {
      if (line.find("cgroup") == std::string_view::npos) continue;  // not ours: tolerate
      return InvalidInput("mountinfo: line {}: '{}': no ' - ' separator", line_no, line);
    }
    std::vector<std::string_view> post = Fields(line.substr(sep + 3));
    if (post.empty() || (post[0] != "cgroup" && post[0] != "cgroup2")) continue;
    if (pre.size() < 5 || post.size() < 3) {
      return InvalidInput("mountinfo: line {}: '{}': too few fields", line_no, line);
    }
    CgroupMount m;
    m.v2 = post[0] == "cgroup2";
    m.root = Unescape(pre[3]);
    m.mount_point = Unescape(pre[4]);
    if (!m.v2) {
      for (std::string_view opt : Split(post[2], ',')) {
        static constexpr std::string_view kNotControllers[] = {
            "rw", "ro", "xattr", "noprefix", "clone_children", "cpuset_v2_mode", "favordynmods"};
        bool skip = std::find(std::begin(kNotControllers), std::end(kNotControllers), opt) !=
                    std::end(kNotControllers);
        if (opt.find('=') != std::string_view::npos && opt.substr(0, 5) != "name=") skip = true;
        if (!skip && !opt.empty()) m.controllers.emplace_back(opt);
      }
    }
    out.push_back(std::move(m));
  }
  return out;
}

StatusOr<std::vector<CgroupMount>> ReadMountInfo(pid_t pid, const std::string& root) {
  std::string path = RootedPath(root, pid == 0 ? std::string("/proc/self/mountinfo")
                                               : fmt::format("/proc/{}/mountinfo", pid));
  auto text = ReadKernelFile(path);
  if (!text.ok()) return text.status();
  auto r = ParseMountInfo(*text);
  if (!r.ok()) return r.status().WithPrefix(path);
  return r;
}

StatusOr<int64_t> ParseIntFile(std::string_view text, std::string_view what) {
  std::string_view t = Trim(text);
  int64_t v = 0;
  if (!ParseI64(t, &v)) return InvalidInput("{}: expected an integer, got '{}'", what, t);
  return v;
}

StatusOr<CfsQuota> ParseCpuMax(std::string_view text) {
  std::vector<std::string_view> f = Fields(text);
  if (f.size() != 2) {
    return InvalidInput("cpu.max: expected '<quota|max> <period>' (2 fields), got {} field{}",
                        f.size(), f.size() == 1 ? "" : "s");
  }
  CfsQuota q;
  if (f[0] != "max" && (!ParseI64(f[0], &q.quota_us) || q.quota_us <= 0)) {
    return InvalidInput("cpu.max: quota: expected 'max' or a positive integer (us), got '{}'",
                        f[0]);
  }
  if (!ParseI64(f[1], &q.period_us)) {
    return InvalidInput("cpu.max: period: expected an integer (us), got '{}'", f[1]);
  }
  if (q.period_us <= 0) return InvalidInput("cpu.max: period: must be positive, got {}", f[1]);
  return q;
}

StatusOr<CfsQuota> ParseCfsQuotaPeriod(std::string_view quota_text, std::string_view period_text) {
  auto quota = ParseIntFile(quota_text, "cpu.cfs_quota_us");
  if (!quota.ok()) return quota.status();
  auto period = ParseIntFile(period_text, "cpu.cfs_period_us");
  if (!period.ok()) return period.status();
  if (*period <= 0) return InvalidInput("cpu.cfs_period_us: must be positive, got {}", *period);
  if (*quota < -1 || *quota == 0) {
    return InvalidInput("cpu.cfs_quota_us: expected -1 or a positive integer, got {}", *quota);
  }
  CfsQuota q;
  q.quota_us = *quota < 0 ? -1 : *quota;
  q.period_us = *period;
  return q;
}

StatusOr<CpuStat> ParseCpuStat(std::string_view text) {
  CpuStat st;
  struct Key {
    std::string_view name;
    std::optional<int64_t> CpuStat::*field;
    int64_t to_ns;  // multiplier to the field's unit (1 for counters and ns, 1000 for usec)
  };
  static const Key kKeys[] = {
      {"nr_periods", &CpuStat::nr_periods, 1},
      {"nr_throttled", &CpuStat::nr_throttled, 1},
      {"throttled_time", &CpuStat::throttled_ns, 1},
      {"throttled_usec", &CpuStat::throttled_ns, 1000},
      {"nr_bursts", &CpuStat::nr_bursts, 1},
      {"burst_time", &CpuStat::burst_ns, 1},
      {"burst_usec", &CpuStat::burst_ns, 1000},
      {"usage_usec", &CpuStat::usage_ns, 1000},
      {"user_usec", &CpuStat::user_ns, 1000},
      {"system_usec", &CpuStat::system_ns, 1000},
  };
  for (std::string_view line : Lines(text)) {
    std::vector<std::string_view> f = Fields(line);
    if (f.size() < 2) continue;
    for (const Key& k : kKeys) {
      if (f[0] != k.name) continue;
      int64_t v = 0;
      if (!ParseI64(f[1], &v))
        return InvalidInput("cpu.stat: {}: not a number: '{}'", k.name, f[1]);
      st.*k.field = v * k.to_ns;
    }
  }
  return st;
}

StatusOr<CgroupCpu> ResolveCgroupCpu(const std::vector<CgroupEntry>& cgroups,
                                     const std::vector<CgroupMount>& mounts,
                                     const std::string& root) {
  CgroupCpu out;
  std::string top;
  auto cpu_dir = V1Dir(cgroups, mounts, "cpu", root, &top);
  if (!cpu_dir.ok()) return cpu_dir.status();
  if (!cpu_dir->empty()) {
    out.version = 1;
    out.path = FindEntry(cgroups, false, "cpu")->path;
  } else {
    const CgroupMount* m = FindMount(mounts, true, "");
    const CgroupEntry* e = FindEntry(cgroups, true, "");
    if (m == nullptr || e == nullptr) {
      return Status(StatusCode::kUnavailable,
                    "no cpu cgroup: neither a v1 cpu controller nor a cgroup2 hierarchy is mounted "
                    "and listed for the process");
    }
    auto dir = CgroupDir(*e, *m, root);
    if (!dir.ok()) return dir.status();
    *cpu_dir = *dir;
    top = RootedPath(root, m->mount_point);
    out.version = 2;
    out.path = e->path;
  }
  out.dir = *cpu_dir;
  struct stat sb;
  if (::stat(out.dir.c_str(), &sb) != 0) {
    return NotFound("{}: cgroup directory is gone (errno {})", out.dir, errno);
  }
  TFDIAG_RETURN_IF_ERROR(FillQuota(out.dir, top, out.version, &out));
  TFDIAG_RETURN_IF_ERROR(ReadCpuStatInto(out.dir + "/cpu.stat", &out.stat));
  if (out.version == 1) {
    TFDIAG_RETURN_IF_ERROR(ReadIntInto(out.dir + "/cpu.shares", &out.shares));
    auto acct = V1Dir(cgroups, mounts, "cpuacct", root, nullptr);
    if (!acct.ok()) return acct.status();
    if (!acct->empty())
      TFDIAG_RETURN_IF_ERROR(ReadIntInto(*acct + "/cpuacct.usage", &out.usage_ns));
    std::string cs_top;
    auto cs = V1Dir(cgroups, mounts, "cpuset", root, &cs_top);
    if (!cs.ok()) return cs.status();
    if (!cs->empty()) {
      TFDIAG_RETURN_IF_ERROR(ReadCpuset({*cs}, {"cpuset.effective_cpus", "cpuset.cpus"}, &out));
    }
  } else {
    TFDIAG_RETURN_IF_ERROR(ReadIntInto(out.dir + "/cpu.weight", &out.weight));
    out.usage_ns = out.stat.usage_ns;
    // cpuset.cpus.effective exists only where the cpuset controller is enabled: walk up.
    TFDIAG_RETURN_IF_ERROR(ReadCpuset(Ancestors(out.dir, top), {"cpuset.cpus.effective"}, &out));
  }
  return out;
}

StatusOr<CgroupCpu> ReadCgroupCpu(pid_t pid, const std::string& root) {
  auto cgroups = ReadProcCgroup(pid, root);
  if (!cgroups.ok()) return cgroups.status();
  auto mounts = ReadMountInfo(0, root);
  if (!mounts.ok()) return mounts.status();
  return ResolveCgroupCpu(*cgroups, *mounts, root);
}

}  // namespace tfdiag
