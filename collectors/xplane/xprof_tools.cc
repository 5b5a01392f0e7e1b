#include "collectors/xplane/xprof_tools.h"

#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "collectors/xplane/xprof_tools.pb.h"

namespace tfdiag {

namespace {

constexpr int64_t kMaxToolFileBytes = int64_t{64} << 20;

TimeNs Ns(double ms) { return static_cast<TimeNs>(ms * 1e6 + 0.5); }

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool RegularFile(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

StatusOr<XprofFigures> ReadXprofFigures(const std::string& path) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return IoError("{}: cannot read XProf's tool file (not a regular file)", path);
  }
  if (st.st_size > kMaxToolFileBytes) {
    return InvalidInput("{}: {} bytes, more than an XProf tool file holds ({} at most)", path,
                        st.st_size, kMaxToolFileBytes);
  }
  std::ifstream in(path, std::ios::binary);
  std::stringstream buf;
  buf << in.rdbuf();
  if (!in.good() && !in.eof()) return IoError("{}: cannot read XProf's tool file", path);
  tensorflow::profiler::InputPipelineAnalysisResult ip;
  if (EndsWith(path, ".overview_page.pb")) {
    tensorflow::profiler::OverviewPage page;
    if (!page.ParseFromString(buf.str())) {
      return InvalidInput("{}: byte 0: expected an XProf OverviewPage protobuf", path);
    }
    ip = page.input_analysis();
  } else if (!ip.ParseFromString(buf.str())) {
    return InvalidInput("{}: byte 0: expected an XProf InputPipelineAnalysisResult protobuf", path);
  }
  XprofFigures f;
  f.path = path;
  f.input_percent = ip.input_percent();
  for (const google::protobuf::Any& any : ip.step_details()) {
    tensorflow::profiler::PerGenericStepDetails d;
    if (!any.UnpackTo(&d)) continue;  // TPU step details: not generic hardware
    StepBreakdownRow r;
    r.step_ns = Ns(d.step_time_ms());
    r.at(StepCategory::kInput) = Ns(d.host_wait_input_ms());
    r.at(StepCategory::kHostToDevice) = Ns(d.host_to_device_ms());
    r.at(StepCategory::kKernelLaunch) = Ns(d.host_prepare_ms());
    r.at(StepCategory::kHostCompute) = Ns(d.host_compute_ms());
    r.at(StepCategory::kDeviceCompute) = Ns(d.device_compute_ms());
    r.at(StepCategory::kDeviceToDevice) = Ns(d.device_to_device_ms());
    r.at(StepCategory::kDeviceCollectives) = Ns(d.device_collectives_ms());
    r.at(StepCategory::kOutput) = Ns(d.output_ms());
    r.at(StepCategory::kCompile) = Ns(d.host_compile_ms());
    r.at(StepCategory::kOther) = Ns(d.unknown_time_ms());
    f.steps.push_back(r);
  }
  tensorflow::profiler::BottleneckAnalysis b;
  if (ip.recommendation().bottleneck_analysis().UnpackTo(&b)) {
    f.input_classification = b.input_classification();
    f.kernel_launch_classification = b.kernel_launch_classification();
    f.all_other_classification = b.all_other_classification();
    f.input_statement = b.input_statement();
  }
  return f;
}

std::string XprofToolFileBeside(const std::string& xplane_path) {
  const std::string suffix = ".xplane.pb";
  if (!EndsWith(xplane_path, suffix)) return "";
  const std::string stem = xplane_path.substr(0, xplane_path.size() - suffix.size());
  for (const char* tool : {".input_pipeline.pb", ".overview_page.pb"}) {
    if (RegularFile(stem + tool)) return stem + tool;
  }
  return "";
}

BreakdownShares SharesOf(const std::vector<StepBreakdownRow>& rows) {
  BreakdownShares s;
  double sum[kStepCategories] = {};
  for (const StepBreakdownRow& r : rows) {
    s.step_ns += static_cast<double>(r.step_ns);
    ++s.steps;
    for (int k = 0; k < kStepCategories; ++k) sum[k] += static_cast<double>(r.ns[k]);
  }
  for (int k = 0; k < kStepCategories && s.step_ns > 0; ++k) s.pct[k] = 100.0 * sum[k] / s.step_ns;
  return s;
}

}  // namespace tfdiag
