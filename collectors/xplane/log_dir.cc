#include "collectors/xplane/log_dir.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>

#include "report/escape.h"

namespace tfdiag {

namespace fs = std::filesystem;

namespace {

bool EndsWith(std::string_view n, std::string_view e) {
  return n.size() > e.size() && n.compare(n.size() - e.size(), e.size(), e) == 0;
}

// Every file of a run directory: host files (the lowest rank per host), and the rest skipped
// with the reason (tool files, a host's other formats). Other files are ignored silently.
void HostFiles(const fs::path& dir, std::vector<std::string>* files,
               std::vector<SkippedFile>* skipped) {
  std::vector<std::string> all;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    if (e.is_regular_file(ec)) all.push_back(e.path().string());
  }
  std::sort(all.begin(), all.end());
  std::vector<std::string> hosts;
  for (const std::string& f : all) {
    if (ParseHostFileName(fs::path(f).filename().string())) {
      hosts.push_back(f);
    } else if (std::string tool = ProfilerToolFile(fs::path(f).filename().string());
               !tool.empty() && skipped != nullptr) {
      skipped->push_back({f, tool, ""});
    }
  }
  const std::vector<size_t> same = SameCaptureInAnotherFormat(hosts);
  for (size_t i = 0; i < hosts.size(); ++i) {
    if (same[i] == SIZE_MAX) {
      if (files != nullptr) files->push_back(hosts[i]);
    } else if (skipped != nullptr) {
      skipped->push_back({hosts[i], "", hosts[same[i]]});
    }
  }
}

bool HasHostFiles(const fs::path& dir) {
  std::vector<std::string> files;
  HostFiles(dir, &files, nullptr);
  return !files.empty();
}

std::vector<fs::path> Subdirs(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    if (e.is_directory(ec)) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Names found in a log directory, for messages: a workload names its runs and host files, so
// control characters in them are escaped (report/escape.h) before they reach a terminal.
std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ", ") + Printable(x);
  return s;
}

}  // namespace

std::optional<HostFileName> ParseHostFileName(std::string_view n) {
  static constexpr std::string_view kSuffixes[] = {".xplane.pb", ".trace", ".trace.json.gz",
                                                   ".trace.json"};
  for (int r = 0; r < 4; ++r) {
    const std::string_view s = kSuffixes[r];
    if (EndsWith(n, s)) {
      return HostFileName{std::string(n.substr(0, n.size() - s.size())), std::string(s), r};
    }
  }
  return std::nullopt;
}

std::string ProfilerToolFile(std::string_view n) {
  if (n.substr(0, 19) == "events.out.tfevents") return "a TensorBoard events file";
  static constexpr std::string_view kTools[] = {
      "overview_page.pb", "input_pipeline.pb", "tensorflow_stats.pb",    "tf_stats.pb",
      "kernel_stats.pb",  "pod_viewer.pb",     "memory_profile.json.gz", "hlo_proto.pb"};
  for (std::string_view t : kTools) {
    // `<host>.<tool>` (or the tool's name alone); *.hlo_proto.pb is `<module>.hlo_proto.pb`.
    if (n == t || (EndsWith(n, t) && n[n.size() - t.size() - 1] == '.')) {
      return std::string(t.substr(0, t.find('.')));
    }
  }
  return "";
}

std::vector<size_t> SameCaptureInAnotherFormat(const std::vector<std::string>& paths) {
  // (directory, host) -> the index of the lowest rank (the first of equals).
  std::map<std::pair<std::string, std::string>, size_t> best;
  std::vector<std::optional<HostFileName>> parsed(paths.size());
  for (size_t i = 0; i < paths.size(); ++i) {
    const fs::path p(paths[i]);
    parsed[i] = ParseHostFileName(p.filename().string());
    if (!parsed[i]) continue;
    auto [it, added] =
        best.try_emplace({p.parent_path().lexically_normal().string(), parsed[i]->host}, i);
    if (!added && parsed[i]->rank < parsed[it->second]->rank) it->second = i;
  }
  std::vector<size_t> out(paths.size(), SIZE_MAX);
  for (size_t i = 0; i < paths.size(); ++i) {
    if (!parsed[i]) continue;
    const fs::path p(paths[i]);
    const size_t keep = best[{p.parent_path().lexically_normal().string(), parsed[i]->host}];
    // Only another format: the same file twice is the duplicate check's (load_inputs.cc).
    if (keep != i && parsed[keep]->rank != parsed[i]->rank) out[i] = keep;
  }
  return out;
}

bool IsDirectory(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec);
}

StatusOr<ProfileRun> FindProfileRun(const std::string& dir, const std::string& run) {
  const fs::path root(dir);
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return IoError("{}: not a directory", dir);
  // A run directory given directly.
  ProfileRun direct;
  HostFiles(root, &direct.files, &direct.skipped);
  if (!direct.files.empty()) {
    direct.dir = dir;
    direct.name = root.filename().string();
    direct.runs = {direct.name};
    return direct;
  }
  // plugins/profile directories: the given one, <dir>/plugins/profile, <dir>/*/plugins/profile.
  std::vector<fs::path> profiles;
  if (root.filename() == "profile" && root.parent_path().filename() == "plugins") {
    profiles.push_back(root);
  }
  if (fs::is_directory(root / "plugins" / "profile", ec)) {
    profiles.push_back(root / "plugins" / "profile");
  }
  for (const fs::path& sub : Subdirs(root)) {
    if (fs::is_directory(sub / "plugins" / "profile", ec)) {
      profiles.push_back(sub / "plugins" / "profile");
    }
  }
  // Run name -> its directories.
  std::map<std::string, std::vector<fs::path>> runs;
  for (const fs::path& p : profiles) {
    for (const fs::path& r : Subdirs(p)) runs[r.filename().string()].push_back(r);
  }
  if (runs.empty()) {
    // A directory of runs (plugins/profile itself under another name).
    for (const fs::path& r : Subdirs(root)) {
      if (HasHostFiles(r)) runs[r.filename().string()].push_back(r);
    }
  }
  std::vector<std::string> names;
  for (const auto& [n, dirs] : runs) names.push_back(n);
  if (runs.empty()) {
    return InvalidInput(
        "{}: no profile runs (expected plugins/profile/<run>/<host>.xplane.pb below it)", dir);
  }
  std::string chosen = run;
  if (chosen.empty()) {
    chosen = names.back();  // runs are named by their start time
  } else if (runs.count(chosen) == 0) {
    return InvalidInput("{}: no run named '{}' (runs: {})", dir, Printable(chosen), Join(names));
  }
  const std::vector<fs::path>& dirs = runs[chosen];
  if (dirs.size() > 1) {
    std::vector<std::string> where;
    for (const fs::path& d : dirs) where.push_back(d.string());
    return InvalidInput("{}: run '{}' is in several places ({}); give the run directory itself",
                        dir, Printable(chosen), Join(where));
  }
  ProfileRun r;
  r.dir = dirs[0].string();
  r.name = chosen;
  HostFiles(dirs[0], &r.files, &r.skipped);
  r.runs = names;
  if (r.files.empty()) {
    return InvalidInput(
        "{}: no host files (*.xplane.pb, *.trace, *.trace.json.gz) in this profile run (runs: "
        "{})",
        Printable(r.dir), Join(names));
  }
  return r;
}

}  // namespace tfdiag
