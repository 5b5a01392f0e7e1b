// tfdiag-view FILE...: the desktop viewer (Dear ImGui on GLFW and OpenGL 3). Its own executable,
// so that the tfdiag CLI needs no GL libraries on a server.
//
//   tfdiag-view FILE...                               a window; files load in the background
//   tfdiag-view --scaling RUN RUN...                  runs of one job side by side (scaling)
//   tfdiag-view --screenshot out.png [--select F] [--path TASK] [--size WxH] FILE...
//                                                     render offscreen once loaded, write a PNG
//   tfdiag-view --bench-frames N FILE...              N frames over a scripted zoom/pan; prints
//                                                     mean and p99 frame time
//   tfdiag-view --input SCRIPT [--dump-view out.json] [--screenshot out.png] FILE...
//                                                     play mouse and key events (input_script.h)
//                                                     once loaded; --dump-view writes the view
//                                                     state as JSON (view_dump.h)
// Exit codes: 0 done, 2 bad input, usage or no display (one line on stderr), 3 internal error.
#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <fmt/format.h>
#include <imgui.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "core/atomic_file.h"
#include "core/escape.h"
#include "core/spooled_inputs.h"
#include "viewer/app.h"
#include "viewer/input_script.h"
#include "viewer/screenshot.h"
#include "viewer/view_dump.h"

