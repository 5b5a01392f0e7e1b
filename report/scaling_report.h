// Rendering a scaling comparison (tfdiag scaling): text for people, JSON for machines.
//
// JSON schema "tfdiag.scaling/1": top-level keys schema, tool, warnings, notes (what the sweep
// says beyond its findings: next to saturate, near the limit; analyzers/scaling_verdicts.h),
// runs, findings, rule.
// runs[]: name, workers, ps, steps, step_median_ns, throughput_steps_per_s, throughput_source
// (how it was measured, in words), throughput_proxy (true: throughput_steps_per_s holds a proxy
// in throughput_unit, e.g. "worker->PS bytes/s", not steps/s), throughput_unit,
// throughput_examples_per_s (null without --batch-size), speedup, ideal_speedup, efficiency,
// input_wait_pct (null when unknown), throttled_pct (null when unknown), cpu_used_pct and
// runq_wait_pct (bundles: the node's CPUs used by the recorded tasks, and their run-queue wait
// share of runnable time; null when unknown), ps_busy_pct (object:
// PS task -> percent, null when unknown), ps_tasks[] ({task, busy_pct, basis, top_variable,
// top_variable_pct, cpu_cores}: one per PS task, as many as `ps`), worker_bytes_per_s (the
// throughput proxy, null unless throughput_proxy; throughput_steps_per_s is then null),
// worker_cpu and ps_cpu ({tasks, cpu_cores, cpu_limit, runnable, runq_wait_pct, runq_p99_ns,
// switches_per_s, involuntary_per_s, throttled_pct}: scaling --prometheus, the tfdiag agents'
// figures per task; null when unknown, tasks 0 when none). findings[] are written as `analyze`
// writes them (report/report.h). Thread-safety: pure functions.
#pragma once

#include <string>

#include "analyzers/scaling.h"
#include "core/status.h"

namespace tfdiag {

constexpr const char* kScalingSchema = "tfdiag.scaling/1";

// A table of the runs, an ASCII chart of throughput against workers beside ideal (linear from the
// smallest run), warnings, and the findings with evidence and fix. Names from the inputs are
// printed with control characters escaped. `width` > 0 wraps the findings' prose (summary, fix)
// and the notes at that column with a hanging indent (on a terminal; report/wrap.h).
std::string RenderScalingText(const ScalingResult& r, size_t width = 0);

// The versioned JSON document. `pretty` indents it. Non-finite numbers (a speed-up over a run of
// zero throughput) are written as null. Errors: kInternal when the JSON writer refused a value.
StatusOr<std::string> RenderScalingJson(const ScalingResult& r, bool pretty);

}  // namespace tfdiag
