// Helpers for the tfdiag-view tests: running the viewer under xvfb-run, decoding its PNG
// screenshots (stb_image from libstb-dev) and reading its --dump-view JSON.
#pragma once

#include <rapidjson/document.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tests/test_util.h"

namespace tfdiag::test {

// viewer/panels/panels.h colors::kHot.
constexpr uint8_t kHotR = 0xFF, kHotG = 0x30, kHotB = 0x30;

// The built tfdiag-view, or nullptr when it is not built (no GLFW/OpenGL/imgui).
const char* ViewBinary();
// True when xvfb-run is on PATH.
bool HaveXvfb();
// Why viewer tests cannot run here ("" when they can).
std::string ViewerSkipReason();

struct Rect {
  int x = 0, y = 0, w = 0, h = 0;
};

// An RGB image, top row first; empty (w = h = 0) when it could not be decoded.
struct Image {
  int w = 0, h = 0;
  std::vector<uint8_t> rgb;
  const uint8_t* At(int x, int y) const { return &rgb[(static_cast<size_t>(y) * w + x) * 3]; }
};

struct Shot {
  RunResult run;
  Image image;
  std::string layout;                  // the --layout file's text
  std::map<std::string, Rect> panels;  // from its "panel NAME X Y W H" lines
};

// Runs `env` tfdiag-view `args`, under xvfb-run when `xvfb` is set. xvfb-run -a can race with a
// concurrent xvfb-run for the same display number; such a failure is retried.
RunResult RunView(const std::string& args, bool xvfb = true, const std::string& env = "");
// Runs `command` (a full shell command line, e.g. tfdiag view ...) under xvfb-run; run again (3
// tries in all) when xvfb-run itself failed ("xvfb-run: error: ...", "Xvfb failed to start").
RunResult RunUnderXvfb(const std::string& command);

Image DecodePng(const std::string& path);
// Parses the "panel NAME X Y W H" lines of a --layout file's text.
std::map<std::string, Rect> PanelRects(const std::string& layout);
// tfdiag-view --screenshot DIR/NAME --layout DIR/NAME.layout ARGS, decoded. Expects stdout to
// hold nothing but "wrote ..." lines (issue 39: no layout lines on stdout).
Shot Screenshot(const TempDir& dir, const std::string& name, const std::string& args);
// Screenshot DIR/NAME.png with `--dump-view DIR/NAME.json ARGS`; expects exit 0 and returns the
// view dump parsed (IsObject() false when it was not written).
rapidjson::Document DumpView(const TempDir& dir, const std::string& name, const std::string& args,
                             Shot* shot);

int DistinctColours(const Image& img);
// Distinct colours within `r`.
int DistinctColours(const Image& img, const Rect& r);
// Share of the pixels that have the most common colour.
double MostCommonShare(const Image& img);
int64_t CountColour(const Image& img, const Rect& r, uint8_t cr, uint8_t cg, uint8_t cb);
// Pixels that differ between two images of the same size, within `r`.
int64_t DiffPixels(const Image& a, const Image& b, const Rect& r);

// Writes the simulated hot-PS job (4 PS, 16 workers, 3 steps; ps:0 hot) to DIR/hot-ps.json and
// returns its path; fails the calling test when it cannot be written.
std::string HotPsSample(const TempDir& dir);

// Parses JSON text; IsObject() is false when it does not parse.
rapidjson::Document ParseJson(const std::string& text);

}  // namespace tfdiag::test
