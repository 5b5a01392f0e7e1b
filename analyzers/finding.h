// Finding: what a rule concluded, with the evidence behind it and the fix.
// Thread-safety: plain values.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/capture.h"
#include "rules/rule_set.h"

namespace tfdiag {

// One figure of evidence: a labelled number with its unit ("us", "ns", "bytes", "%", "count",
// "ratio", "ops/s").
struct Figure {
  std::string label;
  double value = 0;
  std::string unit;
};

// The label of a figure an analyzer adds where its finding's own evidence puts it under the
// rule's bar for MEDIUM but that evidence is weak (a profile's load figures, not live ones): its
// value is how close the subject is to its nearest limit (%). Such a finding is shown at LOW
// unless its own fix is predicted by a prediction that was made (LowerSeverityByImpact,
// analyzers/replay.h); a grouped finding carries it as "<label> (lowest)" and "(highest)".
inline constexpr std::string_view kLowUnlessPredictedLabel =
    "share of its nearest limit (a profile's figure: LOW unless its fix is predicted)";

// The value of the first figure labelled `label` in `evidence`, or 0 without one.
inline double FigureValue(const std::vector<Figure>& evidence, std::string_view label) {
  for (const Figure& x : evidence) {
    if (x.label == label) return x.value;
  }
  return 0;
}

// What one task waits for, per step, from the step graph (analyzers/step_graph.h): the wait a
// cross-task tensor ended, who produced it, and when it left its producer.
struct WaitFor {
  std::string task;           // the waiting task, "worker:3"
  std::string tensor;         // "model/read"; "" when no cross-task input ended the wait
  std::string from;           // the producing task, "worker:0"; "" when ambiguous or none
  bool ambiguous = false;     // several tasks produce the tensor and no arrow says which sent it
  int candidates = 0;         // producing tasks when ambiguous
  bool step_tail = false;     // the waits ran from the task's last op to its step's end
  double wait_ns = 0;         // receive + idle time per step, ns (mean over the task's steps)
  double input_ns = 0;        // input-op time inside the same gaps, per step, ns
  double sync_ns = 0;         // sync-barrier time inside the same gaps, per step, ns
  double sent_offset_ns = 0;  // mean time into the step the tensor left its producer, ns
  int64_t waits = 0;          // gaps it ended, over all steps
  std::string text;  // "worker:3 idles 5.13 s per step until model/read arrives from worker:0"
};

// What fixing a finding buys (issue 29): the median step now and as predicted after the fix.
struct Impact {
  bool set = false;  // false: not computed (older callers)
  // Median worker step now, ns; the mean where the prediction was judged against the mean step
  // (FixPlan::mean_step_ns, analyzers/replay.h: steps in modes a CFS period apart).
  double step_ns = 0;
  double step_ns_after_fix = 0;  // predicted, ns
  double saving_pct = 0;         // 100 * (step_ns - step_ns_after_fix) / step_ns
  std::string method;            // "replay" (analyzers/replay.h) or "none"
  std::string confidence;        // "high", "medium", "low"
  std::string why;               // what the prediction rests on, or why there is none
  // Issue 35: why the prediction was withheld ("" when it was not): e.g. the replay of the
  // capture as is missed the measured step by more than 20% (kMaxPredictedBaselineMiss).
  std::string withheld;
  double baseline_miss_pct = 0;  // (replay of the capture as is - measured step_ns) / it, in %
  // The predicted step's range, ns (0, 0: no prediction). A withheld prediction may keep low_ns
  // alone (> 0): a floor the step after the fix does not go under (a PS the fix leaves as it is,
  // or one it makes busier, saturates first), which bounds what the fix buys
  // (LowerSeverityByImpact); -f json prints neither for a withheld prediction.
  double low_ns = 0, high_ns = 0;
  // What bounds a withheld prediction's floor (low_ns), in words, for the severity note; "" for
  // the first kind: a PS the fix leaves as it is saturates first.
  std::string floor_from;
  // True where step_ns_after_fix is raised to the bound of a node's CPUs (ComputeImpacts,
  // analyzers/replay_node_cpu.h): read from CPU use that may include idle spinning, it never
  // lowers the finding's severity (LowerSeverityByImpact).
  bool cpu_bounded = false;

  // True when the prediction may order the findings and name `Fix first` (issue 35): a replay
  // whose confidence is not "low". An untrusted prediction is shown as "not predicted" with its
  // reason; it never changes a finding's severity, which comes from the rule's own evidence (but
  // for a withheld prediction's floor, low_ns above: LowerSeverityByImpact).
  bool trusted() const {
    return set && method != "none" && !confidence.empty() && confidence.rfind("low", 0) != 0;
  }
};

// One object a finding covers (a task, a variable, a manifest object), with its own figures.
struct FindingObject {
  std::string subject;    // "worker:3"
  std::string task;       // the task concerned ("" if none)
  std::string pod, node;  // the task's pod and node when known, else ""
  std::string summary;    // the object's own one-line summary
  std::vector<Figure> evidence;
  std::vector<std::string> ops;
  TimeNs range_start = 0, range_end = 0;  // ns, 0/0 if none
  std::vector<WaitFor> waits;             // what the object waits for, biggest first
};

// One finding per rule and cause (kube-linter, TensorBoard's overview): a rule that holds for 32
// workers is one finding whose `objects` lists the 32, each with its figures. Analyzers return
// one Finding per object; Analyze() groups them (GroupFindings in analyzers/grouping.h).
struct Finding {
  std::string rule_id;  // "hot-ps"
  Severity severity = Severity::kMedium;
  std::string subject_kind;  // "task", "variable", "op", "job"
  std::string subject;       // "ps:0", "embedding/embedding_weights", "job"
  std::string task;          // the task concerned, when the subject is not a task ("" if none)
  std::string pod, node;     // the task's pod and node when known (bundles, --prometheus), else ""
  std::string summary;       // one line with numbers
  std::vector<Figure> evidence;
  std::vector<std::string> ops;           // node names behind the evidence (capped, largest first)
  TimeNs range_start = 0, range_end = 0;  // time range the evidence comes from (ns), 0/0 if none
  std::string fix;                        // from the rule
  std::vector<std::string> references;
  // Findings of one rule group when their severity, subject kind and cause are equal. An
  // analyzer sets `cause` (a clause a person reads, ending the group's summary) when one rule
  // can fire for different reasons ("" = one cause).
  std::string cause;
  // Manifest findings: the object concerned, for group headers ("24 Deployments in
  // tf-cluster.yaml"): its kind as a noun ("Deployment", "TFJob replica type"), its file and a
  // name unique per object ("TFJob 'mnist' PS"); "" for other findings.
  std::string object_kind, object_file, object_name;
  std::vector<WaitFor> waits;  // what the subject (or the tasks it makes wait) waits for
  Impact impact;               // what the fix buys (ComputeImpacts, analyzers/replay.h)
  // Every object the finding covers, in natural subject order ("doc 3" before "doc 11"); one
  // entry (the finding itself) when it covers one object. Filled by GroupFindings.
  std::vector<FindingObject> objects;

  // True when `subject` is the finding's subject or one of its objects'.
  bool Covers(std::string_view subject) const {
    if (this->subject == subject) return true;
    for (const FindingObject& o : objects) {
      if (o.subject == subject) return true;
    }
    return false;
  }
};

}  // namespace tfdiag
