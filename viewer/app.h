// The viewer application: owns the background Loader, the current Snapshot and the ViewState,
// and lays out the panels (status bar, Findings, PS load, Timeline, and Tasks/CPU/Import tabs)
// in fixed regions of the display so screenshots are reproducible.
// Thread-safety: UI thread only; the loader's thread never touches an App.
#pragma once

#include <imgui.h>

#include <memory>
#include <string>
#include <vector>

#include "viewer/loader.h"
#include "viewer/panels/panels.h"

namespace tfdiag::view {

struct AppOptions {
  // The inputs (merged into one capture, or with `scaling` compared as runs) and how to read
  // them: LoadRequest (viewer/loader.h).
  LoadRequest load;
};

// Where a panel was drawn in the last frame, in pixels from the top left (for tests and
// --screenshot's report).
struct PanelRect {
  std::string name;  // "findings", "ps_load", "timeline", "details", "status"
  float x = 0, y = 0, w = 0, h = 0;
};

class App {
 public:
  explicit App(AppOptions options);
  App(const App&) = delete;
  App& operator=(const App&) = delete;

  // Builds one frame's UI for a display of `size` pixels; call between ImGui::NewFrame() and
  // ImGui::Render(). Takes the loader's snapshot as soon as it is ready.
  void Frame(ImVec2 size);

  // True until the snapshot has been taken or loading failed.
  bool loading() const { return !snapshot_ && !loader_.Done(); }
  // True once a snapshot is shown.
  bool loaded() const { return snapshot_ != nullptr; }
  // What the background loader is doing (for the progress bar).
  LoadProgress progress() const { return loader_.Progress(); }
  // The load error, OK while loading or after success.
  Status load_error() const { return loader_.error(); }
  const Snapshot* snapshot() const { return snapshot_.get(); }
  ViewState& view() { return view_; }

  // Selects a finding by 0-based index ("0") or rule id ("hot-ps"); needs loaded().
  // Errors: kUsage naming the findings there are.
  Status Select(const std::string& which);

  // Draws the critical path of this worker's median step ("worker:3"), zoomed to that step, or
  // none ("none"); needs loaded(). Errors: kUsage naming the workers that have one.
  Status SelectPath(const std::string& task);

  // Sets the timeline's view for frame `i` of `n` of the --bench-frames script: from the whole
  // run down to 1/2000 of it and back, panning across the run on the way.
  void BenchView(int i, int n);

  const std::vector<PanelRect>& panel_rects() const { return rects_; }

 private:
  void TakeSnapshot();
  // Fills ViewState::overflow from the windows drawn this frame.
  void RecordOverflow();
  void StatusBar(ImVec2 size, float h);
  // The --scaling layout: findings and runs on the left, the throughput chart and the PS busy
  // shares per run on the right.
  void ScalingFrame(const Snapshot& s, ImVec2 size, float bar_h);
  void Panel(const char* title, const char* name, ImVec2 pos, ImVec2 size, ImGuiWindowFlags flags);

  AppOptions options_;
  Loader loader_;
  std::shared_ptr<const Snapshot> snapshot_;
  ViewState view_;
  std::vector<PanelRect> rects_;
};

// The inputs' names for the status bar: each path's last component ("logs/" -> "logs"),
// comma-separated.
std::string JoinPaths(const std::vector<std::string>& paths);

}  // namespace tfdiag::view
