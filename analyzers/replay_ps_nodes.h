// Which PS share a node's NIC (issue 44 item 2: "PS-count and placement fixes modelled exactly
// as their fix text says"; ps-colocation). No profile records a task's host: the pod list beside
// it does (`kubectl get pods -o json`: spec.nodeName of each PS pod, joined to the capture's PS
// task by its replica index label), as do the processes of a cluster bundle or `tfdiag attach`
// (ProcessRow::node). Thread-safety: pure functions.
#pragma once

#include <map>
#include <vector>

#include "analyzers/analysis_input.h"
#include "analyzers/replay.h"

namespace tfdiag {

// Per PS of `m` (m.ps's order): the index of its node among the job's PS nodes (0, 1, ... in
// order of first appearance), from the pod list's PS pods (role "ps", index the task's index) or,
// without one, the capture's processes that run in pods (a cluster bundle's kube_pod_info): a
// bare host's processes (`tfdiag attach` of a cluster on one host) may talk over loopback, not
// share a NIC. Empty where any PS's node is unknown, or where two PS pods of one index sit on
// different nodes (a pod list of several jobs): the PS are then taken as each on a node of its
// own.
std::vector<int> PsNodesOf(const AnalysisInput& in, const ReplayModel& m);

// The PS on each node of `ps_node` (PsNodesOf): node index -> count.
std::map<int, int> PsPerNode(const std::vector<int>& ps_node);

// True where some node of `ps_node` (PsNodesOf) holds more than one PS.
bool PsPacked(const std::vector<int>& ps_node);

// The PS nodes after `fix` on a job whose PS are placed on `ps_node` (one entry a PS):
// Fix::spread_ps puts each PS on a node of its own; a new PS count (Fix::ps_count) keeps the first
// PS where they are and puts each PS it adds on a new node of its own (a PS it removes leaves its
// node); otherwise as is. Empty where `ps_node` is.
std::vector<int> PsNodesAfter(const std::vector<int>& ps_node, const Fix& fix);

}  // namespace tfdiag
