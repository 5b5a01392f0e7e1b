// libFuzzer target: the bundle reader (core/bundle.h) on arbitrary bytes, handed over as a file
// through a memfd. Every input ends in OK or kInvalidInput/kIo, never a crash, hang or
// unbounded memory (-timeout=1 -rss_limit_mb=512). An accepted bundle must finish into a Capture
// whose rows point at existing processes, with no negative times or CPU, that every rule and both
// reports accept (fuzz/analyze_report.h), and write back into a bundle that reads again to the
// same bytes.
//
// Build: make fuzz. Run: ./fuzz_bundle -max_len=1048576 <corpus copy>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/bundle.h"
#include "core/capture_builder.h"
#include "fuzz/analyze_report.h"
#include "fuzz/capture_checks.h"

namespace {

std::string Path(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

void Fill(int fd, const uint8_t* data, size_t size) {
  if (ftruncate(fd, 0) != 0 || lseek(fd, 0, SEEK_SET) != 0) std::abort();
  for (size_t done = 0; done < size;) {
    ssize_t n = write(fd, data + done, size - done);
    if (n <= 0) std::abort();
    done += static_cast<size_t>(n);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const int fd = memfd_create("fuzz_bundle", 0);
  if (fd < 0) std::abort();
  Fill(fd, data, size);
  tfdiag::CaptureBuilder b;
  tfdiag::Status s = tfdiag::ReadBundle(Path(fd), &b);
  if (!s.ok()) {
    if (s.code() != tfdiag::StatusCode::kInvalidInput && s.code() != tfdiag::StatusCode::kIo)
      std::abort();
    return 0;
  }
  tfdiag::Capture c = b.Finish();
  if (c.meta.interval_ms <= 0) std::abort();
  tfdiag::fuzz::CheckSteps(c);
  for (const tfdiag::ProcessSampleRow& r : c.process_samples) {
    if (r.process >= c.processes.size() || r.cpu_ns < 0 || r.ts < 0) std::abort();
  }
  for (const tfdiag::ThreadSampleRow& r : c.thread_samples) {
    if (r.process >= c.processes.size() || r.cpu_ns < 0) std::abort();
  }
  for (const tfdiag::ProcessRow& p : c.processes) {
    if (p.task >= c.tasks.size() || p.cpu_limit < 0) std::abort();
  }
  tfdiag::fuzz::AnalyzeAndReport(c);
  const std::string once = tfdiag::BundleJson(c);
  Fill(fd, reinterpret_cast<const uint8_t*>(once.data()), once.size());
  tfdiag::CaptureBuilder b2;
  if (!tfdiag::ReadBundle(Path(fd), &b2).ok()) std::abort();
  if (tfdiag::BundleJson(b2.Finish()) != once) std::abort();
  return 0;
}
