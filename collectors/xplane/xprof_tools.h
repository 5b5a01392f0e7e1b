// XProf's own figures for a profile run, from the tool files the TensorBoard profile plugin
// writes beside an XSpace: `<host>.input_pipeline.pb` (InputPipelineAnalysisResult) or
// `<host>.overview_page.pb` (OverviewPage.input_analysis), schema in xprof_tools.proto (a subset
// of openxla/xprof plugin/xprof/protobuf/input_pipeline.proto and overview_page.proto). Used to
// check tfdiag's step-time breakdown (step_breakdown.h) against XProf's on the same run.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "core/capture.h"
#include "core/status.h"

namespace tfdiag {

// XProf's figures of one host of one run.
struct XprofFigures {
  std::string path;  // the tool file read
  // XProf's steps (PerGenericStepDetails, ms converted to ns), in file order; task and start 0.
  // Categories as StepCategory: input = host_wait_input, host_to_device, kernel launch =
  // host_prepare, other = unknown_time.
  std::vector<StepBreakdownRow> steps;
  double input_percent = 0;  // InputPipelineAnalysisResult.input_percent (input + host to device)
  // BottleneckAnalysis: "host"/"both"/"device"/"unknown"; "no"/"moderate"/"high"; "" absent.
  std::string input_classification, kernel_launch_classification, all_other_classification;
  std::string input_statement;  // XProf's sentence, e.g. "Your program is HIGHLY input-bound..."
};

// Reads `path`, an input_pipeline.pb or (by its name ending ".overview_page.pb") an
// overview_page.pb. Errors: kIo when it cannot be read, kInvalidInput "<path>: ..." when it is
// larger than 64 MiB or not that message.
StatusOr<XprofFigures> ReadXprofFigures(const std::string& path);

// The tool file beside XSpace `xplane_path` ("<dir>/<host>.xplane.pb") or the trace viewer's
// JSON of the same run ("<dir>/<host>.trace.json.gz", ".trace.json"): its
// "<host>.input_pipeline.pb", else "<host>.overview_page.pb", when one is a regular file (not a
// link); "" when neither is.
std::string XprofToolFileBeside(const std::string& xplane_path);

// Per category, the share of the summed step time, in percent (0 when no step time).
struct BreakdownShares {
  double step_ns = 0;
  int steps = 0;
  double pct[kStepCategories] = {};
};
BreakdownShares SharesOf(const std::vector<StepBreakdownRow>& rows);

// Categories of tfdiag's and XProf's breakdowns further apart than this (percentage points) are
// named in the note.
constexpr double kXprofAgreePoints = 5;

// Compares `mine`, the breakdown of the steps of XSpace (or trace JSON) `xplane_path`, with XProf's
// tool file beside it (XprofToolFileBeside): false, and no note, when there is none; else `check`
// holds both shares per category and `note` says whether they agree within kXprofAgreePoints (or
// why the tool file was not read: then false).
bool CheckAgainstXprof(const std::string& xplane_path, const std::vector<StepBreakdownRow>& mine,
                       XprofCheck* check, std::string* note);

}  // namespace tfdiag
