// Kubernetes files: telling them (manifests, pod lists, Helm templates) and kubectl's table
// output from traces by their first bytes, reading one, and the Kubernetes container's fields
// (declared in k8s_reader.h).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include "collectors/k8s/k8s_reader.h"
#include "core/input_limits.h"

namespace tfdiag {

bool IsContainerField(std::string_view key) {
  // core/v1 Container (Kubernetes 1.31 API reference, "Container v1 core").
  static const char* const kFields[] = {"name",
                                        "image",
                                        "command",
                                        "args",
                                        "workingDir",
                                        "ports",
                                        "envFrom",
                                        "env",
                                        "resources",
                                        "resizePolicy",
                                        "restartPolicy",
                                        "volumeMounts",
                                        "volumeDevices",
                                        "livenessProbe",
                                        "readinessProbe",
                                        "startupProbe",
                                        "lifecycle",
                                        "terminationMessagePath",
                                        "terminationMessagePolicy",
                                        "imagePullPolicy",
                                        "securityContext",
                                        "stdin",
                                        "stdinOnce",
                                        "tty"};
  for (const char* f : kFields) {
    if (key == f) return true;
  }
  return false;
}

bool LooksLikeHelmTemplate(std::string_view head) {
  const size_t first = head.find_first_not_of(" \t\r\n");
  const bool json = first != std::string_view::npos && (head[first] == '{' || head[first] == '[');
  size_t pos = 0;
  while (pos < head.size()) {
    size_t nl = head.find_first_of("\r\n", pos);
    std::string_view line = head.substr(pos, nl == std::string_view::npos ? nl : nl - pos);
    const size_t s = line.find_first_not_of(" \t");
    if (s != std::string_view::npos && line.substr(s).rfind("{{", 0) == 0) return true;
    if (!json && (line.find(": {{") != std::string_view::npos ||
                  line.find("- {{") != std::string_view::npos))
      return true;
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  return false;
}

bool LooksLikeK8s(std::string_view head) {
  if (head.find("traceEvents") != std::string_view::npos) return false;
  if (head.find("\"apiVersion\"") != std::string_view::npos &&
      head.find("\"kind\"") != std::string_view::npos)
    return true;
  size_t pos = 0;
  while (pos < head.size()) {
    size_t nl = head.find_first_of("\r\n", pos);  // CR-only files too
    std::string_view line = head.substr(pos, nl == std::string_view::npos ? nl : nl - pos);
    if (line.rfind("apiVersion:", 0) == 0 || line.rfind("kind:", 0) == 0) return true;
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  return false;
}

bool LooksLikeKubectlTable(std::string_view head) {
  const size_t nl = head.find_first_of("\r\n");
  const std::string_view line = head.substr(0, nl);
  if (line.rfind("NAME ", 0) != 0 && line.rfind("NAMESPACE ", 0) != 0) return false;
  int columns = 0;
  for (size_t i = 0; i < line.size();) {
    while (i < line.size() && line[i] == ' ') ++i;
    if (i == line.size()) break;
    ++columns;
    for (; i < line.size() && line[i] != ' '; ++i) {
      const char c = line[i];
      if (!((c >= 'A' && c <= 'Z') || c == '-' || c == '(' || c == ')' || c == '_')) return false;
    }
  }
  return columns >= 2;
}

bool IsK8sFile(const std::string& path) {
  auto ends = [&](const char* s) {
    size_t n = std::char_traits<char>::length(s);
    return path.size() >= n && path.compare(path.size() - n, n, s) == 0;
  };
  // Helm chart files: a template (`_helpers.tpl`) is not JSON; the manifest reader says to
  // render it first.
  if (ends(".yaml") || ends(".yml") || ends(".tpl")) return true;
  std::ifstream in(path, std::ios::binary);
  std::string head(16384, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  if (head.size() >= 2 && static_cast<unsigned char>(head[0]) == 0x1f &&
      static_cast<unsigned char>(head[1]) == 0x8b)
    return false;  // gzip: a timeline
  return LooksLikeK8s(head) || LooksLikeHelmTemplate(head);
}

StatusOr<std::string> ReadK8sText(const std::string& path, const std::string& shown) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return IoError("{}: cannot open: {}", shown, std::strerror(errno));
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) return IoError("{}: cannot stat: {}", shown, std::strerror(errno));
  if (S_ISDIR(st.st_mode)) return InvalidInput("{}: is a directory", shown);
  // Refused by its size before a byte is read (a 2 GiB sparse file took 4.1 GB and 16 s).
  if (S_ISREG(st.st_mode) && st.st_size > kMaxK8sFileBytes) {
    return InvalidInput("{}: {} bytes; the limit for a manifest or pod list is {} MiB", shown,
                        static_cast<int64_t>(st.st_size), kMaxK8sFileBytes >> 20);
  }
  std::string text;
  if (S_ISREG(st.st_mode)) text.reserve(static_cast<size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return IoError("{}: read failed: {}", shown, std::strerror(errno));
    if (n == 0) break;
    if (static_cast<int64_t>(text.size()) + n > kMaxK8sFileBytes) {  // a pipe, or a growing file
      return InvalidInput("{}: more than {} MiB; the limit for a manifest or pod list", shown,
                          kMaxK8sFileBytes >> 20);
    }
    text.append(buf, static_cast<size_t>(n));
  }
  // A NUL byte (a sparse file's hole) is never YAML or JSON: named at its own line and column.
  if (const void* nul = std::memchr(text.data(), 0, text.size())) {
    const size_t at = static_cast<size_t>(static_cast<const char*>(nul) - text.data());
    const size_t line = static_cast<size_t>(std::count(text.begin(), text.begin() + at, '\n'));
    const size_t nl = text.rfind('\n', at);
    const size_t column = nl == std::string::npos ? at : at - nl - 1;
    return InvalidInput("{}: line {}, column {} (byte {}): a NUL byte; expected YAML or JSON text",
                        shown, line + 1, column + 1, at);
  }
  return text;
}

Status ReadK8sFile(const std::string& path, K8sDeployment* out, const std::string& name) {
  const std::string& shown = name.empty() ? path : name;
  StatusOr<std::string> text = ReadK8sText(path, shown);
  if (!text.ok()) return text.status();
  return ParseK8sText(*text, shown, out);
}

}  // namespace tfdiag
