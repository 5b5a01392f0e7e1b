// Headless rendering for `tfdiag-view --screenshot`: an offscreen framebuffer the UI is drawn
// into (so the image does not depend on the screen's size or on the window being visible), and
// PNG output through stb_image_write (Debian's libstb-dev).
// Thread-safety: OffscreenTarget must be used on the thread that owns the GL context.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace tfdiag::view {

// A framebuffer object with an RGBA8 colour renderbuffer of a fixed size. Needs a current
// OpenGL 3 context. Owns its GL objects (deleted by the destructor); not copyable.
class OffscreenTarget {
 public:
  OffscreenTarget() = default;
  ~OffscreenTarget();
  OffscreenTarget(const OffscreenTarget&) = delete;
  OffscreenTarget& operator=(const OffscreenTarget&) = delete;

  // Creates the framebuffer. Errors: kUnavailable when it is incomplete.
  Status Create(int width, int height);
  // Makes it the draw and read target, with a viewport of its size.
  void Bind() const;
  // Waits for rendering and reads the pixels: RGBA, width x height, top row first.
  std::vector<uint8_t> ReadPixels() const;
  int width() const { return width_; }
  int height() const { return height_; }

 private:
  unsigned fbo_ = 0, color_ = 0;
  int width_ = 0, height_ = 0;
};

// Samples the texture `texture` (Dear ImGui's font atlas) with GL_NEAREST instead of GL_LINEAR.
// Glyphs and the atlas's white pixel are drawn at whole-pixel positions, so the image is the
// same, and software rasterizers (Mesa llvmpipe) shade each pixel several times faster.
void UseNearestFiltering(void* texture);

// Encodes `rgba` (width x height, top row first) as PNG and writes it to `path` atomically.
// Errors: kIo naming the path.
Status WritePng(const std::string& path, int width, int height, const std::vector<uint8_t>& rgba);

}  // namespace tfdiag::view
