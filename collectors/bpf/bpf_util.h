// Helpers shared by the BPF collectors: checking that this kernel can run them (BTF, rights)
// and turning a failed lifecycle step into a Status that names the probe, the step and errno
// (libbpf-bootstrap's habit: open, load, attach, poll, destroy are each checked).
// Thread-safety: BpfAvailable and BpfStepError are reentrant; InstallBpfLogger is call-once.
#pragma once

#include <string>

#include "core/status.h"

namespace tfdiag {

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

}  // namespace tfdiag
