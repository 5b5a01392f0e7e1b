#include "collectors/xplane/log_dir.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <ctime>
#include <filesystem>
#include <iterator>
#include <map>

#include "core/escape.h"

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
// control characters in them are escaped (core/escape.h) before they reach a terminal.
std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ", ") + Printable(x);
  return s;
}

}  // namespace

std::string HostFilePatterns() {
  std::string out;
  for (std::string_view s : kHostFileSuffixes)
    out += fmt::format("{}*{}", out.empty() ? "" : ", ", s);
  return out;
}

std::optional<HostFileName> ParseHostFileName(std::string_view n) {
  for (int r = 0; r < static_cast<int>(std::size(kHostFileSuffixes)); ++r) {
    const std::string_view s = kHostFileSuffixes[r];
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

std::optional<int64_t> RunNameWallNs(std::string_view n) {
  // "2020_12_22_03_42_42" or "2019-10-07_12-49-01": 19 characters, digits at fixed places.
  if (n.size() != 19) return std::nullopt;
  int v[6] = {0};
  static constexpr int kAt[6] = {0, 5, 8, 11, 14, 17}, kLen[6] = {4, 2, 2, 2, 2, 2};
  for (int i = 0; i < 6; ++i) {
    for (int k = 0; k < kLen[i]; ++k) {
      const char c = n[static_cast<size_t>(kAt[i] + k)];
      if (c < '0' || c > '9') return std::nullopt;
      v[i] = v[i] * 10 + (c - '0');
    }
  }
  for (int sep : {4, 7, 10, 13, 16}) {
    const char c = n[static_cast<size_t>(sep)];
    if (c != '_' && c != '-') return std::nullopt;
  }
  if (v[0] < 1970 || v[1] < 1 || v[1] > 12 || v[2] < 1 || v[2] > 31 || v[3] > 23 || v[4] > 59 ||
      v[5] > 60) {
    return std::nullopt;
  }
  struct tm t = {};
  t.tm_year = v[0] - 1900;
  t.tm_mon = v[1] - 1;
  t.tm_mday = v[2];
  t.tm_hour = v[3];
  t.tm_min = v[4];
  t.tm_sec = v[5];
  const time_t secs = timegm(&t);
  if (secs < 0) return std::nullopt;
  return static_cast<int64_t>(secs) * 1'000'000'000;
}

ProfileSession SessionOfHostFile(const std::string& path) {
  const fs::path p(path);
  ProfileSession s;
  s.run = p.parent_path().filename().string();
  if (std::optional<int64_t> t = RunNameWallNs(s.run)) {
    s.wall_ns = *t;
    s.how = "run name";
    return s;
  }
  std::error_code ec;
  struct stat st;
  const int64_t file_ns =
      ::stat(path.c_str(), &st) != 0
          ? 0
          : static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  // <log dir>/plugins/profile/<run>/<host file>: the events files sit in <log dir>.
  const fs::path log_dir = p.parent_path().parent_path().parent_path().parent_path();
  int64_t best = -1;
  std::string best_name;
  if (p.parent_path().parent_path().filename() == "profile") {
    int seen = 0;
    for (const fs::directory_entry& e : fs::directory_iterator(log_dir, ec)) {
      if (++seen > kMaxLogDirEntries) break;
      const std::string name = e.path().filename().string();
      constexpr std::string_view kEvents = "events.out.tfevents.";
      if (name.rfind(kEvents, 0) != 0) continue;
      int64_t secs = 0;
      size_t i = kEvents.size();
      for (; i < name.size() && name[i] >= '0' && name[i] <= '9' && secs < 1'000'000'000'000; ++i) {
        secs = secs * 10 + (name[i] - '0');
      }
      if (i == kEvents.size()) continue;
      const int64_t ns = secs * 1'000'000'000;
      if ((file_ns == 0 || ns <= file_ns) && ns > best) {
        best = ns;
        best_name = name;
      }
    }
  }
  if (best >= 0) {
    s.wall_ns = best;
    s.how = "events file " + Printable(best_name);
  } else {
    s.wall_ns = file_ns;
    s.how = "file modification time";
  }
  return s;
}

namespace {

// The time order of runs: by the time their names say, then by name, then by path.
bool RunBefore(const ProfileRun& a, const ProfileRun& b) {
  const std::optional<int64_t> ta = RunNameWallNs(a.name), tb = RunNameWallNs(b.name);
  if (ta && tb && *ta != *tb) return *ta < *tb;
  if (ta.has_value() != tb.has_value()) return !ta.has_value();  // timed runs are the latest
  if (a.name != b.name) return a.name < b.name;
  return a.dir < b.dir;
}

// Every plugins/profile directory below `root` (kMaxLogDirDepth deep, not through symbolic
// links, kMaxLogDirEntries entries at most), sorted.
std::vector<fs::path> ProfileDirsBelow(const fs::path& root) {
  std::vector<fs::path> out;
  std::vector<std::pair<fs::path, int>> todo = {{root, 0}};
  int seen = 0;
  std::error_code ec;
  while (!todo.empty() && seen < kMaxLogDirEntries) {
    auto [dir, depth] = todo.back();
    todo.pop_back();
    if (dir.filename() == "profile" && dir.parent_path().filename() == "plugins") {
      out.push_back(dir);
      continue;
    }
    if (depth >= kMaxLogDirDepth) continue;
    for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
      if (++seen > kMaxLogDirEntries) break;
      if (e.is_symlink(ec) || !e.is_directory(ec)) continue;
      todo.emplace_back(e.path(), depth + 1);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// True when `path` ends with the path components of `tail` ("train/2020_12_22_03_42_42").
bool PathEndsWith(const fs::path& path, const std::string& tail) {
  const fs::path t = fs::path(tail).lexically_normal();
  auto pi = path.end(), ti = t.end();
  // Trailing "" component of a path ending in '/'.
  if (ti != t.begin() && std::prev(ti)->empty()) --ti;
  while (ti != t.begin()) {
    if (pi == path.begin()) return false;
    --pi, --ti;
    if (*pi != *ti) return false;
  }
  return true;
}

}  // namespace

StatusOr<std::vector<ProfileRun>> FindProfileRuns(const std::string& dir, const std::string& run) {
  // "logs/run/" names the run "run", as "logs/run" does (its filename() is empty otherwise).
  fs::path root(dir);
  while (root.has_relative_path() && root.filename().empty()) root = root.parent_path();
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return IoError("{}: not a directory", dir);
  // A run directory given directly.
  ProfileRun direct;
  HostFiles(root, &direct.files, &direct.skipped);
  if (!direct.files.empty()) {
    direct.dir = dir;
    direct.name = root.filename().string();
    direct.runs = {direct.name};
    return std::vector<ProfileRun>{direct};
  }
  // Every run below: <log dir>/plugins/profile/<run>.
  std::vector<ProfileRun> found;
  for (const fs::path& p : ProfileDirsBelow(root)) {
    for (const fs::path& r : Subdirs(p)) {
      ProfileRun pr;
      pr.dir = r.string();
      pr.name = r.filename().string();
      pr.log_dir = p.parent_path().parent_path().string();
      found.push_back(std::move(pr));
    }
  }
  if (found.empty()) {
    // A directory of runs (plugins/profile itself under another name).
    for (const fs::path& r : Subdirs(root)) {
      if (!HasHostFiles(r)) continue;
      ProfileRun pr;
      pr.dir = r.string();
      pr.name = r.filename().string();
      found.push_back(std::move(pr));
    }
  }
  if (found.empty()) {
    // A directory of timelines: one run.
    ProfileRun tl;
    int seen = 0;
    for (const fs::directory_entry& e : fs::directory_iterator(root, ec)) {
      if (++seen > kMaxLogDirEntries) break;
      const std::string n = e.path().filename().string();
      if (!e.is_regular_file(ec) || !ProfilerToolFile(n).empty()) continue;
      if (EndsWith(n, ".json") || EndsWith(n, ".json.gz")) tl.files.push_back(e.path().string());
    }
    if (!tl.files.empty()) {
      std::sort(tl.files.begin(), tl.files.end());
      tl.dir = dir;
      tl.name = root.filename().string();
      tl.runs = {tl.name};
      tl.timelines = true;
      return std::vector<ProfileRun>{tl};
    }
    return InvalidInput(
        "{}: no profile runs (expected plugins/profile/<run>/<host>.xplane.pb below it)", dir);
  }
  std::sort(found.begin(), found.end(), RunBefore);
  std::vector<std::string> names;
  for (const ProfileRun& r : found) {
    // Runs of one name in several log directories are named by their path below `dir`.
    const bool shared = std::count_if(found.begin(), found.end(),
                                      [&](const ProfileRun& o) { return o.name == r.name; }) > 1;
    names.push_back(shared ? fs::path(r.dir).lexically_relative(root).string() : r.name);
  }
  std::vector<ProfileRun> chosen;
  if (run == "all") {
    chosen = found;
  } else if (run.empty()) {
    for (const ProfileRun& r : found) {
      if (r.name == found.back().name) chosen.push_back(r);
    }
  } else {
    for (const ProfileRun& r : found) {
      // By name, or by a tail of its path, with or without plugins/profile in it.
      if (r.name == run || PathEndsWith(fs::path(r.dir), run) ||
          (!r.log_dir.empty() && PathEndsWith(fs::path(r.log_dir) / r.name, run))) {
        chosen.push_back(r);
      }
    }
    if (chosen.empty()) {
      return InvalidInput("{}: no run named '{}' (runs: {})", dir, Printable(run), Join(names));
    }
  }
  if (run != "all" && chosen.size() > 1) {
    std::vector<std::string> where;
    for (const ProfileRun& r : chosen) where.push_back(r.dir);
    return InvalidInput(
        "{}: run '{}' is in several places ({}); give the run directory itself or --run with "
        "its path",
        dir, Printable(chosen[0].name), Join(where));
  }
  for (ProfileRun& r : chosen) {
    HostFiles(fs::path(r.dir), &r.files, &r.skipped);
    r.runs = names;
    if (r.files.empty() && run != "all") {
      return InvalidInput("{}: no host files ({}) in this profile run (runs: {})", Printable(r.dir),
                          HostFilePatterns(), Join(names));
    }
  }
  if (run == "all") {
    // Runs without host files are left out of "all"; none at all is an error.
    chosen.erase(std::remove_if(chosen.begin(), chosen.end(),
                                [](const ProfileRun& r) { return r.files.empty(); }),
                 chosen.end());
    if (chosen.empty()) {
      return InvalidInput("{}: no host files ({}) in any profile run (runs: {})", dir,
                          HostFilePatterns(), Join(names));
    }
  }
  return chosen;
}

StatusOr<ProfileRun> FindProfileRun(const std::string& dir, const std::string& run) {
  StatusOr<std::vector<ProfileRun>> runs = FindProfileRuns(dir, run == "all" ? "" : run);
  if (!runs.ok()) return runs.status();
  return std::move((*runs)[0]);
}

}  // namespace tfdiag
