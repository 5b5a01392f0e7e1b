#include "tests/viewer_util.h"

#include <gtest/gtest.h>

#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_STATIC
#include <stb/stb_image.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <sstream>

#include "samples/simulator.h"

namespace tfdiag::test {

const char* ViewBinary() { return *BuiltViewer() != '\0' ? BuiltViewer() : nullptr; }

bool HaveXvfb() { return std::system("command -v xvfb-run >/dev/null 2>&1") == 0; }

std::string ViewerSkipReason() {
  if (ViewBinary() == nullptr) return "tfdiag-view is not built (no GLFW/OpenGL/imgui)";
  if (!HaveXvfb()) return "xvfb-run is not installed (apt-get install xvfb xauth)";
  return "";
}

RunResult RunUnderXvfb(const std::string& command) {
  RunResult r;
  for (int attempt = 0; attempt < 3; ++attempt) {
    r = RunShell("xvfb-run -a -s '-screen 0 1600x1000x24' " + command);
    // xvfb-run's own failures ("xvfb-run: error: ..."), not the command's: the X server did not
    // start, or its temporary directory could not be removed afterwards (exit 5, once in a CI
    // run on 2026-11-30 with the viewer's own exit and message right). Run again.
    if (r.err.find("xvfb-run: error:") == std::string::npos &&
        r.err.find("Xvfb failed to start") == std::string::npos) {
      break;
    }
  }
  return r;
}

RunResult RunView(const std::string& args, bool xvfb, const std::string& env) {
  std::string command = env + " " + ViewBinary() + " " + args;
  return xvfb ? RunUnderXvfb(command) : RunShell(command);
}

Image DecodePng(const std::string& path) {
  Image img;
  int n = 0;
  uint8_t* data = stbi_load(path.c_str(), &img.w, &img.h, &n, 3);
  if (data == nullptr) return Image{};
  img.rgb.assign(data, data + static_cast<size_t>(img.w) * img.h * 3);
  stbi_image_free(data);
  return img;
}

std::map<std::string, Rect> PanelRects(const std::string& out) {
  std::map<std::string, Rect> panels;
  std::istringstream lines(out);
  std::string word, panel;
  for (std::string line; std::getline(lines, line);) {
    std::istringstream ls(line);
    Rect r;
    if (ls >> word >> panel >> r.x >> r.y >> r.w >> r.h && word == "panel") panels[panel] = r;
  }
  return panels;
}

rapidjson::Document DumpView(const TempDir& dir, const std::string& name, const std::string& args,
                             Shot* shot) {
  const std::string json = dir.File(name + ".json");
  *shot = Screenshot(dir, name + ".png", "--dump-view '" + json + "' " + args);
  EXPECT_EQ(shot->run.exit_code, 0) << shot->run.err;
  return ParseJson(ReadFile(json));
}

Shot Screenshot(const TempDir& dir, const std::string& name, const std::string& args) {
  Shot s;
  std::string png = dir.File(name);
  const std::string layout = png + ".layout";
  s.run = RunView("--screenshot '" + png + "' --layout '" + layout + "' " + args);
  s.layout = ReadFile(layout);
  s.panels = PanelRects(s.layout);
  std::istringstream lines(s.run.out);
  for (std::string line; std::getline(lines, line);) {
    EXPECT_EQ(line.rfind("wrote ", 0), 0u) << "stdout says only what was written: " << line;
  }
  s.image = DecodePng(png);
  return s;
}

int DistinctColours(const Image& img) { return DistinctColours(img, Rect{0, 0, img.w, img.h}); }

int DistinctColours(const Image& img, const Rect& r) {
  std::set<uint32_t> colours;
  for (int y = r.y; y < r.y + r.h && y < img.h; ++y) {
    for (int x = r.x; x < r.x + r.w && x < img.w; ++x) {
      const uint8_t* p = img.At(x, y);
      colours.insert(p[0] << 16 | p[1] << 8 | p[2]);
    }
  }
  return static_cast<int>(colours.size());
}

double MostCommonShare(const Image& img) {
  std::map<uint32_t, int64_t> count;
  int64_t best = 0;
  for (size_t i = 0; i + 2 < img.rgb.size(); i += 3) {
    best = std::max(best, ++count[img.rgb[i] << 16 | img.rgb[i + 1] << 8 | img.rgb[i + 2]]);
  }
  return img.rgb.empty() ? 1.0 : static_cast<double>(best) / (img.rgb.size() / 3);
}

int64_t CountColour(const Image& img, const Rect& r, uint8_t cr, uint8_t cg, uint8_t cb) {
  int64_t n = 0;
  for (int y = r.y; y < r.y + r.h && y < img.h; ++y) {
    for (int x = r.x; x < r.x + r.w && x < img.w; ++x) {
      const uint8_t* p = img.At(x, y);
      n += p[0] == cr && p[1] == cg && p[2] == cb;
    }
  }
  return n;
}

int64_t DiffPixels(const Image& a, const Image& b, const Rect& r) {
  int64_t n = 0;
  for (int y = r.y; y < r.y + r.h && y < a.h && y < b.h; ++y) {
    for (int x = r.x; x < r.x + r.w && x < a.w && x < b.w; ++x) {
      const uint8_t *p = a.At(x, y), *q = b.At(x, y);
      n += p[0] != q[0] || p[1] != q[1] || p[2] != q[2];
    }
  }
  return n;
}

std::string HotPsSample(const TempDir& dir) {
  sim::ScenarioParams p;
  p.scenario = "hot-ps";
  p.steps = 3;
  std::string path = dir.File("hot-ps.json");
  EXPECT_TRUE(sim::WriteScenario(p, path).ok());
  return path;
}

rapidjson::Document ParseJson(const std::string& text) {
  rapidjson::Document d;
  d.Parse(text.c_str());
  return d;
}

}  // namespace tfdiag::test
