// libFuzzer target: the Kubernetes manifest reader (collectors/k8s, on libyaml) and `tfdiag fix`
// on arbitrary bytes. Every input must end in OK or kInvalidInput (a message naming the file),
// never a crash, an escaped exception, a hang or unbounded memory (run with -timeout=1
// -rss_limit_mb=512; aliases and nesting are bounded in yaml_tree.h). When the reader accepts
// the input, the manifest rules and both reports run on it (fuzz/analyze_report.h, as `tfdiag
// analyze m.yaml` does), fix must accept it too, and its output must read back with the same TF
// replicas.
//
// Build: make fuzz (CMake -DTFDIAG_FUZZ=ON with clang).
// Run: ./fuzz_manifest -max_len=1048576 <corpus copy>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "actions/k8s_fix.h"
#include "collectors/k8s/k8s_reader.h"
#include "core/capture_builder.h"
#include "fuzz/analyze_report.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  tfdiag::K8sDeployment d;
  tfdiag::Status s = tfdiag::ParseK8sText(text, "fuzz.yaml", &d);
  if (!s.ok()) {
    if (s.code() != tfdiag::StatusCode::kInvalidInput) std::abort();
    if (s.message().rfind("fuzz.yaml", 0) != 0) std::abort();  // errors name the file
    return 0;
  }
  {
    tfdiag::CaptureBuilder empty;
    tfdiag::fuzz::AnalyzeAndReport(empty.Finish(), &d);
  }
  tfdiag::FixOptions o;
  o.default_cpus = 2;
  o.default_memory = "1Gi";
  tfdiag::StatusOr<tfdiag::FixResult> f = tfdiag::FixManifest(text, "fuzz.yaml", o);
  if (!f.ok()) std::abort();  // what the reader accepts, fix accepts
  tfdiag::K8sDeployment again;
  tfdiag::Status back = tfdiag::ParseK8sText(f->yaml, "fixed.yaml", &again);
  if (!back.ok() || again.replicas.size() != d.replicas.size()) std::abort();
  for (size_t i = 0; i < d.replicas.size(); ++i) {
    if (again.replicas[i].role != d.replicas[i].role ||
        again.replicas[i].replicas != d.replicas[i].replicas)
      std::abort();
  }
  return 0;
}
