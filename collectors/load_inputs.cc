#include "collectors/load_inputs.h"

#include <fstream>

#include "collectors/timeline/timeline_reader.h"
#include "core/bundle.h"
#include "core/capture_builder.h"
#include "core/stopwatch.h"

namespace tfdiag {

StatusOr<Capture> LoadInputs(const std::vector<std::string>& paths, const LoadOptions& options) {
  if (paths.empty()) return UsageError("no input files");
  Stopwatch watch;
  CaptureBuilder builder;
  for (size_t i = 0; i < paths.size(); ++i) {
    TimelineReadOptions ro;
    ro.threads = options.threads;
    if (options.progress) {
      ro.progress = [&, i](int64_t done, int64_t total) {
        options.progress(i, paths[i], done, total);
      };
    }
    const std::string& name = i < options.names.size() ? options.names[i] : paths[i];
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
