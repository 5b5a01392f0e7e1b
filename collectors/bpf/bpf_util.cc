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

const char* BpfAttachName(BpfAttach a) {
  switch (a) {
    case BpfAttach::kTpBtf:
      return "tp_btf";
    case BpfAttach::kRawTp:
      return "raw_tp";
    case BpfAttach::kAuto:
      break;
  }
  return "auto";
}

StatusOr<BpfAttach> ParseBpfAttach(const std::string& name) {
  for (BpfAttach a : {BpfAttach::kAuto, BpfAttach::kTpBtf, BpfAttach::kRawTp}) {
    if (name == BpfAttachName(a)) return a;
  }
  return UsageError("--bpf-attach {}: expected auto, tp_btf or raw_tp", name);
}

void SelectFlavour(bpf_object* obj, bool btf) {
  const char* keep = btf ? "_btf" : "_raw";
  bpf_program* prog = nullptr;
  bpf_object__for_each_program(prog, obj) {
    const std::string name = bpf_program__name(prog);
    const bool ours = name.size() > 4 && name.compare(name.size() - 4, 4, keep) == 0;
    bpf_program__set_autoload(prog, ours);
  }
}

void SizeTgidFilter(bpf_object* obj) {
  bpf_map* map = bpf_object__find_map_by_name(obj, "tgid_bits");
  if (map == nullptr) return;
  std::FILE* f = std::fopen("/proc/sys/kernel/pid_max", "r");
  long pid_max = 0;
  if (f != nullptr) {
    if (std::fscanf(f, "%ld", &pid_max) != 1) pid_max = 0;
    std::fclose(f);
  }
  const long words = (pid_max + 63) / 64;
  if (words > 0 && words < static_cast<long>(bpf_map__max_entries(map))) {
    bpf_map__set_max_entries(map, static_cast<uint32_t>(words));
  }
}

Status AddToTgidFilter(const char* probe, bpf_map* map, uint32_t tgid) {
  const uint32_t word = tgid / 64;
  uint64_t bits = 0;
  if (word >= bpf_map__max_entries(map)) {
    return Internal("eBPF probe {}: pid {} is above pid_max", probe, tgid);
  }
  if (bpf_map__lookup_elem(map, &word, sizeof(word), &bits, sizeof(bits), 0) != 0) {
    return BpfStepError(probe, "read the tgid filter", -errno);
  }
  bits |= uint64_t{1} << (tgid % 64);
  if (bpf_map__update_elem(map, &word, sizeof(word), &bits, sizeof(bits), BPF_ANY) != 0) {
    return BpfStepError(probe, "add a process to the tgid filter", -errno);
  }
  return OkStatus();
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
