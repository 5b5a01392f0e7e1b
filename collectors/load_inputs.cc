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
    char head[256] = {0};
    std::ifstream probe(paths[i], std::ios::binary);
    probe.read(head, sizeof head);
    if (LooksLikeBundle(std::string_view(head, static_cast<size_t>(probe.gcount())))) {
      TFDIAG_RETURN_IF_ERROR(ReadBundle(paths[i], &builder));
      continue;
    }
    TFDIAG_RETURN_IF_ERROR(ReadTimeline(paths[i], &builder, ro));
  }
  const double read_s = watch.Lap();
  Capture c = builder.Finish(options.threads);
  const double finish_s = watch.Lap();
  if (options.read_s != nullptr) *options.read_s = read_s;
  if (options.finish_s != nullptr) *options.finish_s = finish_s;
  return c;
}

}  // namespace tfdiag
