#include "collectors/bpf/bpf_util.h"

#include <bpf/libbpf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace tfdiag {

namespace {

std::mutex g_log_mu;
std::string g_last_log;  // the last warning libbpf printed, for error messages
bool g_debug = false;

int LogToBuffer(enum libbpf_print_level level, const char* fmt, va_list args) {
  char line[1024];
  std::vsnprintf(line, sizeof(line), fmt, args);
  if (g_debug) std::fputs(line, stderr);
  if (level == LIBBPF_DEBUG) return 0;
  std::lock_guard<std::mutex> lock(g_log_mu);
  g_last_log = line;
  while (!g_last_log.empty() && g_last_log.back() == '\n') g_last_log.pop_back();
  return 0;
}

}  // namespace

void InstallBpfLogger() {
  static std::once_flag once;
  std::call_once(once, [] {
    const char* d = std::getenv("TFDIAG_BPF_DEBUG");
    g_debug = d != nullptr && std::strcmp(d, "1") == 0;
    libbpf_set_print(LogToBuffer);
  });
}

Status BpfAvailable() {
  struct stat st;
  if (::stat("/sys/kernel/btf/vmlinux", &st) != 0) {
    return NotFound(
        "no kernel BTF at /sys/kernel/btf/vmlinux (CONFIG_DEBUG_INFO_BTF=y is needed for the "
        "eBPF probes)");
  }
  if (::geteuid() != 0) {
    return NotFound("not root: loading the eBPF probes needs root (or CAP_BPF and CAP_PERFMON)");
  }
  return OkStatus();
}

Status BpfStepError(const char* probe, const char* step, int err) {
  const int e = err < 0 ? -err : err;
  std::string last;
  {
    std::lock_guard<std::mutex> lock(g_log_mu);
    last = g_last_log;
  }
  return Internal("eBPF probe {}: {}: {} (errno {}){}", probe, step, std::strerror(e), e,
                  last.empty() ? "" : "; libbpf: " + last);
}

}  // namespace tfdiag
