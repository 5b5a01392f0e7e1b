// Helpers shared by the BPF collectors: checking that this kernel can run them (BTF, rights)
// and turning a failed lifecycle step into a Status that names the probe, the step and errno
// (libbpf-bootstrap's habit: open, load, attach, poll, destroy are each checked).
// Also: the attach flavours (tp_btf, raw_tp) and opening a skeleton in the first that works,
// and the tgid filter every probe shares (tgid_filter.bpf.h).
// Thread-safety: BpfAvailable, BpfStepError and the name functions are reentrant;
// InstallBpfLogger is call-once; the others act on one probe and belong to its owner thread.
#pragma once

#include <cerrno>
#include <cstdint>
#include <string>

#include "core/status.h"

struct bpf_map;
struct bpf_object;

namespace tfdiag {

// How the probes attach. kAuto probes tp_btf (BTF-typed raw tracepoint) first, then a plain
// raw tracepoint; the others force one flavour (tests of the fallback, kernels where one of
// them misbehaves).
enum class BpfAttach { kAuto, kTpBtf, kRawTp };

// "auto", "tp_btf", "raw_tp".
const char* BpfAttachName(BpfAttach a);
// Parses one of the names above. Errors: kUsage naming the accepted values.
StatusOr<BpfAttach> ParseBpfAttach(const std::string& name);

// Before load: keeps only one flavour of the object's programs, by name suffix: "_btf" programs
// are the tp_btf flavour, "_raw" programs the raw_tp one (the probes' naming rule).
void SelectFlavour(bpf_object* obj, bool btf);

// Before load: sizes the object's `tgid_bits` map (tgid_filter.bpf.h), if it has one, to the
// words that /proc/sys/kernel/pid_max needs (the compiled size, for 4M pids, if unreadable).
void SizeTgidFilter(bpf_object* obj);
// Selects process `tgid` in a `tgid_bits` map (read-modify-write of its word: one writer,
// the probe's owner). Errors: kInternal naming `probe` and errno.
Status AddToTgidFilter(const char* probe, bpf_map* map, uint32_t tgid);

// Opens, loads and attaches a skeleton in the flavours `want` allows, tp_btf first; on success
// `*type` is "tp_btf" or "raw_tp". Errors: kInternal naming each flavour tried, its failed
// step and errno. `Skel` is a bpftool skeleton type (obj member); the functions are its
// generated __open/__load/__attach/__destroy.
template <typename Skel>
StatusOr<Skel*> OpenFlavoured(const char* probe, BpfAttach want, Skel* (*open)(),
                              int (*load)(Skel*), int (*attach)(Skel*), void (*destroy)(Skel*),
                              std::string* type);

// kOk when BPF probes can be loaded here: the kernel exposes its BTF at
// /sys/kernel/btf/vmlinux (CO-RE and tp_btf need it) and we run as root (or have CAP_BPF and
// CAP_PERFMON). Otherwise kNotFound with what is missing, for the bundle's warnings.
Status BpfAvailable();

// A failed step: "<probe>: <step>: <strerror(-err)> (errno <n>)", plus the last libbpf
// message. `err` is a libbpf return value (negative errno).
Status BpfStepError(const char* probe, const char* step, int err);

// Routes libbpf's messages to a buffer (shown in BpfStepError), or to stderr when the
// environment has TFDIAG_BPF_DEBUG=1.
void InstallBpfLogger();

template <typename Skel>
StatusOr<Skel*> OpenFlavoured(const char* probe, BpfAttach want, Skel* (*open)(),
                              int (*load)(Skel*), int (*attach)(Skel*), void (*destroy)(Skel*),
                              std::string* type) {
  InstallBpfLogger();
  std::string errors;
  for (bool btf : {true, false}) {
    if ((btf && want == BpfAttach::kRawTp) || (!btf && want == BpfAttach::kTpBtf)) continue;
    const std::string name = std::string(probe) + (btf ? " (tp_btf)" : " (raw_tp)");
    Status failed;
    Skel* s = open();
    if (s == nullptr) {
      failed = BpfStepError(name.c_str(), "open", -errno);
    } else {
      SelectFlavour(s->obj, btf);
      SizeTgidFilter(s->obj);
      if (int err = load(s); err != 0) {
        failed = BpfStepError(name.c_str(), "load", err);
      } else if (int err = attach(s); err != 0) {
        failed = BpfStepError(name.c_str(), "attach", err);
      } else {
        *type = btf ? "tp_btf" : "raw_tp";
        return s;
      }
      destroy(s);
    }
    errors += (errors.empty() ? "" : "; then ") + failed.message();
  }
  return Internal("{}", errors);
}

}  // namespace tfdiag
