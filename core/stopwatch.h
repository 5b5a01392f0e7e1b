// Stopwatch: wall time on the steady clock, in seconds, for phase timings (`analyze --timings`,
// the viewer's load time). Thread-safety: one owner.
#pragma once

#include <chrono>

namespace tfdiag {

class Stopwatch {
 public:
  // Seconds since construction or the last Lap().
  double Seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  // Seconds(), then starts again from now.
  double Lap() {
    const auto now = std::chrono::steady_clock::now();
    const double s = std::chrono::duration<double>(now - start_).count();
    start_ = now;
    return s;
  }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace tfdiag
