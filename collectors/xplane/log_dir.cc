#include "collectors/xplane/log_dir.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include "report/escape.h"

namespace tfdiag {

namespace fs = std::filesystem;

namespace {

bool IsHostFile(const fs::path& p) {
  const std::string n = p.filename().string();
  auto ends = [&n](const std::string& e) {
    return n.size() > e.size() && n.compare(n.size() - e.size(), e.size(), e) == 0;
  };
  return ends(".xplane.pb") || ends(".trace");
}

std::vector<std::string> HostFiles(const fs::path& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    if (e.is_regular_file(ec) && IsHostFile(e.path())) files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
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

bool IsDirectory(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec);
}

StatusOr<ProfileRun> FindProfileRun(const std::string& dir, const std::string& run) {
  const fs::path root(dir);
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return IoError("{}: not a directory", dir);
  // A run directory given directly.
  std::vector<std::string> direct = HostFiles(root);
  if (!direct.empty()) {
    ProfileRun r;
    r.dir = dir;
    r.name = root.filename().string();
    r.files = std::move(direct);
    r.runs = {r.name};
    return r;
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
      if (!HostFiles(r).empty()) runs[r.filename().string()].push_back(r);
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
  r.files = HostFiles(dirs[0]);
  r.runs = names;
  if (r.files.empty()) {
    return InvalidInput("{}: no host files (*.xplane.pb, *.trace) in this profile run (runs: {})",
                        Printable(r.dir), Join(names));
  }
  return r;
}

}  // namespace tfdiag
