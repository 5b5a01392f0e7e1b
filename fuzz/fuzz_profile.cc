// libFuzzer target: the profilers' protobuf readers (collectors/xplane, collectors/runmetadata)
// on arbitrary bytes, dispatched by content as `tfdiag analyze` does (SniffProfile), each format
// also forced so every reader sees every input; then CaptureBuilder::Finish, every rule and both
// reports (fuzz/analyze_report.h) when a read succeeds. Bad bytes must give kInvalidInput (or kIo),
// never a crash, leak or hang. The input is handed over as an anonymous memfd named through
// /proc/self/fd/N.
//
// Build: CC=clang CXX=clang++ cmake <repo> -DTFDIAG_FUZZ=ON -DTFDIAG_TESTS=OFF
//        make fuzz_profile
// Run:   ./fuzz_profile -max_len=1048576 -max_total_time=60 <scratch copy of fuzz/corpus_profile>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "collectors/runmetadata/run_metadata_reader.h"
#include "collectors/xplane/profile_format.h"
#include "collectors/xplane/xplane_reader.h"
#include "core/capture_builder.h"
#include "fuzz/analyze_report.h"
#include "fuzz/capture_checks.h"

namespace {

void Check(const tfdiag::Status& s, tfdiag::CaptureBuilder* b) {
  if (s.ok()) {
    tfdiag::Capture c = b->Finish();
    for (const tfdiag::OpRow& op : c.ops.Rows()) {
      if (op.device >= c.devices.size() || op.dur() < 0) std::abort();
      (void)c.Str(c.OpName(op));
    }
    for (const tfdiag::EdgeRow& e : c.edges) {
      if (e.src_task >= c.tasks.size() || e.dst_task >= c.tasks.size()) std::abort();
    }
    tfdiag::fuzz::CheckSteps(c);
    tfdiag::fuzz::AnalyzeAndReport(c);
  } else if (s.code() != tfdiag::StatusCode::kInvalidInput && s.code() != tfdiag::StatusCode::kIo) {
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const int fd = memfd_create("fuzz_profile", 0);
  if (fd < 0) std::abort();
  static const std::string path = "/proc/self/fd/" + std::to_string(fd);
  if (ftruncate(fd, 0) != 0 || lseek(fd, 0, SEEK_SET) != 0) std::abort();
  for (size_t done = 0; done < size;) {
    ssize_t n = write(fd, data + done, size - done);
    if (n <= 0) std::abort();
    done += static_cast<size_t>(n);
  }
  using tfdiag::ProfileFormat;
  const std::string_view head(reinterpret_cast<const char*>(data), size < 256 ? size : 256);
  (void)tfdiag::SniffProfile(head);
  {
    tfdiag::CaptureBuilder b;
    Check(tfdiag::ReadXSpace(path, &b), &b);
  }
  {
    tfdiag::CaptureBuilder b;
    Check(tfdiag::ReadProfilerTrace(path, &b), &b);
  }
  for (ProfileFormat f : {ProfileFormat::kRunMetadata, ProfileFormat::kStepStats,
                          ProfileFormat::kRunMetadataText, ProfileFormat::kStepStatsText}) {
    tfdiag::CaptureBuilder b;
    Check(tfdiag::ReadRunMetadata(path, f, &b), &b);
  }
  return 0;
}
