#include "collectors/xplane/xprof_tools.h"

#include <sys/stat.h>

#include <cmath>
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
  std::string stem;
  for (const char* suffix : {".xplane.pb", ".trace.json.gz", ".trace.json"}) {
    if (EndsWith(xplane_path, suffix)) {
      stem = xplane_path.substr(0, xplane_path.size() - std::string_view(suffix).size());
      break;
    }
  }
  if (stem.empty()) return "";
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

bool CheckAgainstXprof(const std::string& xplane_path, const std::vector<StepBreakdownRow>& mine,
                       XprofCheck* check, std::string* note) {
  note->clear();
  const std::string tool = XprofToolFileBeside(xplane_path);
  if (tool.empty()) return false;
  StatusOr<XprofFigures> xp = ReadXprofFigures(tool);
  if (!xp.ok()) {
    *note = fmt::format("XProf's tool file {} was not read: {}", tool, xp.status().message());
    return false;
  }
  *check = XprofCheck{};
  check->file = xplane_path;
  check->tool_file = tool;
  const BreakdownShares ours = SharesOf(mine), theirs = SharesOf(xp->steps);
  check->steps = ours.steps;
  check->xprof_steps = theirs.steps;
  check->step_ns = ours.step_ns;
  check->xprof_step_ns = theirs.step_ns;
  int worst = 0;
  for (int k = 0; k < kStepCategories; ++k) {
    check->pct[k] = ours.pct[k];
    check->xprof_pct[k] = theirs.pct[k];
    const double d = std::abs(ours.pct[k] - theirs.pct[k]);
    if (d > check->max_diff_pct) check->max_diff_pct = d, worst = k;
  }
  check->xprof_input_classification = xp->input_classification;
  check->xprof_input_statement = xp->input_statement;
  if (mine.empty()) {
    *note = fmt::format(
        "{}: XProf's {} counts {} step(s); tfdiag made no step-time breakdown of "
        "this file",
        xplane_path, tool, theirs.steps);
  } else if (check->max_diff_pct > kXprofAgreePoints || ours.steps != theirs.steps) {
    *note = fmt::format(
        "{}: the step-time breakdown differs from XProf's own ({}): {} step(s) here, {} there; "
        "{} {:.1f}% here, {:.1f}% there ({:.1f} points apart)",
        xplane_path, tool, ours.steps, theirs.steps,
        StepCategoryWords(static_cast<StepCategory>(worst)), ours.pct[worst], theirs.pct[worst],
        check->max_diff_pct);
  } else {
    *note = fmt::format(
        "{}: the step-time breakdown agrees with XProf's own ({}) within {:.1f} points per "
        "category over {} step(s)",
        xplane_path, tool, check->max_diff_pct, ours.steps);
  }
  return true;
}

}  // namespace tfdiag
