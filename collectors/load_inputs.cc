#include "collectors/load_inputs.h"

#include <sys/stat.h>

#include <fstream>
#include <optional>

#include "collectors/timeline/timeline_reader.h"
#include "core/bundle.h"
#include "core/capture_builder.h"
#include "core/stopwatch.h"

namespace tfdiag {

namespace {

// What identifies an input's bytes: its file (device, inode) and, for a copy of the same bytes
// in another file (e.g. two pipes of one file, spooled), its size and a hash of its first and
// last 64 KiB.
struct InputId {
  dev_t dev = 0;
  ino_t ino = 0;
  int64_t size = -1;
  uint64_t hash = 0;
};

// FNV-1a over `n` bytes.
uint64_t Fnv1a(const char* p, size_t n, uint64_t h) {
  for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<unsigned char>(p[i])) * 1099511628211ull;
  return h;
}

// Nullopt when the input cannot be read (the reader then reports it).
std::optional<InputId> IdOf(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  InputId id{st.st_dev, st.st_ino, static_cast<int64_t>(st.st_size), 14695981039346656037ull};
  constexpr int64_t kPart = 64 << 10;
  std::ifstream in(path, std::ios::binary);
  std::string buf(kPart, '\0');
  in.read(buf.data(), kPart);
  id.hash = Fnv1a(buf.data(), static_cast<size_t>(in.gcount()), id.hash);
  if (id.size > kPart) {
    in.clear();
    in.seekg(std::max(kPart, id.size - kPart));
    in.read(buf.data(), kPart);
    id.hash = Fnv1a(buf.data(), static_cast<size_t>(in.gcount()), id.hash);
  }
  return id;
}

}  // namespace

StatusOr<Capture> LoadInputs(const std::vector<std::string>& paths, const LoadOptions& options) {
  if (paths.empty()) return UsageError("no input files");
  Stopwatch watch;
  CaptureBuilder builder;
  std::vector<std::optional<InputId>> ids;
  for (size_t i = 0; i < paths.size(); ++i) {
    const std::string& name = i < options.names.size() ? options.names[i] : paths[i];
    // An input given twice (the same file, or the same bytes) is read once.
    ids.push_back(IdOf(paths[i]));
    bool repeated = false;
    for (size_t j = 0; j < i && ids[i] && !repeated; ++j) {
      if (!ids[j]) continue;
      const bool same_file = ids[j]->dev == ids[i]->dev && ids[j]->ino == ids[i]->ino;
      if (same_file || (ids[j]->size == ids[i]->size && ids[j]->hash == ids[i]->hash)) {
        builder.stats().duplicates.push_back(
            {name, j < options.names.size() ? options.names[j] : paths[j],
             same_file ? "same file (device and inode)"
                       : "identical content (size, first and last 64 KiB)"});
        repeated = true;
      }
    }
    if (repeated) continue;
    TimelineReadOptions ro;
    ro.threads = options.threads;
    if (options.progress) {
      ro.progress = [&, i](int64_t done, int64_t total) {
        options.progress(i, paths[i], done, total);
      };
    }
    // Errors name the input as given.
    auto named = [&](const Status& s) {
      if (s.ok() || name == paths[i]) return s;
      std::string m = s.message();
      for (size_t at = m.find(paths[i]); at != std::string::npos; at = m.find(paths[i], at)) {
        m.replace(at, paths[i].size(), name);
        at += name.size();
      }
      return Status(s.code(), m);
    };
    const size_t before = builder.stats().files.size();
    char head[256] = {0};
    std::ifstream probe(paths[i], std::ios::binary);
    probe.read(head, sizeof head);
    if (LooksLikeBundle(std::string_view(head, static_cast<size_t>(probe.gcount())))) {
      TFDIAG_RETURN_IF_ERROR(named(ReadBundle(paths[i], &builder)));
    } else {
      TFDIAG_RETURN_IF_ERROR(named(ReadTimeline(paths[i], &builder, ro)));
    }
    for (size_t k = before; k < builder.stats().files.size(); ++k) {
      builder.stats().files[k].path = name;
    }
  }
  const double read_s = watch.Lap();
  Capture c = builder.Finish(options.threads);
  const double finish_s = watch.Lap();
  if (options.read_s != nullptr) *options.read_s = read_s;
  if (options.finish_s != nullptr) *options.finish_s = finish_s;
  return c;
}

}  // namespace tfdiag
