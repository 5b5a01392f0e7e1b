// `tfdiag-view --dump-view FILE`: the viewer's state after the last frame as JSON, so tests and
// scripts can check what the window shows without reading pixels.
//
// {"files": [...], "status": "| hot-ps.json | 4608 ops, ...", the status bar's text after
//  "tfdiag view" (ViewState::status), "ops": N, "span_us": D,
//  "visible": {"start_us": A, "end_us": B},   timeline range, us from the capture's start
//  "track": {"x": X, "w": W},                 its track area in pixels (w 0: no timeline)
//  "tab": "tasks" | "cpu" | "import" | "nodes", the bottom tab shown
//  "fix_first": "Fix first: hot-ps on ps:0: step ..." | null   the findings panel's opening line,
//                                             as the text report's (ViewState::fix_first)
//  "selected": "hot-ps" | null, "focus_task": "ps:0" | null, "flows": false,
//  "hovered": null | {"task", "device", "lane", "node", "op", "kind", "start_us",
//                     "duration_us", "inputs": [...]},
//  "matrix": null | {"x", "y", "cell_w", "cell_h", "measured", "value": "bytes" | "busy" |
//                    "transfers", "values": [...] (row-major), "workers": [...], "ps": [...]},
//                                             the traffic heat map's cells (ViewState::Matrix)
//  "scaling": null | {"runs": [{"name", "workers", "ps", "throughput", "unit", "efficiency"}...],
//               "chart": {"x", "y", "w", "h", "measured": [[x, y]...], "ideal": [[x, y]...]},
//               "bars": [{"run", "task", "busy_pct", "hot", "x", "y", "w", "h"}...]},
//                                             --scaling: the runs, the chart's plot area and
//                                             points, each PS bar (ViewState::Scaling)
//  "critical_path": null | {"task": "worker:3", "step": 2 (1-based), "start_us", "duration_us",
//               "hovered": index | null, "legible": bool (drawn: the step spans enough of the
//               track and its rows are on screen), "hint": "" | how to see it when not legible,
//               "segments": [{"kind": "compute" | "wait", "start_us", "duration_us", "label",
//                             "step_tail", "edge": null | {"tensor", "from" (null: ambiguous),
//                             "candidates", "sent_us"}, "producer": null | {"task", "node",
//                             "op", "start_us", "duration_us"}, "rect": [x0, y0, x1, y1] | null
//                             (null: not drawn: outside the visible range, or the path not
//                             legible), "arrow": [x0, y0, x1, y1] | null}...]}          the
//                             critical path drawn (ViewState::PathDrawn):
//                                             the worker's median step, StepGraph::Segments
//  "nodes": [{"node", "tasks": ["ps:0", ...], "ps", "workers", "cpu_used", "cpu_limit" (-1
//             unknown), "cpu_request" (-1 unknown), "unlimited", "bar": [x, y, w, h] | null}...]
//                                             a cluster bundle's nodes (NodeLoads); bar: where
//                                             the Nodes tab drew it (null: tab not shown)
//  "figures": ["ps:0: limit 4.00 CPUs, cpuset - | ...", ...]   figures written as text (the
//                                             CPU tab's lines, the selected finding's evidence,
//                                             impact and waits, the PS-load bars' texts ("bar ps:0:
//                                             ..."), the Nodes tab's lines; ViewState::figures)
//  "overflow": [{"window", "px"}...],        windows whose items were cut off at the right edge
//                                             (ViewState::overflow; [] when everything fits)
//  "rows": [{"task", "device", "lane", "y"}...]}  timeline rows drawn, y of their top in pixels
#pragma once

#include <string>

#include "core/status.h"
#include "viewer/loader.h"
#include "viewer/panels/panels.h"

namespace tfdiag::view {

// Renders the state as JSON text (the format above).
std::string ViewDumpJson(const Snapshot& s, const ViewState& v);

// Writes ViewDumpJson() to `path` atomically. Errors: kIo naming the path.
Status WriteViewDump(const Snapshot& s, const ViewState& v, const std::string& path);

}  // namespace tfdiag::view
