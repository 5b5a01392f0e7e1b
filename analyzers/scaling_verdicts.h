// What a scaling comparison concludes beyond each pair of runs (issue 36 item 3): scaling-limit
// findings that share a cause (the same saturated PS, the CPUs of the nodes, input) become one
// finding listing every pair; its fix is the cause's own (partition ps:0 for a PS) and says the
// worker count to stay at until it is fixed. Notes: the resource growing fastest toward its
// limit ("next to saturate": a PS's busy share, the workers' run-queue wait, the node's CPUs),
// with the worker count at which it reaches it on the measured trend; "near the limit" when a
// pair's efficiency passes but run-queue wait or a PS's busy share is already high; and runs
// whose efficiency is impossible for one job (above max_efficiency) are questioned.
// Pure functions on ScalingResult; thresholds are scaling-limit's (rules/default.rules.json).
#pragma once

#include "analyzers/scaling.h"

namespace tfdiag {

// Groups out->findings by cause, rewrites their fix, and fills out->notes. `out->runs` must be
// sorted by workers with efficiency filled (CompareRuns does both before calling it).
void JudgeScaling(const Rule& rule, ScalingResult* out);

}  // namespace tfdiag