namespace {

using tfdiag::Status;

struct Options {
  std::vector<std::string> files;
  std::string screenshot;  // PNG path; empty: interactive or bench
  std::string select;      // finding index or rule id
  std::string path;        // worker whose critical path is drawn, or "none"; empty: the default
  std::string size = "1600x1000";
  std::string tab;            // tasks | cpu | import | nodes
  std::string hover;          // "X,Y": with --screenshot, the mouse rests there (tooltips show)
  std::string input;          // scripted input (input_script.h), or "@FILE" to read it from FILE
  std::string dump_view;      // JSON path for the view state; renders offscreen like --screenshot
  std::string layout;         // --layout: where the panels were drawn (WriteLayout), for tests
  bool loading_shot = false;  // --screenshot-loading: the screenshot shows the progress bar
  int bench_frames = 0;
  int threads = 0;
  bool scaling = false;   // --scaling: the files are runs of one job, compared side by side
  std::string run;        // --run: profile run of a TensorBoard log directory
  std::string tf_config;  // --tf-config FILE|JSON
};

std::string g_glfw_error;  // last GLFW error text (GLFW reports through a callback)

int Fail(const std::string& msg, int code = 2) {
  tfdiag::PrintNote("tfdiag-view: error: ", msg);  // the message may name a workload's file
  return code;
}

// Frames rendered after loading before a screenshot is taken: tables and auto-sized windows need
// a couple of frames to settle.
constexpr int kSettleFrames = 4;
// --screenshot-loading waits for this much progress, so the bar is visibly filled.
constexpr double kLoadingShotFraction = 0.02;
constexpr float kBackground[3] = {0.09f, 0.10f, 0.12f};  // behind every window

struct Stats {
  double mean = 0, p99 = 0, max = 0;
};

Stats Summarize(std::vector<double> v) {
  Stats s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  for (double x : v) s.mean += x;
  s.mean /= static_cast<double>(v.size());
  s.p99 = v[std::min(v.size() - 1, static_cast<size_t>(0.99 * static_cast<double>(v.size())))];
  s.max = v.back();
  return s;
}

// Where each panel was drawn, one "panel NAME X Y W H" line each (tests read them).
// --layout FILE: where each panel was drawn, one "panel NAME X Y W H" line each, then `extra`
// (tests read them). Written to a file, never to stdout: stdout says only what was written
// (issue 39). No --layout: nothing to write.
Status WriteLayout(const std::string& path, const tfdiag::view::App& app,
                   const std::string& extra) {
  if (path.empty()) return Status();
  std::string text;
  for (const tfdiag::view::PanelRect& r : app.panel_rects()) {
    text += fmt::format("panel {} {:.0f} {:.0f} {:.0f} {:.0f}\n", r.name, r.x, r.y, r.w, r.h);
  }
  return tfdiag::WriteFileAtomically(path, text + extra);
}

struct Gui {
  GLFWwindow* window = nullptr;
  ~Gui() {
    if (!window) return;
    ImGui_ImplOpenGL3_Shutdown();
    ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext();
    glfwDestroyWindow(window);
    glfwTerminate();
  }
};

void Style() {
  ImGui::StyleColorsDark();
  ImGuiStyle& st = ImGui::GetStyle();
  st.WindowRounding = 0;
  st.FrameRounding = 2;
  st.WindowBorderSize = 1;
  // Windows draw no background: glClear paints kBackground under them. Every shaded pixel counts
  // on a software rasterizer (Mesa llvmpipe: one full-screen layer costs several ms).
  st.Colors[ImGuiCol_WindowBg] = ImVec4(0, 0, 0, 0);
  st.Colors[ImGuiCol_TitleBgActive] = st.Colors[ImGuiCol_TitleBg];
}

// `paths`: o.files, with pipes and standard input replaced by temporary copies.
int Run(const Options& o, const std::vector<std::string>& paths) {
  int width = 0, height = 0;
  if (std::sscanf(o.size.c_str(), "%dx%d", &width, &height) != 2 || width < 320 || height < 240 ||
      width > 8192 || height > 8192) {
    return Fail("--size " + o.size + ": expected WxH, e.g. 1600x1000 (320x240 to 8192x8192)");
  }
  ImVec2 hover;
  if (!o.hover.empty() && std::sscanf(o.hover.c_str(), "%f,%f", &hover.x, &hover.y) != 2) {
    return Fail("--hover " + o.hover + ": expected X,Y in pixels, e.g. 900,150");
  }
  std::string script_text = o.input;
  if (!script_text.empty() && script_text[0] == '@') {
    std::ifstream in(script_text.substr(1));
    if (!in) return Fail("--input " + script_text + ": cannot read the script file");
    script_text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  // --hover is the script "hover X,Y" played before the others.
  if (!o.hover.empty()) script_text = "hover " + o.hover + ";" + script_text;
  tfdiag::StatusOr<tfdiag::view::InputScript> script =
      tfdiag::view::InputScript::Parse(script_text);
  if (!script.ok()) return Fail(script.status().message());
  const bool offscreen = !o.screenshot.empty() || !o.dump_view.empty();
  const bool bench = o.bench_frames > 0;
  glfwSetErrorCallback([](int, const char* text) { g_glfw_error = text ? text : ""; });
  if (!glfwInit()) {
    return Fail("cannot open a window: " + g_glfw_error +
                " (no display? run --screenshot and --bench-frames under xvfb-run)");
  }
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
  if (offscreen) glfwWindowHint(GLFW_VISIBLE, GLFW_FALSE);
  std::string title = "tfdiag view";
  for (const std::string& f : o.files) title += " " + f;
  Gui gui;
  gui.window = glfwCreateWindow(width, height, title.c_str(), nullptr, nullptr);
  if (!gui.window) {
    glfwTerminate();
    return Fail("cannot create an OpenGL 3.3 window: " + g_glfw_error);
  }
  glfwMakeContextCurrent(gui.window);
  glfwSwapInterval(offscreen || bench ? 0 : 1);
  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;  // the layout is fixed; nothing to remember
  Style();
  ImGui_ImplGlfw_InitForOpenGL(gui.window, true);
  ImGui_ImplOpenGL3_Init("#version 150");

  tfdiag::view::OffscreenTarget target;
  if (offscreen) {
    Status s = target.Create(width, height);
    if (!s.ok()) return Fail(s.message());
  }
  tfdiag::view::LoadRequest rq;
  rq.paths = paths;
  rq.names = o.files;
  rq.threads = o.threads;
  rq.scaling = o.scaling;
  rq.run = o.run;
  rq.tf_config = o.tf_config;
  tfdiag::view::App app({std::move(rq)});
  bool selected = o.select.empty(), tab_set = false, path_set = o.path.empty();
  int settled = 0, bench_i = -8;        // 8 warm-up frames before the measured ones
  std::vector<double> frame_ms, ui_ms;  // whole frame; building the UI (CPU side) only
  bool nearest = false;  // font atlas switched to GL_NEAREST (after the backend created it)
  while (!glfwWindowShouldClose(gui.window)) {
    if (offscreen || bench) {
      glfwPollEvents();
      if (app.loading()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    } else {
      glfwWaitEventsTimeout(app.loading() ? 0.05 : 0.25);
    }
    if (!app.load_error().ok()) return Fail(app.load_error().message());
    if (app.loaded() && !selected) {
      Status s = app.Select(o.select);
      if (!s.ok()) return Fail(s.message());
      selected = true;
    }
    if (app.loaded() && !path_set) {
      Status s = app.SelectPath(o.path);
      if (!s.ok()) return Fail(s.message());
      path_set = true;
    }
    if (app.loaded() && !tab_set) {  // once: the user may switch tabs afterwards
      if (!o.tab.empty()) {
        app.view().bottom_tab = o.tab == "cpu"       ? 1
                                : o.tab == "import"  ? 2
                                : o.tab == "nodes"   ? 3
                                : o.tab == "scaling" ? 4
                                                     : 0;
      }
      tab_set = true;
    }
    if (bench && app.loaded() && bench_i >= 0) app.BenchView(bench_i, o.bench_frames);
    // Read before the frame is built: the bar drawn shows at least this much.
    const tfdiag::view::LoadProgress progress = app.progress();
    auto t0 = std::chrono::steady_clock::now();
    ImGui_ImplOpenGL3_NewFrame();
    if (!nearest) nearest = (tfdiag::view::UseNearestFiltering(io.Fonts->TexID), true);
    ImGui_ImplGlfw_NewFrame();
    if (offscreen) {
      io.DisplaySize = ImVec2(static_cast<float>(width), static_cast<float>(height));
      io.DisplayFramebufferScale = ImVec2(1, 1);
    }
    // The script starts once the capture is shown (and --select and --tab applied).
    if (app.loaded() && selected && tab_set) script->Frame(gui.window, offscreen);
    ImGui::NewFrame();
    app.Frame(io.DisplaySize);
    ImGui::Render();
    auto t_ui = std::chrono::steady_clock::now();
    if (offscreen) {
      target.Bind();
    } else {
      int fw = 0, fh = 0;
      glfwGetFramebufferSize(gui.window, &fw, &fh);
      glViewport(0, 0, fw, fh);
    }
    glClearColor(kBackground[0], kBackground[1], kBackground[2], 1);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    if (offscreen && o.loading_shot) {
      if (app.loaded()) return Fail("--screenshot-loading: loaded before the progress bar moved");
      const tfdiag::view::LoadProgress& p = progress;
      if (p.Fraction() < kLoadingShotFraction) continue;
      Status s = tfdiag::view::WritePng(o.screenshot, width, height, target.ReadPixels());
      if (!s.ok()) return Fail(s.message());
      s = WriteLayout(o.layout, app,
                      fmt::format("loading {} {:.3f}\n", p.PhaseName(), p.Fraction()));
      if (!s.ok()) return Fail(s.message());
      std::printf("wrote %s (%dx%d)\n", o.screenshot.c_str(), width, height);
      std::fflush(nullptr);
      std::_Exit(0);  // the reader thread cannot be interrupted; leave without waiting for it
    }
    if (offscreen) {
      if (!app.loaded() || !script->done() || ++settled < kSettleFrames) continue;
      if (!o.screenshot.empty()) {
        std::vector<uint8_t> px = target.ReadPixels();
        Status s = tfdiag::view::WritePng(o.screenshot, width, height, px);
        if (!s.ok()) return Fail(s.message());
        std::printf("wrote %s (%dx%d)\n", o.screenshot.c_str(), width, height);
      }
      if (!o.dump_view.empty()) {
        Status s = tfdiag::view::WriteViewDump(*app.snapshot(), app.view(), o.dump_view);
        if (!s.ok()) return Fail(s.message());
        std::printf("wrote %s\n", o.dump_view.c_str());
      }
      const std::string& hovered = app.view().hovered;
      Status s = WriteLayout(o.layout, app, hovered.empty() ? "" : "hover " + hovered + "\n");
      if (!s.ok()) return Fail(s.message());
      return 0;
    }
    glfwSwapBuffers(gui.window);
    if (bench && app.loaded()) {
      glFinish();
      double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (bench_i >= 0) {
        frame_ms.push_back(ms);
        ui_ms.push_back(std::chrono::duration<double, std::milli>(t_ui - t0).count());
      }
      if (++bench_i >= o.bench_frames) break;
    }
  }
  if (bench && !frame_ms.empty()) {
    Stats f = Summarize(frame_ms), u = Summarize(ui_ms);
    std::printf(
        "bench: %zu frames at %dx%d, %zu ops: frame mean %.2f ms, p99 %.2f ms, max %.2f ms "
        "(UI build on the CPU: mean %.2f ms, p99 %.2f ms; the rest is GL and swap)\n",
        frame_ms.size(), width, height, app.snapshot()->capture.ops.size(), f.mean, f.p99, f.max,
        u.mean, u.p99);
  }
  if (app.loading()) {
    // Closed mid-load: the reader thread cannot be interrupted; leave without waiting for it.
    std::fflush(nullptr);
    std::_Exit(0);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App cli{
      "tfdiag-view: the tfdiag desktop viewer (timelines and bundles). Exit codes: 0 ok, "
      "2 bad input, usage or no display."};
  cli.set_version_flag("--version", std::string("tfdiag-view ") + TFDIAG_VERSION);
  cli.add_option("files", o.files,
                 "Timeline files, bundles, TF2 profiles (*.xplane.pb, *.trace, TensorBoard log "
                 "directories: the latest run), RunMetadata (merged), and Kubernetes manifests or "
                 "pod lists that map profiled hosts to tasks")
      ->required()
      ->check(CLI::Validator(
          [](std::string& path) { return path == "-" ? std::string() : CLI::ExistingPath(path); },
          "PATH|-", "InputPath"));
  cli.add_option("--screenshot", o.screenshot,
                 "Render offscreen once loaded, write this PNG (atomically) and exit");
  cli.add_option("--select", o.select, "Select this finding once loaded (index or rule id)");
  cli.add_option("--path", o.path,
                 "Draw the critical path of this worker's median step (e.g. worker:3), zoomed to "
                 "it; \"none\" draws none (default: the worker with the longest median step, "
                 "unzoomed)");
  cli.add_option("--hover", o.hover,
                 "With --screenshot: rest the mouse at X,Y (pixels) so its tooltip shows");
  cli.add_option("--input", o.input,
                 "Play mouse and key events once loaded, e.g. \"wheel 3 @800,400; drag 900,400 -> "
                 "600,400; key Right; hover 700,300\" (commands: hover, wheel, drag, click, key, "
                 "wait); @FILE reads them from FILE");
  cli.add_option("--dump-view", o.dump_view,
                 "Render offscreen once loaded (and --input played), write the view state as JSON "
                 "(visible range in us, tab, hovered op) to this file and exit");
  cli.add_option("--layout", o.layout,
                 "With --screenshot or --dump-view: write where each panel was drawn (\"panel "
                 "NAME X Y W H\" lines) and the hovered op (\"hover ...\") to this file");
  cli.add_flag("--screenshot-loading", o.loading_shot,
               "With --screenshot: write the image while the files load (the progress bar shows); "
               "an error if they load before it moves");
  cli.add_option("--size", o.size, "Window or image size, WxH")->capture_default_str();
  cli.add_option("--tab", o.tab, "Bottom panel tab to open with")
      ->check(CLI::IsMember({"tasks", "cpu", "import", "nodes", "scaling"}));
  cli.add_option("--bench-frames", o.bench_frames,
                 "Render N frames over a scripted zoom/pan, print mean and p99 frame time")
      ->check(CLI::Range(1, 1000000));
  cli.add_flag("--scaling", o.scaling,
               "Each FILE is a run of one job at a worker count (a file or a directory of the "
               "run's files, as for `tfdiag scaling`): show the runs side by side (throughput "
               "against workers beside ideal, PS busy shares per run, scaling-limit findings)");
  cli.add_option("--run", o.run,
                 "With a TensorBoard log directory: the profile run to open (default: the latest)");
  cli.add_option("--tf-config", o.tf_config,
                 "Map profiled hosts to TF tasks with this TF_CONFIG (a file or the JSON itself), "
                 "as tfdiag analyze --tf-config");
  cli.add_option("-j,--threads", o.threads, "Parser threads per large timeline (0: one per core)")
      ->check(CLI::Range(0, 64));
  try {
    cli.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return cli.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return cli.exit(e);
  } catch (const CLI::ParseError& e) {
    return Fail(e.what());
  }
  if (o.loading_shot && (o.screenshot.empty() || !o.dump_view.empty() || !o.input.empty())) {
    return Fail("--screenshot-loading needs --screenshot, without --dump-view or --input");
  }
  if ((!o.screenshot.empty() || !o.dump_view.empty()) && o.bench_frames > 0) {
    return Fail("--screenshot and --dump-view cannot be combined with --bench-frames");
  }
  // Pipes and standard input are copied to temporary files first (core/spooled_inputs.h); the
  // window title and errors name them as given. Never destroyed: a window closed mid-load leaves
  // the loader thread detached, still reading the copies while the process exits (their
  // descriptors close with it; the files were unlinked when created).
  auto* spooled = new tfdiag::SpooledInputs;
  std::vector<std::string> paths = o.files;
  if (const tfdiag::Status s = spooled->Spool(&paths); !s.ok()) return Fail(s.message());
  try {
    return Run(o, paths);
  } catch (const std::exception& e) {
    return Fail(std::string("internal error: ") + e.what(), 3);
  }
}
