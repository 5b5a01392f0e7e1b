#include "analyzers/outlook_nic_words.h"

#include <fmt/format.h>

#include "analyzers/link_queue.h"  // kAssumedNicBytesPerS

namespace tfdiag {

void AppendNicAssumptions(const NicAssumed& a, std::vector<std::string>* out) {
  const char* mirrored = a.mirrored ? " (where the capture sizes one direction only, the "
                                      "gradients pushed are taken as the size of the "
                                      "variables pulled)"
                                    : "";
  if (!a.known) {
    out->push_back(
        "PS NICs: not a bound (the capture has no transfer sizes); a job whose PS links fill "
        "scales less than shown");
  } else if (a.estimated) {
    const std::string how =
        a.sync ? fmt::format(
                     "the bandwidth at which the replay's pulls after the sync barrier give the "
                     "largest answer the median measured transfer ({} worker(s))",
                     a.est.workers)
               : fmt::format(
                     "estimated from the last PS answer of {} worker(s)' median step (its bytes "
                     "and time, on a link shared by the transfers crossing it; {} limited by the "
                     "PS's side)",
                     a.est.workers, a.est.limited_by_ps);
    out->push_back(fmt::format(
        "PS NICs: {:.2g} Gb/s each way, {}, replayed as links of that bandwidth shared by the "
        "transfers crossing them (what they explain of each measured transfer: its time on them "
        "in the replay of the capture; the rest, latency and the worker's side, held fixed), "
        "against each PS's bytes per worker step from its transfer sizes{}",
        a.bytes_per_s * 8 / 1e9, how, mirrored));
  } else if (a.burst_bytes_per_s > 0) {
    out->push_back(fmt::format(
        "PS NICs: {:.2g} Gb/s each way, the busiest PS's bytes per worker step times the workers "
        "over the burst after the sync barrier (below), a bound against each PS's bytes per "
        "worker step from its transfer sizes{}",
        a.bytes_per_s * 8 / 1e9, mirrored));
  } else {
    out->push_back(fmt::format(
        "PS NICs: {:.0f} Gb/s each way (no NIC figure in the capture), against each PS's bytes "
        "per worker step from its transfer sizes{}",
        kAssumedNicBytesPerS * 8 / 1e9, mirrored));
  }
  if (a.floored) {
    out->push_back(fmt::format(
        "PS NICs: raised to {:.2g} Gb/s, {} (the {} was under the bytes {}'s NIC carried per "
        "second in the capture; a link carries no more than its bandwidth)",
        a.bytes_per_s * 8 / 1e9,
        a.busy_floor ? "the least rate a PS's sized receives moved bytes at while in flight"
                     : "that rate",
        a.estimated ? "estimate" : "assumption", a.carried_task));
  }
}

}  // namespace tfdiag
