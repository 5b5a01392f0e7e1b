// OpRow: one executed op, the row Capture::ops holds (core/op_store.h), and the time unit.
#pragma once

#include <cstdint>

namespace tfdiag {

using TimeNs = int64_t;  // nanoseconds

// One executed op (a Chrome trace X event, or a B/E pair). 24 bytes: millions of ops must fit
// in tens of MB; what repeats every step (name, type, inputs) is in Capture::nodes. Limits:
// 65,535 devices, 255 inputs per op (more are dropped and counted), durations up to 2^40 ns
// (about 18 minutes; longer ones are clamped and counted).
// Trivially constructible on purpose: Capture::ops (plain) is allocated without zero-filling (the
// importer fills every field), so untouched pages are never made resident.
struct OpRow {
  TimeNs start;     // ns
  uint32_t node;    // index into Capture::nodes (name, type, inputs)
  uint32_t dur_lo;  // duration in ns, low 32 bits (use dur())
  uint16_t device;  // index into Capture::devices
  uint16_t lane;    // drawing lane (tid); not an OS thread in TF1
  uint8_t dur_hi;   // duration in ns, bits 32..39

  static constexpr TimeNs kMaxDur = (TimeNs{1} << 40) - 1;
  TimeNs dur() const { return static_cast<TimeNs>(dur_lo) | (static_cast<TimeNs>(dur_hi) << 32); }
  // Sets the duration (ns, 0..kMaxDur; callers clamp).
  void set_dur(TimeNs d) {
    dur_lo = static_cast<uint32_t>(d);
    dur_hi = static_cast<uint8_t>(d >> 32);
  }
  TimeNs end() const { return start + dur(); }
};
static_assert(sizeof(OpRow) == 24, "OpRow must stay compact");
constexpr uint32_t kMaxDevices = UINT16_MAX;
constexpr uint32_t kMaxOpInputs = UINT8_MAX;

}  // namespace tfdiag
