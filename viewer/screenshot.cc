#include "viewer/screenshot.h"

#define GL_GLEXT_PROTOTYPES 1
#include <GL/gl.h>
#include <GL/glext.h>

// stb_image_write from libstb-dev, compiled here with internal linkage so that it cannot clash
// with the copy inside libstb.so (which Dear ImGui's package links for stb_truetype).
#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STB_IMAGE_WRITE_STATIC
#include <stb/stb_image_write.h>

#include "core/atomic_file.h"

namespace tfdiag::view {

OffscreenTarget::~OffscreenTarget() {
  if (color_) glDeleteRenderbuffers(1, &color_);
  if (fbo_) glDeleteFramebuffers(1, &fbo_);
}

Status OffscreenTarget::Create(int width, int height) {
  width_ = width;
  height_ = height;
  glGenFramebuffers(1, &fbo_);
  glBindFramebuffer(GL_FRAMEBUFFER, fbo_);
  glGenRenderbuffers(1, &color_);
  glBindRenderbuffer(GL_RENDERBUFFER, color_);
  glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, width, height);
  glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, color_);
  GLenum st = glCheckFramebufferStatus(GL_FRAMEBUFFER);
  glBindFramebuffer(GL_FRAMEBUFFER, 0);
  if (st != GL_FRAMEBUFFER_COMPLETE) {
    return Status(
        StatusCode::kUnavailable,
        fmt::format("offscreen framebuffer {}x{} incomplete (status 0x{:x})", width, height, st));
  }
  return OkStatus();
}

void OffscreenTarget::Bind() const {
  glBindFramebuffer(GL_FRAMEBUFFER, fbo_);
  glViewport(0, 0, width_, height_);
}

std::vector<uint8_t> OffscreenTarget::ReadPixels() const {
  std::vector<uint8_t> px(static_cast<size_t>(width_) * height_ * 4);
  glBindFramebuffer(GL_READ_FRAMEBUFFER, fbo_);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glFinish();
  glReadPixels(0, 0, width_, height_, GL_RGBA, GL_UNSIGNED_BYTE, px.data());
  // OpenGL's first row is the bottom one.
  const size_t stride = static_cast<size_t>(width_) * 4;
  std::vector<uint8_t> row(stride);
  for (int y = 0; y < height_ / 2; ++y) {
    uint8_t* a = px.data() + y * stride;
    uint8_t* b = px.data() + (height_ - 1 - y) * stride;
    std::copy(a, a + stride, row.data());
    std::copy(b, b + stride, a);
    std::copy(row.data(), row.data() + stride, b);
  }
  for (size_t i = 3; i < px.size(); i += 4) px[i] = 0xFF;  // opaque, whatever the blending left
  return px;
}

void UseNearestFiltering(void* texture) {
  GLint last = 0;
  glGetIntegerv(GL_TEXTURE_BINDING_2D, &last);
  glBindTexture(GL_TEXTURE_2D, static_cast<GLuint>(reinterpret_cast<intptr_t>(texture)));
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
  glBindTexture(GL_TEXTURE_2D, static_cast<GLuint>(last));
}

Status WritePng(const std::string& path, int width, int height, const std::vector<uint8_t>& rgba) {
  std::string png;
  auto append = [](void* ctx, void* data, int size) {
    static_cast<std::string*>(ctx)->append(static_cast<const char*>(data), size);
  };
  if (!stbi_write_png_to_func(append, &png, width, height, 4, rgba.data(), width * 4)) {
    return IoError("{}: PNG encoding failed", path);
  }
  return WriteFileAtomically(path, png);
}

}  // namespace tfdiag::view
