#include "collectors/xplane/host_tasks.h"

#include <cctype>
#include <fstream>
#include <sstream>
#include <vector>

namespace tfdiag {

std::string HostOfProfileFile(std::string_view path) {
  const size_t slash = path.find_last_of('/');
  std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  for (std::string_view ext : {".xplane.pb", ".trace", ".profile.pb"}) {
    if (base.size() > ext.size() && base.substr(base.size() - ext.size()) == ext) {
      return std::string(base.substr(0, base.size() - ext.size()));
    }
  }
  return "";
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

}  // namespace

HostTask HostMapper::Map(std::string_view host_in) {
  const std::string host(host_in);
  HostTask t;
  if (!cluster_.empty() && !host.empty()) {
    // "<host>_<port>" as client.trace writes it, or a bare "<host>".
    std::string h = host, port;
    const size_t us = host.rfind('_');
    if (us != std::string::npos && us + 1 < host.size() &&
        host.find_first_not_of("0123456789", us + 1) == std::string::npos) {
      h = host.substr(0, us);
      port = host.substr(us + 1);
    }
    std::vector<std::pair<std::string, int>> by_host;
    for (const auto& [job, addrs] : cluster_.jobs) {
      for (size_t i = 0; i < addrs.size(); ++i) {
        auto [ah, ap] = SplitAddress(addrs[i]);
        // A short host name matches a fully qualified address ("ps-0" ~ "ps-0.svc.local").
        const bool same_host = ah == h || (ah.size() > h.size() &&
                                           ah.compare(0, h.size(), h) == 0 && ah[h.size()] == '.');
        if (!same_host) continue;
        if (!port.empty() && ap == port) {
          return {job, static_cast<int>(i), "TF_CONFIG address " + addrs[i]};
        }
        by_host.push_back({job, static_cast<int>(i)});
      }
    }
    if (by_host.size() == 1) {
      return {by_host[0].first, by_host[0].second, "TF_CONFIG host " + h};
    }
  }
  // Kubeflow TFJob pods: "<name>-<replica type>-<index>", the replica type lower-cased.
  for (const char* job : {"ps", "worker", "chief", "master", "evaluator"}) {
    const std::string key = std::string("-") + job + "-";
    size_t at = host.rfind(key);
    if (at == std::string::npos && host.compare(0, key.size() - 1, key.substr(1)) == 0) {
      at = 0;  // "worker-0" without a job name
      const size_t start = key.size() - 1;
      size_t end = start;
      while (end < host.size() && std::isdigit(static_cast<unsigned char>(host[end]))) ++end;
      if (end > start) return {job, std::stoi(host.substr(start, end - start)), "pod name"};
      continue;
    }
    if (at == std::string::npos) continue;
    const size_t start = at + key.size();
    size_t end = start;
    while (end < host.size() && std::isdigit(static_cast<unsigned char>(host[end]))) ++end;
    if (end > start && end - start < 9) {
      return {job, std::stoi(host.substr(start, end - start)), "pod name"};
    }
  }
  t.index = unmapped_++;
  t.source = "none";
  return t;
}

}  // namespace tfdiag
