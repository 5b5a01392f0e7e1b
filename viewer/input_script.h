// Scripted input (`tfdiag-view --input SCRIPT`): mouse and key events played over successive
// frames, for tests and reproducible screenshots. Keys and the wheel go through the GLFW
// backend's own callbacks (the code path of a user's events); the mouse position and buttons
// are written to ImGuiIO after the backend's NewFrame, which only reads the cursor of a focused
// window (an offscreen window never is).
//
// Script: commands separated by ';' or newlines (blank ones ignored), coordinates in window pixels:
//   hover X,Y             move the mouse to X,Y
//   wheel N @X,Y          move to X,Y, then N wheel notches (N > 0 zooms in), one per frame
//   drag X0,Y0 -> X1,Y1   press the left button at X0,Y0, move to X1,Y1 in 8 frames, release
//   click X,Y             press and release the left button at X,Y
//   key NAME              press and release a key: A-Z, 0-9, Left, Right, Up, Down, Home, End,
//                         Equal, Minus, Escape, Enter, Space
//   wait N                N frames without input (1-1000)
// Thread-safety: UI thread only.
#pragma once

#include <imgui.h>

#include <string>
#include <vector>

#include "core/status.h"

struct GLFWwindow;

namespace tfdiag::view {

class InputScript {
 public:
  InputScript() = default;

  // Parses `text`. Errors: kUsage naming the command that is wrong and what was expected.
  static StatusOr<InputScript> Parse(const std::string& text);

  // Plays this frame's events into `window`'s backend and ImGuiIO. Call between
  // ImGui_ImplGlfw_NewFrame() and ImGui::NewFrame(). After the last event the mouse stays where
  // the script left it as long as `hold_mouse` (offscreen: there is no real mouse).
  void Frame(GLFWwindow* window, bool hold_mouse);

  // True once every event has been played (at once for an empty script).
  bool done() const { return next_ >= frames_.size(); }
  // Frames the script takes.
  size_t frames() const { return frames_.size(); }

 private:
  // What happens in one frame.
  struct Step {
    bool move = false;
    ImVec2 pos;
    int button = -1;  // 0 press the left button, 1 release it, -1 leave it
    float wheel = 0;  // notches
    int key = -1;     // GLFW key code
    bool key_down = false;
  };
  Status Add(const std::string& command);

  std::vector<Step> frames_;
  size_t next_ = 0;
  bool has_mouse_ = false, left_down_ = false;
  ImVec2 mouse_;
};

}  // namespace tfdiag::view
