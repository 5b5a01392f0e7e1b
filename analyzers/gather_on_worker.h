// gather-on-worker: Gather/GatherV2/ResourceGather runs on a worker on a PS variable received whole
// (a _S<N> input), instead of on the PS that holds it (docs/rules/gather-on-worker.md).
// Thresholds: rules/default.rules.json.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "analyzers/analysis_input.h"
#include "analyzers/replay.h"

namespace tfdiag {

// The gathers one training task runs on PS variables it received whole: gather ops whose params
// input is a `_S<N>` partition input (from another task) naming a variable in `ps_vars`.
struct WorkerGathers {
  struct Var {
    int64_t gathers = 0;
    TimeNs ns = 0;   // summed gather durations
    std::string op;  // one gather's node name (its output's show_memory size is the rows read)
  };
  int64_t count = 0;
  TimeNs ns = 0;                                 // summed over all the task's gathers
  std::map<std::string, Var, std::less<>> vars;  // by variable name
  std::string example;                           // the first gather's node name
};
WorkerGathers FindWorkerGathers(const Capture& c, const TaskStats& t,
                                const std::set<std::string, std::less<>>& ps_vars);

std::vector<Finding> RunGatherOnWorker(const AnalysisInput& in, const Rule& rule);

// gather-on-worker's fix model: the gathers move beside their tables (embedding_lookup): each
// worker's receive time loses the share of its waits the tables' arrival ended, times
// (1 - rows' bytes / tables' bytes), from show_memory sizes (the rows unsized: estimated from the
// job's other tables' lookups on their PS, analyzers/gather_rows.h, at most medium confidence;
// none: not modelled, said why); the gather time leaves the worker's compute and lands on the PS
// holding each table, whose op time reading the table whole ("<table>/read") goes.
FixPlan GatherOnWorkerFix(const AnalysisInput& in, const ReplayModel& m, const Finding& f,
                          const Rule& rule);

}  // namespace tfdiag
