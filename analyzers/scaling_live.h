// The figures `tfdiag scaling` takes from a bundle (tfdiag attach) rather than a timeline:
// throughput from the workers' own step counters or, failing that, a named proxy (their bytes to
// the PS per second), and how loaded the node's CPUs were. Used by MeasureRun (scaling.h).
// Pure functions; no I/O. Thread-safety: reentrant.
#pragma once

#include "analyzers/analysis_result.h"
#include "analyzers/scaling.h"
#include "core/capture.h"

namespace tfdiag {

// Fills run->steps, throughput_steps_per_s, step_median_ns, throughput_source (and, for the
// proxy, throughput_proxy and throughput_unit) from the capture's live rows: every worker-like
// process with at least two step counts gives (last - first) steps over (last - first) ns; when
// no worker has a step counter, the sum over workers of bytes sent to PS tasks per second (eBPF
// traffic matrix). Returns false when neither is there (run untouched).
bool MeasureLiveThroughput(const Capture& c, const AnalysisResult& r, ScalingRun* run);

// Fills run->cpu_used_pct (CPU used by the recorded tasks / the node's CPUs, busiest node) and
// run->runq_wait_pct (run-queue wait / (on-CPU + wait) over the recorded tasks, eBPF sched rows)
// when the capture has them, and run->steal_pct from the bundle's meta.
void MeasureNodeCpu(const Capture& c, const AnalysisResult& r, ScalingRun* run);

}  // namespace tfdiag
