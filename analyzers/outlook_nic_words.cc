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
        a.est.bytes_per_s * 8 / 1e9, how, mirrored));
  } else if (a.burst_bytes_per_s > 0) {
    out->push_back(fmt::format(
        "PS NICs: {:.2g} Gb/s each way, the busiest PS's bytes per worker step times the workers "
        "over the burst after the sync barrier (below), a bound against each PS's bytes per "
        "worker step from its transfer sizes{}",
        a.burst_bytes_per_s * 8 / 1e9, mirrored));
  } else {
    out->push_back(fmt::format(
        "PS NICs: {:.0f} Gb/s each way (no NIC figure in the capture), against each PS's bytes "
        "per worker step from its transfer sizes{}",
        kAssumedNicBytesPerS * 8 / 1e9, mirrored));
  }
  if (!a.floored) return;
  // The figure the bandwidth was raised from (the estimate's, the burst's or the assumption).
  const double from = a.estimated               ? a.est.bytes_per_s
                      : a.burst_bytes_per_s > 0 ? a.burst_bytes_per_s
                                                : kAssumedNicBytesPerS;
  const char* what = a.estimated ? "estimate" : a.burst_bytes_per_s > 0 ? "burst's" : "assumption";
  if (a.busy_floor) {
    out->push_back(fmt::format(
        "PS NICs: raised to {:.2g} Gb/s (the {} {:.2g} Gb/s, under the {:.2g} Gb/s {}'s NIC "
        "carried in the capture), the rate {}'s sized receives moved its gradient bytes at while "
        "in flight, the least over the PS: an estimate from the receive rows, not a bound (it can "
        "be over the NIC's bandwidth where the sizes are mirrored)",
        a.bytes_per_s * 8 / 1e9, what, from * 8 / 1e9, a.carried_bytes_per_s * 8 / 1e9,
        a.carried_task, a.floor_task));
  } else {
    out->push_back(fmt::format(
        "PS NICs: raised to {:.2g} Gb/s, the bytes {}'s NIC carried per second in the capture (the "
        "{} {:.2g} Gb/s was under it; a link carries no more than its bandwidth)",
        a.bytes_per_s * 8 / 1e9, a.carried_task, what, from * 8 / 1e9));
  }
}

}  // namespace tfdiag
