#include "collectors/k8s_inputs.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string_view>

#include "collectors/k8s/k8s_reader.h"
#include "collectors/xplane/log_dir.h"
#include "core/bundle.h"

namespace tfdiag {

namespace {

// The first 1 KiB of `path` ("" when unreadable).
std::string Head(const std::string& path) {
  char head[1024] = {0};
  std::ifstream probe(path, std::ios::binary);
  probe.read(head, sizeof head);
  return std::string(head, static_cast<size_t>(std::max<std::streamsize>(0, probe.gcount())));
}

// Bounds of a directory walk: a manifest directory is a repository's k8s/ folder, not a disk.
constexpr int kMaxDepth = 8;
constexpr size_t kMaxEntries = 20000;

// The regular files under `dir` (symbolic links neither followed nor read: a directory may be a
// workload's), sorted, relative to it; *log_dir true when it holds what FindProfileRuns reads
// (a `plugins` directory, a profile or event file: a TensorBoard log directory, left whole).
std::vector<std::string> FilesUnder(const std::string& dir, bool* log_dir) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
  size_t seen = 0;
  for (; !ec && it != end && ++seen <= kMaxEntries; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (it.depth() >= kMaxDepth) it.disable_recursion_pending();
    if (!name.empty() && name[0] == '.') {  // .git, editor files
      if (it->is_directory(ec)) it.disable_recursion_pending();
      continue;
    }
    const fs::file_status st = it->symlink_status(ec);
    if (fs::is_directory(st)) {
      if (name == "plugins") *log_dir = true;
      continue;
    }
    if (!fs::is_regular_file(st)) continue;
    auto ends = [&](std::string_view s) {
      return name.size() >= s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0;
    };
    if (ends(".xplane.pb") || ends(".trace.json.gz") || name.rfind("events.out.tfevents", 0) == 0)
      *log_dir = true;
    files.push_back(it->path().lexically_relative(dir).generic_string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

StatusOr<SplitInputs> SplitK8sInputs(const std::vector<std::string>& paths,
                                     const std::vector<std::string>& names) {
  SplitInputs out;
  for (size_t i = 0; i < paths.size(); ++i) {
    const std::string& path = paths[i];
    const std::string& name = i < names.size() ? names[i] : path;
    if (IsDirectory(path)) {
      // A directory of manifests and pod lists (a repository's k8s/, as kube-linter lints):
      // each Kubernetes file in it is read as if given alone; its other files (timelines) are
      // traces one by one. A TensorBoard log directory, or one with no Kubernetes file, is
      // left whole for LoadInputs.
      bool log_dir = false;
      const std::vector<std::string> files = FilesUnder(path, &log_dir);
      std::vector<std::string> k8s, other;
      if (!log_dir) {
        for (const std::string& f : files) {
          const std::string full = path + "/" + f;
          const std::string head = Head(full);
          if (!LooksLikeBundle(head) && LooksLikeK8s(head)) {
            k8s.push_back(f);
          } else {
            other.push_back(f);
          }
        }
      }
      if (!k8s.empty()) {
        const std::string shown = name.empty() || name.back() == '/' ? name : name + "/";
        // A file that names a kind but does not read (a Helm template, a half-written file) is
        // skipped with its error, as kube-linter goes on past a file it cannot parse; the
        // directory is refused only when no file of it reads. Each file is tried apart first, so
        // that one that fails half-way adds nothing.
        std::vector<std::string> unread;
        Status first_error;
        size_t read = 0;
        for (const std::string& f : k8s) {
          K8sDeployment alone;
          Status tried = ReadK8sFile(path + "/" + f, &alone, shown + f);
          if (!tried.ok()) {
            if (first_error.ok()) first_error = tried;
            unread.push_back(tried.message());
            continue;
          }
          TFDIAG_RETURN_IF_ERROR(ReadK8sFile(path + "/" + f, &out.k8s, shown + f));
          ++read;
        }
        if (read == 0) return first_error;
        for (const std::string& why : unread)
          out.k8s.notes.push_back("skipped, it does not read as a manifest: " + why);
        out.have_k8s = true;
        std::vector<std::string> skipped;
        for (const std::string& f : other) {
          const std::string ext = std::filesystem::path(f).extension().string();
          // Manifest directories hold READMEs, Helm values, kustomizations: not traces. JSON
          // and gzip files (timelines, bundles) are read as given alone.
          if (ext == ".json" || ext == ".gz" || ext == ".pb") {
            out.traces.push_back(path + "/" + f);
            out.names.push_back(shown + f);
          } else {
            skipped.push_back(f);
          }
        }
        if (!skipped.empty()) {
          out.k8s.notes.push_back(fmt::format(
              "{}: {} Kubernetes file{} read; {} other file{} skipped (no apiVersion and kind, "
              "not a timeline): {}{}",
              name, read, read == 1 ? "" : "s", skipped.size(), skipped.size() == 1 ? "" : "s",
              skipped[0],
              skipped.size() > 1 ? fmt::format(" and {} more", skipped.size() - 1) : ""));
        }
        continue;
      }
      out.traces.push_back(path);
      out.names.push_back(name);
      continue;
    }
    const std::string head = Head(path);
    if (!LooksLikeBundle(head) && IsK8sFile(path)) {
      TFDIAG_RETURN_IF_ERROR(ReadK8sFile(path, &out.k8s, name));
      out.have_k8s = true;
    } else {
      out.traces.push_back(path);
      out.names.push_back(name);
    }
  }
  return out;
}

}  // namespace tfdiag
