// tfdiag view FILE...: opens the desktop viewer. The viewer is its own executable (tfdiag-view,
// linked against GLFW, OpenGL and Dear ImGui) so that this CLI needs no GL libraries on a server:
// `view` finds tfdiag-view beside the running tfdiag (/proc/self/exe's directory), then on PATH,
// and execs it with the arguments passed through unchanged.
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cli/commands.h"

namespace tfdiag {

namespace {

constexpr const char* kViewer = "tfdiag-view";

bool Executable(const std::string& path) {
  return !path.empty() && access(path.c_str(), X_OK) == 0;
}

// The directory of the running executable, or "" when /proc is not mounted.
std::string SelfDir() {
  std::string buf(4096, '\0');
  ssize_t n = readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  if (n <= 0) return "";
  buf.resize(static_cast<size_t>(n));
  size_t slash = buf.find_last_of('/');
  return slash == std::string::npos ? "" : buf.substr(0, slash);
}

// tfdiag-view beside this executable, else the first one on PATH, else "".
std::string FindViewer() {
  std::string dir = SelfDir();
  if (!dir.empty() && Executable(dir + "/" + kViewer)) return dir + "/" + kViewer;
  const char* path = std::getenv("PATH");
  std::string p = path ? path : "";
  for (size_t b = 0; b <= p.size();) {
    size_t e = p.find(':', b);
    if (e == std::string::npos) e = p.size();
    std::string d = p.substr(b, e - b);
    if (!d.empty() && Executable(d + "/" + kViewer)) return d + "/" + kViewer;
    b = e + 1;
  }
  return "";
}

Status Missing() {
  std::string dir = SelfDir();
  return NotFound(
      "{} was not found beside tfdiag ({}) nor on PATH; build it with `make demo` or `make build` "
      "(CMake target "
      "tfdiag_view, which needs libglfw3-dev, libgl-dev and libimgui-dev: scripts/bootstrap.sh "
      "installs them)",
      kViewer, dir.empty() ? "unknown directory" : dir);
}

constexpr const char* kHelp =
    "tfdiag view FILE... [viewer options]: opens timelines and bundles in the desktop viewer.\n"
    "The viewer is its own executable, tfdiag-view (GLFW + OpenGL 3 + Dear ImGui), so that the\n"
    "tfdiag CLI needs no GL libraries; it is looked up beside tfdiag, then on PATH, and every\n"
    "argument is passed through to it. Files load in the background; the window shows\n"
    "findings, the timeline, PS load (hot PS in red, traffic heat map) and CPU samples.\n"
    "Mouse and keys in the timeline: wheel or W/S zoom at the cursor, drag or A/D or arrows\n"
    "pan, F fit, Shift+wheel scroll rows; hover an op for its name, op, duration and inputs.\n"
    "tfdiag view --scaling RUN RUN...: runs of one job side by side (throughput against\n"
    "workers beside ideal, PS busy shares per run, scaling-limit findings), as tfdiag scaling.\n";

Status RunView(const std::vector<std::string>& args) {
  bool help = false;
  for (const std::string& a : args) {
    if (a == "--") break;
    if (a == "-h" || a == "--help") help = true;
  }
  std::string viewer = FindViewer();
  if (help) {
    std::fputs(kHelp, stdout);
    if (viewer.empty()) {
      std::printf("\nThe viewer is not installed here: %s.\n", Missing().message().c_str());
      return OkStatus();
    }
    std::printf("\nViewer: %s. Its options:\n\n", viewer.c_str());
  }
  if (viewer.empty()) return Missing();
  if (!help && args.empty())
    return UsageError("expected FILE... (timelines or bundles; see tfdiag view --help)");
  std::vector<std::string> argv = {kViewer};
  argv.insert(argv.end(), args.begin(), args.end());
  if (help) argv = {kViewer, "--help"};
  std::vector<char*> cargv;
  for (std::string& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  std::fflush(nullptr);
  execv(viewer.c_str(), cargv.data());
  return IoError("cannot run {}: {}", viewer, std::strerror(errno));
}

}  // namespace

Command RegisterView(CLI::App& root) {
  CLI::App* app =
      root.add_subcommand("view",
                          "Open timelines and bundles in the desktop viewer (runs tfdiag-view; "
                          "`tfdiag view --help` for its options)");
  // Everything after `view` belongs to the viewer, --help included.
  app->set_help_flag();
  app->prefix_command();
  return {app, [app](int*) { return RunView(app->remaining()); }};
}

}  // namespace tfdiag
