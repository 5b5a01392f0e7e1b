#include "viewer/input_script.h"

#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace tfdiag::view {

namespace {

constexpr int kDragFrames = 8;

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\n\r"), e = s.find_last_not_of(" \t\n\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

bool ParsePoint(const std::string& s, ImVec2* p) {
  char extra = 0;
  return std::sscanf(s.c_str(), " %f , %f %c", &p->x, &p->y, &extra) == 2 && std::isfinite(p->x) &&
         std::isfinite(p->y);
}

// GLFW key code of a key name, or -1.
int KeyCode(const std::string& name) {
  if (name.size() == 1 &&
      ((name[0] >= 'A' && name[0] <= 'Z') || (name[0] >= '0' && name[0] <= '9')))
    return name[0];  // GLFW_KEY_A.. and GLFW_KEY_0.. are their ASCII codes
  if (name.size() == 1 && name[0] >= 'a' && name[0] <= 'z') return name[0] - 'a' + 'A';
  static const struct {
    const char* name;
    int code;
  } kKeys[] = {{"Left", GLFW_KEY_LEFT},   {"Right", GLFW_KEY_RIGHT}, {"Up", GLFW_KEY_UP},
               {"Down", GLFW_KEY_DOWN},   {"Home", GLFW_KEY_HOME},   {"End", GLFW_KEY_END},
               {"Equal", GLFW_KEY_EQUAL}, {"Minus", GLFW_KEY_MINUS}, {"Escape", GLFW_KEY_ESCAPE},
               {"Enter", GLFW_KEY_ENTER}, {"Space", GLFW_KEY_SPACE}};
  for (const auto& k : kKeys) {
    if (name == k.name) return k.code;
  }
  return -1;
}

}  // namespace

StatusOr<InputScript> InputScript::Parse(const std::string& text) {
  InputScript s;
  std::string lines = text;  // a newline separates commands like ';'
  std::replace(lines.begin(), lines.end(), '\n', ';');
  std::istringstream in(lines);
  for (std::string command; std::getline(in, command, ';');) {
    command = Trim(command);
    if (command.empty()) continue;
    Status st = s.Add(command);
    if (!st.ok()) return st;
  }
  return s;
}

Status InputScript::Add(const std::string& command) {
  std::string verb = command.substr(0, command.find(' '));
  std::string rest = Trim(command.substr(verb.size()));
  auto bad = [&](const char* expected) {
    return UsageError("--input: '{}': expected {}", command, expected);
  };
  Step step;
  if (verb == "hover" || verb == "click") {
    if (!ParsePoint(rest, &step.pos)) return bad("X,Y in pixels, e.g. hover 900,300");
    step.move = true;
    frames_.push_back(step);
    if (verb == "click") {
      frames_.push_back(Step{false, {}, 0});
      frames_.push_back(Step{false, {}, 1});
    }
  } else if (verb == "wheel") {
    size_t at = rest.find('@');
    char extra = 0;
    float notches = 0;
    if (at == std::string::npos || !ParsePoint(rest.substr(at + 1), &step.pos) ||
        std::sscanf(rest.substr(0, at).c_str(), " %f %c", &notches, &extra) != 1 ||
        notches != std::floor(notches) || notches == 0 || std::fabs(notches) > 100) {
      return bad("N @X,Y with N a whole number of notches, e.g. wheel 3 @800,400");
    }
    step.move = true;
    frames_.push_back(step);
    for (int i = 0; i < std::fabs(notches); ++i) {
      Step w;
      w.wheel = notches > 0 ? 1 : -1;
      frames_.push_back(w);
    }
  } else if (verb == "drag") {
    size_t arrow = rest.find("->");
    ImVec2 to;
    if (arrow == std::string::npos || !ParsePoint(rest.substr(0, arrow), &step.pos) ||
        !ParsePoint(rest.substr(arrow + 2), &to)) {
      return bad("X0,Y0 -> X1,Y1, e.g. drag 900,400 -> 600,400");
    }
    const ImVec2 from = step.pos;
    step.move = true;
    frames_.push_back(step);
    frames_.push_back(Step{false, {}, 0});
    for (int i = 1; i <= kDragFrames; ++i) {
      float t = static_cast<float>(i) / kDragFrames;
      frames_.push_back(
          Step{true, ImVec2(from.x + (to.x - from.x) * t, from.y + (to.y - from.y) * t)});
    }
    frames_.push_back(Step{false, {}, 1});
  } else if (verb == "key") {
    int code = KeyCode(rest);
    if (code < 0)
      return bad(
          "a key: A-Z, 0-9, Left, Right, Up, Down, Home, End, Equal, Minus, Escape, Enter, "
          "Space");
    step.key = code;
    step.key_down = true;
    frames_.push_back(step);
    step.key_down = false;
    frames_.push_back(step);
  } else if (verb == "wait") {
    int n = 0;
    char extra = 0;
    if (std::sscanf(rest.c_str(), " %d %c", &n, &extra) != 1 || n < 1 || n > 1000) {
      return bad("a number of frames, 1 to 1000");
    }
    frames_.insert(frames_.end(), static_cast<size_t>(n), Step{});
  } else {
    return UsageError("--input: '{}': unknown command '{}' (hover, wheel, drag, click, key, wait)",
                      command, verb);
  }
  return OkStatus();
}

void InputScript::Frame(GLFWwindow* window, bool hold_mouse) {
  ImGuiIO& io = ImGui::GetIO();
  if (!done()) {
    const Step& s = frames_[next_++];
    if (s.move) has_mouse_ = true, mouse_ = s.pos;
    if (s.button == 0) {
      ImGui_ImplGlfw_MouseButtonCallback(window, GLFW_MOUSE_BUTTON_LEFT, GLFW_PRESS, 0);
      left_down_ = true;
    } else if (s.button == 1) {
      ImGui_ImplGlfw_MouseButtonCallback(window, GLFW_MOUSE_BUTTON_LEFT, GLFW_RELEASE, 0);
      left_down_ = false;
    }
    // The wheel and keys reach ImGuiIO as a user's would: through the backend's callbacks.
    if (s.wheel != 0) ImGui_ImplGlfw_ScrollCallback(window, 0, s.wheel);
    if (s.key >= 0) {
      ImGui_ImplGlfw_KeyCallback(window, s.key, 0, s.key_down ? GLFW_PRESS : GLFW_RELEASE, 0);
    }
  } else if (!hold_mouse) {
    return;  // the real mouse takes over
  }
  if (has_mouse_) io.MousePos = mouse_;
  io.MouseDown[0] = left_down_;
}

}  // namespace tfdiag::view
