// Invariants of a Capture that the fuzz targets check on every input a reader accepts.
#pragma once

#include <cstdint>
#include <cstdlib>

#include "core/capture.h"

namespace tfdiag::fuzz {

// Aborts unless every step belongs to exactly one task (Capture::task_steps: one range per task,
// the ranges following one another and covering Capture::steps) and starts no later than it ends.
inline void CheckSteps(const Capture& c) {
  if (c.task_steps.size() != c.tasks.size()) std::abort();
  uint32_t next = 0;
  for (const auto& [b, e] : c.task_steps) {
    if (b != next || e < b) std::abort();
    next = e;
  }
  if (next != c.steps.size()) std::abort();
  for (const StepRow& st : c.steps) {
    if (st.end < st.start) std::abort();
  }
}

}  // namespace tfdiag::fuzz
