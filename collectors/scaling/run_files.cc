#include "collectors/scaling/run_files.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "analyzers/analysis.h"
#include "collectors/k8s_inputs.h"
#include "collectors/load_inputs.h"

namespace tfdiag {

StatusOr<std::vector<std::string>> ScalingRunFiles(const std::string& run) {
  struct stat st {};
  if (stat(run.c_str(), &st) != 0) return IoError("{}: {}", run, std::strerror(errno));
  if (!S_ISDIR(st.st_mode)) return std::vector<std::string>{run};
  DIR* dir = opendir(run.c_str());
  if (dir == nullptr) return IoError("{}: cannot read directory: {}", run, std::strerror(errno));
  std::vector<std::string> files;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    std::string path = run + "/" + e->d_name;
    struct stat fs {};
    if (stat(path.c_str(), &fs) == 0 && S_ISREG(fs.st_mode)) files.push_back(path);
  }
  closedir(dir);
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    return InvalidInput("{}: directory holds no files (expected a run's timelines or bundles)",
                        run);
  }
  return files;
}

StatusOr<ScalingRun> LoadScalingRun(const std::string& run, const RuleSet& rules,
                                    int64_t batch_size, int threads) {
  StatusOr<std::vector<std::string>> files = ScalingRunFiles(run);
  if (!files.ok()) return files.status();
  StatusOr<SplitInputs> split = SplitK8sInputs(*files);
  if (!split.ok()) return split.status();
  const std::vector<std::string>& traces = split->traces;
  const bool have_k8s = split->have_k8s;
  K8sDeployment& k8s = split->k8s;
  if (traces.empty()) {
    return InvalidInput("{}: no timeline or bundle (only Kubernetes files): no steps to compare",
                        run);
  }
  if (threads <= 0) threads = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  LoadOptions lo;
  lo.threads = threads;
  if (have_k8s) lo.k8s = &k8s;  // profiled hosts mapped by the run's manifests or pod lists
  StatusOr<Capture> capture = LoadInputs(traces, lo);
  if (!capture.ok()) return capture.status();
  AnalysisResult result = Analyze(*capture, rules, have_k8s ? &k8s : nullptr, threads);
  return MeasureRun(run, *capture, result, batch_size);
}

}  // namespace tfdiag
