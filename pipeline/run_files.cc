#include "pipeline/run_files.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "analyzers/analysis.h"
#include "pipeline/pipeline.h"

namespace tfdiag {

StatusOr<std::vector<std::string>> ScalingRunFiles(const std::string& run) {
  struct stat st {};
  if (stat(run.c_str(), &st) != 0) return IoError("{}: {}", run, std::strerror(errno));
  if (!S_ISDIR(st.st_mode)) return std::vector<std::string>{run};
  DIR* dir = opendir(run.c_str());
  if (dir == nullptr) return IoError("{}: cannot read directory: {}", run, std::strerror(errno));
  std::vector<std::string> files;
  bool subdirs = false, plugins = false;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    std::string path = run + "/" + e->d_name;
    struct stat fs {};
    if (lstat(path.c_str(), &fs) != 0) continue;
    if (S_ISREG(fs.st_mode)) files.push_back(path);
    if (S_ISDIR(fs.st_mode)) {
      subdirs = true;
      plugins = plugins || std::strcmp(e->d_name, "plugins") == 0;
    }
  }
  closedir(dir);
  std::sort(files.begin(), files.end());
  // A TensorBoard log directory (plugins/profile/<run>/, or a Keras log directory's train/ and
  // validation/ with no file of the run at the top), or a manifest directory: the directory is
  // the run's one input, read as `analyze DIR` reads it.
  if (plugins || (files.empty() && subdirs)) return std::vector<std::string>{run};
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
  // As `analyze` would (pipeline/pipeline.h): the run's manifests or pod lists map its hosts.
  PipelineOptions po;
  po.threads = threads;
  StatusOr<PipelineResult> r = AnalyzeInputs(*files, rules, std::move(po));
  if (!r.ok()) return r.status();
  if (r->traces == 0) {
    return InvalidInput("{}: no timeline or bundle (only Kubernetes files): no steps to compare",
                        run);
  }
  return MeasureRun(run, r->capture, r->analysis, batch_size);
}

}  // namespace tfdiag
