#include "core/device_name.h"

#include <cctype>
#include <charconv>
#include <vector>

#include "core/tf_roles.h"

namespace tfdiag {

namespace {

bool ParseInt(std::string_view s, int* out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

std::string Upper(std::string_view s) {
  std::string r(s);
  for (char& c : r) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return r;
}

bool IsDeviceType(std::string_view t) {
  std::string u = Upper(t);
  return u == "CPU" || u == "GPU" || u == "TPU" || u == "XLA_CPU" || u == "XLA_GPU" ||
         u == "TPU_SYSTEM" || u == "SYCL";
}

}  // namespace

// JobKind's first five kinds are kTfRoles' roles, in its order.
static_assert(kTfRoles.size() == static_cast<size_t>(JobKind::kLocal));

JobKind JobKindOf(std::string_view job) {
  for (size_t i = 0; i < kTfRoles.size(); ++i) {
    if (job == kTfRoles[i]) return static_cast<JobKind>(i);
  }
  if (job.empty() || job == "localhost") return JobKind::kLocal;
  return JobKind::kOther;
}

std::string_view JobKindName(JobKind kind) {
  const size_t i = static_cast<size_t>(kind);
  if (i < kTfRoles.size()) return kTfRoles[i];
  return kind == JobKind::kLocal ? "local" : "other";
}

std::string DeviceName::Canonical() const {
  std::string s;
  if (!job.empty()) s = fmt::format("/job:{}/replica:{}/task:{}", job, replica, task);
  s += fmt::format("/device:{}:{}", type, index);
  if (!sub.empty()) s += "/" + sub;
  return s;
}

std::string TaskLabel(std::string_view job, int replica, int task) {
  if (replica != 0) return fmt::format("{}:{}@r{}", job, task, replica);
  return fmt::format("{}:{}", job, task);
}

StatusOr<DeviceName> ParseDeviceName(std::string_view text) {
  DeviceName d;
  std::string_view s = text;
  // timeline.py appends " Compute" or " Tensors"; XLA/GPU tracers may append other words.
  size_t space = s.find(' ');
  if (space != std::string_view::npos) {
    d.lane_kind = std::string(s.substr(space + 1));
    s = s.substr(0, space);
  }
  if (s.empty() || s[0] != '/') {
    return InvalidInput("'{}' is not a device name (expected /job:<name>/.../device:<TYPE>:<N>)",
                        text);
  }
  bool have_device = false;
  bool have_job = false;
  std::vector<std::string_view> parts;
  size_t pos = 1;
  while (pos <= s.size()) {
    size_t next = s.find('/', pos);
    if (next == std::string_view::npos) next = s.size();
    if (next > pos) parts.push_back(s.substr(pos, next - pos));
    pos = next + 1;
  }
  for (std::string_view part : parts) {
    size_t colon = part.find(':');
    std::string_view key = part.substr(0, colon);
    std::string_view val = colon == std::string_view::npos ? "" : part.substr(colon + 1);
    if (key == "job" && colon != std::string_view::npos) {
      d.job = std::string(val);
      have_job = true;
    } else if (key == "replica") {
      if (!ParseInt(val, &d.replica)) return InvalidInput("'{}': bad replica '{}'", text, val);
    } else if (key == "task") {
      if (!ParseInt(val, &d.task)) return InvalidInput("'{}': bad task '{}'", text, val);
    } else if (key == "device" && !have_device) {
      // device:GPU:0 or device:CPU:0
      size_t c2 = val.rfind(':');
      if (c2 == std::string_view::npos || !ParseInt(val.substr(c2 + 1), &d.index)) {
        return InvalidInput("'{}': bad device component '{}'", text, part);
      }
      d.type = Upper(val.substr(0, c2));
      have_device = true;
    } else if (key == "host" && !have_device) {
      d.type = Upper(val.empty() ? "CPU" : val);  // TF2 "/host:CPU"
      have_device = true;
    } else if (!have_device && IsDeviceType(key) && ParseInt(val, &d.index)) {
      d.type = Upper(key);  // legacy "/cpu:0", "/gpu:0"
      have_device = true;
    } else if (have_device) {
      if (!d.sub.empty()) d.sub += "/";
      d.sub += std::string(part);  // stream:12, stream:all, memcpy, ...
    } else {
      return InvalidInput("'{}': unexpected component '{}'", text, part);
    }
  }
  if (!have_device) {
    if (!have_job) return InvalidInput("'{}' names no device", text);
    d.type = "CPU";  // "/job:ps/replica:0/task:0" alone: the task's host
  }
  return d;
}

}  // namespace tfdiag
