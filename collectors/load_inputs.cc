#include "collectors/load_inputs.h"

#include <chrono>
#include <fstream>

#include "collectors/timeline/timeline_reader.h"
#include "core/bundle.h"
#include "core/capture_builder.h"

namespace tfdiag {

StatusOr<Capture> LoadInputs(const std::vector<std::string>& paths, const LoadOptions& options) {
  if (paths.empty()) return UsageError("no input files");
  using Clock = std::chrono::steady_clock;
  auto secs = [](Clock::time_point since) {
    return std::chrono::duration<double>(Clock::now() - since).count();
  };
  const Clock::time_point start = Clock::now();
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
  if (options.read_s != nullptr) *options.read_s = secs(start);
  const Clock::time_point finish = Clock::now();
  Capture c = builder.Finish(options.threads);
  if (options.finish_s != nullptr) *options.finish_s = secs(finish);
  return c;
}

}  // namespace tfdiag
