// ps-colocation: several PS pods on one node (pod lists), or a PS replica type with nothing that
// keeps its pods apart (no podAntiAffinity with topologyKey kubernetes.io/hostname); PS tasks on
// one node share its NIC (docs/rules/ps-colocation.md). Thresholds:
// rules/default.rules.json.
#pragma once

#include <vector>

#include "analyzers/analysis_input.h"
#include "analyzers/replay.h"

namespace tfdiag {

std::vector<Finding> RunPsColocation(const AnalysisInput& in, const Rule& rule);

// ps-colocation's fix model: every PS on a node of its own, as its fix text's podAntiAffinity
// places them (Fix::spread_ps); each PS keeps its variables, and the NIC its node shared is its
// own. Needs each PS's node (ReplayModel::ps_node, from the pod list or the processes) with some
// PS packed; otherwise no plan, with why. ComputeImpacts predicts it from the PS links' convoy
// only (analyzers/ps_links_convoy.h; not on a loose fit, LinkConvoy::loose_fit), where its two
// readings of the NIC agree
// (kMaxSpreadReadingsApart), and withholds it elsewhere.
FixPlan PsColocationFix(const AnalysisInput& in, const ReplayModel& m, const Finding& f,
                        const Rule& rule);

}  // namespace tfdiag
