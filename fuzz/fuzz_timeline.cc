// libFuzzer target: ReadTimeline on arbitrary bytes, then CaptureBuilder::Finish, every rule and
// both reports (fuzz/analyze_report.h) when the read succeeds; differentially, with and without the
// fast tokenizer (collectors/timeline/fast_json.h): both must give the same status and the same
// rows. The input is handed over as a file (ReadTimeline takes a path): an anonymous memfd named
// through /proc/self/fd/N, so nothing touches the disk. It must never crash, leak or hang.
//
// Build: CC=clang CXX=clang++ cmake <repo> -DTFDIAG_FUZZ=ON -DTFDIAG_TESTS=OFF
//        make fuzz_timeline
// Run:   ./fuzz_timeline -max_len=1048576 -max_total_time=60 <scratch copy of fuzz/corpus>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "collectors/timeline/timeline_reader.h"
#include "core/capture_builder.h"
#include "fuzz/analyze_report.h"
#include "fuzz/capture_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const int fd = memfd_create("fuzz_timeline", 0);
  if (fd < 0) std::abort();
  static const std::string path = "/proc/self/fd/" + std::to_string(fd);
  if (ftruncate(fd, 0) != 0 || lseek(fd, 0, SEEK_SET) != 0) std::abort();
  for (size_t done = 0; done < size;) {
    ssize_t n = write(fd, data + done, size - done);
    if (n <= 0) std::abort();
    done += static_cast<size_t>(n);
  }
  tfdiag::CaptureBuilder builder, reference;
  tfdiag::TimelineReadOptions slow;
  slow.fast_path = false;
  tfdiag::Status s = tfdiag::ReadTimeline(path, &builder);
  tfdiag::Status r = tfdiag::ReadTimeline(path, &reference, slow);
  if (s.ok() != r.ok() || s.message() != r.message()) std::abort();
  if (s.ok()) {
    tfdiag::Capture c = builder.Finish();
    tfdiag::Capture rc = reference.Finish();
    if (c.ops.size() != rc.ops.size() || c.flows.size() != rc.flows.size() ||
        c.tensors.size() != rc.tensors.size() || c.edges.size() != rc.edges.size() ||
        c.stats.skipped != rc.stats.skipped || c.stats.ignored != rc.stats.ignored ||
        c.strings.size() != rc.strings.size()) {
      std::abort();
    }
    for (size_t i = 0; i < c.ops.size(); ++i) {
      if (c.ops[i].start != rc.ops[i].start ||
          c.Str(c.OpName(c.ops[i])) != rc.Str(rc.OpName(rc.ops[i]))) {
        std::abort();
      }
    }
    // Touch what Finish derived, so inconsistent indexes show up under ASan.
    for (const tfdiag::OpRow& op : c.ops.Rows()) {
      if (op.device >= c.devices.size() || op.dur() < 0) std::abort();
      (void)c.Str(c.OpName(op));
    }
    for (const tfdiag::EdgeRow& e : c.edges) {
      if (e.src_task >= c.tasks.size() || e.dst_task >= c.tasks.size()) std::abort();
      (void)c.Str(e.tensor);
    }
    tfdiag::fuzz::CheckSteps(c);
    tfdiag::fuzz::AnalyzeAndReport(c);
  } else if (s.code() != tfdiag::StatusCode::kInvalidInput && s.code() != tfdiag::StatusCode::kIo) {
    std::abort();  // bad bytes are invalid input, nothing else
  }
  return 0;
}
