#include "collectors/xplane/host_tasks.h"

#include <fmt/format.h>

#include <cctype>
#include <fstream>
#include <map>
#include <sstream>
#include <string_view>
#include <vector>

#include "collectors/xplane/log_dir.h"
#include "core/checked_number.h"
#include "core/tf_roles.h"

namespace tfdiag {

std::string HostOfProfileFile(std::string_view path) {
  const size_t slash = path.find_last_of('/');
  const std::optional<HostFileName> h =
      ParseHostFileName(slash == std::string_view::npos ? path : path.substr(slash + 1));
  return h ? h->host : "";
}

namespace {

constexpr const char* kUnmappedHow =
    "no TF_CONFIG entry, pod, replica spec or pod name matches it; give --tf-config, or the job's "
    "manifest or pod list beside the profile";

std::string OneHostNote(const std::string& path, const std::string& host, const HostTask& t) {
  return fmt::format("{}: host '{}' read as {}:{} ({})", path, host, t.job, t.index,
                     t.source == "none" ? kUnmappedHow : t.source);
}

// The log directory of a host file: "<logdir>" of "<logdir>/plugins/profile/<run>/<file>", else
// the file's directory.
std::string LogDirOf(const std::string& path) {
  std::string dir =
      path.substr(0, path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/'));
  const size_t run = dir.find_last_of('/');
  if (run != std::string::npos) {
    const std::string_view above = std::string_view(dir).substr(0, run);
    constexpr std::string_view kProfile = "plugins/profile";
    if (above == kProfile) return ".";
    if (above.size() > kProfile.size() &&
        above.substr(above.size() - kProfile.size() - 1) == "/plugins/profile") {
      return std::string(above.substr(0, above.size() - kProfile.size() - 1));
    }
  }
  return dir.empty() ? "." : dir;
}

}  // namespace

HostTask MapProfileHost(const std::string& path, HostMapper* mapper,
                        std::vector<std::string>* notes) {
  const std::string host = HostOfProfileFile(path);
  HostTask t = mapper->Map(host);
  if (!t.error.ok()) return t;
  if (mapper->collecting()) {
    mapper->Record(path, host, t);
  } else if (notes != nullptr) {
    notes->push_back(OneHostNote(path, host, t));
  }
  return t;
}

void HostMapper::Record(const std::string& path, const std::string& host, const HostTask& task) {
  mapped_.push_back({path, host, task});
}

std::vector<std::string> HostMapper::HostNotes() const {
  std::vector<std::string> dirs;  // in the order first met
  std::map<std::string, std::vector<const Mapped*>> by_dir;
  std::map<std::pair<std::string, std::string>, int> files;  // (dir, host) -> host files read
  for (const Mapped& m : mapped_) {
    const std::string dir = LogDirOf(m.path);
    auto [it, fresh] = by_dir.try_emplace(dir);
    if (fresh) dirs.push_back(dir);
    bool seen = false;  // one host in several runs (sessions) is listed once
    for (const Mapped* o : it->second) seen |= o->host == m.host;
    if (!seen) it->second.push_back(&m);
    ++files[{dir, m.host}];
  }
  std::vector<std::string> out;
  constexpr size_t kListed = 12;
  for (const std::string& dir : dirs) {
    const std::vector<const Mapped*>& hosts = by_dir[dir];
    if (hosts.size() == 1) {
      const int n = files[{dir, hosts[0]->host}];
      out.push_back(OneHostNote(n == 1 ? hosts[0]->path : fmt::format("{} ({} host files)", dir, n),
                                hosts[0]->host, hosts[0]->task));
      continue;
    }
    std::string list;
    std::map<std::string, int> rules;  // the rule that mapped them ("pod list x.json", "none")
    for (size_t i = 0; i < hosts.size(); ++i) {
      const HostTask& t = hosts[i]->task;
      if (i < kListed) {
        list += fmt::format("{}{} -> {}:{}", i ? ", " : "", hosts[i]->host, t.job, t.index);
      }
      ++rules[t.source.substr(0, t.source.find(": "))];
    }
    if (hosts.size() > kListed) list += fmt::format(", and {} more", hosts.size() - kListed);
    std::string how;
    for (const auto& [rule, n] : rules) {
      how += fmt::format("{}{}: {}", how.empty() ? "" : "; ",
                         rule == "none" ? fmt::format("unmapped ({})", kUnmappedHow) : "by " + rule,
                         n);
    }
    out.push_back(fmt::format("{}: {} hosts read as tasks: {} ({})", dir, hosts.size(), list, how));
  }
  return out;
}

StatusOr<ClusterSpec> ClusterFromTfConfigArg(const std::string& arg) {
  std::string json = arg, what = "--tf-config";
  size_t i = arg.find_first_not_of(" \t\r\n");
  if (i == std::string::npos || arg[i] != '{') {
    std::ifstream f(arg, std::ios::binary);
    if (!f) return IoError("--tf-config {}: cannot open (give a file or the JSON itself)", arg);
    std::stringstream ss;
    ss << f.rdbuf();
    json = ss.str();
    what = "--tf-config " + arg;
  }
  StatusOr<TfTaskConfig> cfg = ParseTfConfig(json);
  if (!cfg.ok()) return cfg.status().WithPrefix(what);
  if (cfg->cluster.empty()) return InvalidInput("{}: no \"cluster\" in it", what);
  return cfg->cluster;
}

namespace {

// "h:2222" -> {"h", "2222"}.
std::pair<std::string, std::string> SplitAddress(const std::string& a) {
  const size_t colon = a.rfind(':');
  if (colon == std::string::npos) return {a, ""};
  return {a.substr(0, colon), a.substr(colon + 1)};
}

// The index in "<prefix><digits>", or -1 (also for an index past kMaxHostTaskIndex).
int IndexAfter(const std::string& name, const std::string& prefix) {
  int i = -1;
  if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0 ||
      !ParseIntIn(std::string_view(name).substr(prefix.size()), 0, kMaxHostTaskIndex, &i)) {
    return -1;
  }
  return i;
}

}  // namespace

bool HostMapper::MapByK8s(const std::string& host, HostTask* t) const {
  if (k8s_ == nullptr || host.empty()) return false;
  // An IPv4 address stays whole; a DNS name is matched by its first label.
  const bool ip = host.find_first_not_of("0123456789.") == std::string::npos;
  const std::string label = ip ? host : host.substr(0, host.find('.'));
  for (const K8sPod& p : k8s_->pods) {
    if (p.role.empty() || p.index < 0) continue;
    const char* how = !p.pod_ip.empty() && p.pod_ip == host               ? "pod IP"
                      : !ip && p.name == label                            ? "pod name"
                      : !ip && !p.hostname.empty() && p.hostname == label ? "pod hostname"
                                                                          : nullptr;
    if (how == nullptr) continue;
    *t = {p.role,
          p.index,
          fmt::format("pod list {}: pod {} ({} {}, role from {})", p.source.Where(), p.name, how,
                      host, p.role_source),
          {}};
    return true;
  }
  if (ip) return false;
  for (const K8sReplicaType& r : k8s_->replicas) {
    // Deployments, Jobs, ReplicaSets: pod names end in a random suffix, not the task index.
    const K8sPodNaming naming = PodNamingOf(r);
    if (r.role.empty() || !naming.indexed) continue;
    const int i = IndexAfter(label, naming.prefix);
    if (i < 0 || (r.replicas_given && i >= r.replicas)) continue;
    *t = {r.role,
          i,
          fmt::format("manifest {}: {} {}{}{} (pod {})", r.source.Where(), r.object_kind,
                      r.object_name, r.name.empty() ? "" : " replica type ", r.name, label),
          {}};
    return true;
  }
  return false;
}

HostTask HostMapper::Map(std::string_view host_in) {
  const std::string host(host_in);
  HostTask t;
  // "<host>_<port>" as client.trace writes it, or a bare "<host>".
  std::string h = host, port;
  const size_t us = host.rfind('_');
  if (us != std::string::npos && us + 1 < host.size() &&
      host.find_first_not_of("0123456789", us + 1) == std::string::npos) {
    h = host.substr(0, us);
    port = host.substr(us + 1);
  }
  if (!cluster_.empty() && !host.empty()) {
    std::vector<std::pair<std::string, int>> by_host;
    for (const auto& [job, addrs] : cluster_.jobs) {
      for (const TaskAddress& a : addrs) {
        auto [ah, ap] = SplitAddress(a.address);
        // A short host name matches a fully qualified address ("ps-0" ~ "ps-0.svc.local").
        const bool same_host = ah == h || (ah.size() > h.size() &&
                                           ah.compare(0, h.size(), h) == 0 && ah[h.size()] == '.');
        if (!same_host) continue;
        if (!port.empty() && ap == port) {
          return {job, a.index, "TF_CONFIG address " + a.address, {}};
        }
        by_host.push_back({job, a.index});
      }
    }
    if (by_host.size() == 1) {
      return {by_host[0].first, by_host[0].second, "TF_CONFIG host " + h, {}};
    }
  }
  if (MapByK8s(h, &t)) return t;
  // Kubeflow TFJob pods: "<name>-<replica type>-<index>", the replica type lower-cased.
  for (std::string_view role : kTfRoles) {
    const std::string job(role);
    const std::string key = "-" + job + "-";
    size_t at = host.rfind(key);
    const bool bare = at == std::string::npos &&
                      host.compare(0, key.size() - 1, key.substr(1)) == 0;  // "worker-0"
    if (at == std::string::npos && !bare) continue;
    const size_t start = bare ? key.size() - 1 : at + key.size();
    size_t end = start;
    while (end < host.size() && std::isdigit(static_cast<unsigned char>(host[end]))) ++end;
    if (end == start) continue;
    const std::string_view digits = std::string_view(host).substr(start, end - start);
    int index = 0;
    if (!ParseIntIn(digits, 0, kMaxHostTaskIndex, &index)) {
      t.error = InvalidInput(
          "host '{}' (the profile file's name): task index {} of {} is out of range; expected "
          "0..{}",
          host, digits, job, kMaxHostTaskIndex);
      return t;
    }
    return {job, index, "pod name", {}};
  }
  t.index = unmapped_.emplace(host, static_cast<int>(unmapped_.size())).first->second;
  t.source = "none";
  return t;
}

}  // namespace tfdiag
