// CaptureBuilder: the one write path into a Capture. Collectors add tasks, devices, ops, flows
// and tensor sizes in any order; Finish() sorts, recovers steps and resolves cross-task edges.
// Sources: capture_builder.cc (adding rows, Finish), capture_merge.cc (RemapDevices, checkpoints,
// Absorb), capture_inputs.cc (separate captures), capture_sort.cc and capture_finish.cc (Finish's
// passes, capture_finish.h).
// Thread-safety: not thread-safe; one builder per import (merge builders' output by importing
// into a single builder).
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/block_vector.h"
#include "core/capture.h"

namespace tfdiag {

class CaptureBuilder {
 public:
  CaptureBuilder() = default;
  CaptureBuilder(const CaptureBuilder&) = delete;
  CaptureBuilder& operator=(const CaptureBuilder&) = delete;
  CaptureBuilder(CaptureBuilder&&) = default;
  CaptureBuilder& operator=(CaptureBuilder&&) = default;

  StrId Intern(std::string_view s) { return c_.strings.Intern(s); }

  // Returns the index of the task (job, replica, index), adding it if new.
  uint32_t AddTask(std::string_view job, int replica, int index);
  // Returns the index of the device, adding it (and its task) if new. Two spellings of one device
  // (legacy "/cpu:0" and "/device:CPU:0", or two process_name events) map to one index. A name
  // without a job belongs to the task "localhost:0".
  uint32_t AddDevice(const DeviceName& name);
  // Marks the task (job, replica, index) as named after a profiled host (a TF2 profile's file
  // name, host_tasks.h): "localhost:<n>" is then that host, not any single-process program's
  // default, and SplitRuns keeps its captures of two runs together.
  void MarkHostTask(std::string_view job, int replica, int index) {
    host_tasks_.insert(fmt::format("{}/{}/{}", job, replica, index));
  }
  // A device for a trace pid that has no parseable process_name (e.g. a bare Chrome trace):
  // task "unknown:<pid>".
  uint32_t AddUnknownDevice(int64_t pid);

  // Adds an op; `inputs` are the op's input names as written (args.input0..N). dur in ns >= 0;
  // durations past OpRow::kMaxDur and inputs past kMaxOpInputs are clamped and counted. An op
  // with the name, type and inputs of an earlier op shares its NodeRow (a TF node runs with the
  // same inputs in every step; see AddNode); a node that differs from the last of its name in
  // type alone shares its range of Capture::inputs: ranges may overlap.
  // `device` may be a provisional id below kMaxDevices (see RemapDevices); an op on kMaxDevices or
  // later is skipped and counted (stats.skipped), never truncated to 16 bits.
  void AddOp(TimeNs start, TimeNs dur, uint32_t device, uint16_t lane, StrId name, StrId type,
             const StrId* inputs, size_t n_inputs);
  void AddFlow(const FlowRow& flow) { flows_.push_back(flow); }
  // A DataFlow arrow end (`s` or `t`) that found no partner in its own file, with its device
  // already mapped (a device index, not a provisional slot). Finish() pairs a `t` with a `s` of
  // another file that has the same key (cat + '\x1f' + id) and the same name (or either name
  // empty): the two halves of an arrow between tasks of one job traced into two files. Ends left
  // unpaired are counted as "flow end without a flow start" (to `file`'s FileStats too); starts
  // left unpaired are dropped, as in a single file.
  struct OpenFlow {
    std::string key, name;
    uint32_t device = 0;
    TimeNs ts = 0;       // ns
    uint32_t file = 0;   // index into stats().files of the file it came from
    bool start = false;  // `s` (else `t`)
  };
  void AddOpenFlow(OpenFlow f) { open_flows_.push_back(std::move(f)); }
  // Adds one Horovod timeline's figures (HorovodStats::Merge).
  void AddHorovod(const HorovodStats& h) { c_.horovod.Merge(h); }
  // A step of `task` (from AddTask) that the input marks itself (a profiler's step events, e.g.
  // XPlane group_id / step_name stats); start <= end, ns. A task with steps added here keeps
  // exactly these (in start order) instead of the _SOURCE recovery of Finish().
  void AddStep(uint32_t task, TimeNs start, TimeNs end) {
    explicit_steps_.push_back({task, start, end});
  }
  // AddStep() steps so far, and dropping those added after the first `n` (a reader that finds
  // out late that its file's steps come from _SOURCE ops after all).
  size_t step_count() const { return explicit_steps_.size(); }
  void TruncateSteps(size_t n) { explicit_steps_.truncate(n); }
  // XProf's breakdown of a step the reader marked with AddStep (same task and start); kept
  // while the task keeps its marked steps (dropped with TruncateStepBreakdowns, e.g. when the
  // file's steps come from _SOURCE ops after all).
  void AddStepBreakdown(const StepBreakdownRow& row) { c_.step_breakdowns.push_back(row); }
  size_t step_breakdown_count() const { return c_.step_breakdowns.size(); }
  const std::vector<StepBreakdownRow>& step_breakdowns() const { return c_.step_breakdowns; }
  void TruncateStepBreakdowns(size_t n) {
    if (n < c_.step_breakdowns.size()) c_.step_breakdowns.resize(n);
  }
  // A tf.data pipeline stage of a task (InputIteratorRow; a reader sums its file's events first).
  void AddInputIterator(const InputIteratorRow& row) { c_.input_iterators.push_back(row); }
  void AddTensor(const TensorRow& tensor) { c_.tensors.push_back(tensor); }
  // Ends one input (a file) of the job: the ops added since the last call are its ops. Finish()
  // merges inputs whose op time ranges overlap into one capture; inputs that do not overlap are
  // separate captures (Capture::captures), named in notes by `name` (a file, "run 'r'"). Without
  // any call, all ops are one capture. Returns the input's op time range [start, end] in ns (start
  // > end: the input added no ops).
  std::pair<TimeNs, TimeNs> EndInput(std::string name);
  // Live rows: a process (its `task` from AddTask) returns its index for the samples.
  uint32_t AddProcess(const ProcessRow& p);
  void AddProcessSample(const ProcessSampleRow& s) { c_.process_samples.push_back(s); }
  void AddThreadSample(const ThreadSampleRow& s) { c_.thread_samples.push_back(s); }
  void AddTraffic(const TrafficRow& t) { c_.traffic.push_back(t); }
  void AddSched(const SchedRow& s) { c_.sched.push_back(s); }
  void AddStepCount(const StepCountRow& s) { c_.step_counts.push_back(s); }
  CaptureMeta& meta() { return c_.meta; }

  // Packs the ops added since the last call (core/op_store.h): they are sorted per device and
  // kept in packed form, their plain rows freed. For readers of large files, after each part
  // whose ops have their final device ids (an XPlane): the plain rows of one part are then held
  // at a time, and the Capture's ops are packed (about a quarter of the plain rows' memory on
  // profiler output). Rows packed in several calls for one device are merged by Finish. Not with
  // Checkpoint/Rollback, nor into a builder that is then Absorbed into another.
  void PackOps();

  // Sizes, so a reader can remap the device fields of rows it added with provisional
  // (file-local) device ids once the file's metadata is known.
  size_t op_count() const { return ops_.size(); }
  size_t flow_count() const { return flows_.size(); }
  size_t tensor_count() const { return c_.tensors.size(); }
  // Row i of the ops added so far (device still provisional if the reader has not remapped it).
  const OpRow& op(size_t i) const { return ops_[i]; }
  // The name of op(i) (its node's).
  StrId op_name(size_t i) const { return nodes_[ops_[i].node].name; }
  std::string_view Str(StrId id) const { return c_.strings.Get(id); }
  // Rewrites row.device = map[row.device] for ops/flows/tensors added since the given counts.
  // Rows whose provisional id maps to kNoIndex are dropped. Returns the number dropped.
  // `threads` > 1 rewrites the ops on that many threads.
  size_t RemapDevices(size_t first_op, size_t first_flow, size_t first_tensor,
                      const std::vector<uint32_t>& map, int threads = 1);
  // Moves everything `other` holds (rows with provisional device ids, import statistics) into
  // this builder: strings are re-interned here, and each row's provisional device d becomes
  // device_map[d] (every such d must index device_map). `other` must not have devices or tasks of
  // its own; into an empty builder with an identity map its storage is taken over. Used to merge
  // the chunks of a file parsed in parallel. Returns the map from `other`'s string ids to this
  // builder's. `threads` > 1 copies the rows on that many threads (OpenMP).
  std::vector<StrId> Absorb(CaptureBuilder&& other, const std::vector<uint32_t>& device_map,
                            int threads = 1);
  // As Absorb, always copying, for a chunk builder that is filled again afterwards: `other` keeps
  // its strings and its row storage but is left without rows or statistics. `sid` maps `other`'s
  // string ids to this builder's: the entries it already has are trusted (an earlier merge of the
  // same `other`, whose strings have not been rolled back since), and the strings added since are
  // interned here and appended.
  void AbsorbRows(CaptureBuilder* other, const std::vector<uint32_t>& device_map,
                  std::vector<StrId>* sid);

  ImportStats& stats() { return c_.stats; }

  // What a timeline reader adds while it parses one file (strings, ops, inputs, flows, tensors,
  // import statistics), so that a fast parse that gives up half-way can be undone before the
  // file is parsed again. Devices and tasks are not covered (readers add them after the parse).
  struct Checkpoint {
    size_t strings = 0, ops = 0, nodes = 0, inputs = 0, flows = 0, tensors = 0;
    std::map<std::string, int64_t> skipped, ignored;
  };
  Checkpoint MakeCheckpoint() const;
  // Drops what was added since `cp` (string ids handed out since then become invalid).
  void Rollback(const Checkpoint& cp);

  // Sorts everything, recovers steps, resolves edges, and hands over the Capture.
  //
  // Steps: TensorFlow's executor starts every graph partition run with a `_SOURCE` NoOp, so each
  // `_SOURCE` on a task's busiest-in-_SOURCE device starts one step (one session.run) of that
  // task; the step ends at the last end of the task's ops that start before the next `_SOURCE`.
  // A task without `_SOURCE` ops has one step spanning its ops. On a PS, steps are partition runs
  // (one per worker request), not training steps.
  //
  // Edges: DataFlow pairs whose ends sit on different tasks, and inputs named "<tensor>_S<N>"
  // (partition Send/Recv, see timeline.py) that no such pair draws, resolved within the
  // consumer's step (capture_finish.h, ResolveEdges): ambiguous ones are counted, never credited.
  //
  // `threads` > 1 sorts devices, recovers steps per task and resolves edges per task in
  // parallel (OpenMP); the Capture is the same for any value.
  Capture Finish(int threads = 1);

 private:
  // Orders tasks and devices; returns the map from old to new device index (ops not yet moved).
  std::vector<uint32_t> SortTasksAndDevices();
  // Pairs open_flows_ across files into flows_ (see AddOpenFlow).
  void PairOpenFlows();
  void SortLive(const std::vector<uint32_t>& task_map);
  // Replaces the recovered steps of tasks that have AddStep() steps by those.
  void UseExplicitSteps();
  // Captures further apart than a day are taken for other runs (profiling sessions of one job
  // are seconds to hours apart: Keras profile_batch, ProfilerHook every N steps).
  static constexpr TimeNs kUnrelatedCapturesNs = 86'400'000'000'000;
  // Runs (capture_runs.cc): where the inputs fall into groups a day or more apart and no task of
  // a real name (not localhost, unknown:<pid>, unless MarkHostTask named it after a host) has
  // ops in two of them, each later run's tasks
  // become tasks of their own ("localhost:0 (run 2)"), with their devices, ops, flows, steps and
  // breakdowns; run_starts_ then holds each run's first op start (else it is empty). Before
  // PackOps and the sort of tasks in Finish.
  void SplitRuns();
  // Sets c_.captures from the inputs' ranges (EndInput), before steps are recovered.
  void SetCaptures();
  // The notes on separate captures (ImportStats::notes), once steps are known.
  void NoteCaptures();
  // The node (name, type, inputs) of an op being added: one of the name's last two nodes, or a
  // node of a name with three or more found in multi_nodes_, when it is the same; else a new
  // one (a hash collision only stores a node twice: Finish merges them). Returns its index in
  // nodes_. n_inputs <= kMaxOpInputs.
  uint32_t AddNode(StrId name, StrId type, const StrId* inputs, size_t n_inputs);
  // Whether node nodes_[a] sorts before nodes_[b] in Capture::nodes order (name, inputs, type).
  bool NodeBefore(uint32_t a, uint32_t b) const;
  // Whether node row `n` has exactly these inputs.
  bool SameInputs(const NodeRow& n, const StrId* inputs, size_t n_inputs) const;
  // Absorb's and AbsorbRows' copy: rows drained block by block (freed) or kept for reuse.
  void MergeRows(CaptureBuilder* other, const std::vector<uint32_t>& device_map,
                 std::vector<StrId>* sid, bool keep_storage, int threads);

  Capture c_;
  BlockVector<OpRow> ops_;  // flattened into c_.ops by Finish()
  // PackOps() output: (device as added, that device's rows); packed into c_.ops by Finish().
  std::vector<std::pair<uint32_t, PackedOps>> packed_;
  BlockVector<NodeRow, 12> nodes_;  // made distinct and sorted into c_.nodes by Finish()
  BlockVector<StrId, 17> inputs_;   // flattened into c_.inputs by Finish(); 512 KiB blocks
  BlockVector<FlowRow> flows_;      // flattened into c_.flows by Finish()
  std::vector<OpenFlow> open_flows_;
  // Per op name (indexed by its string id): 1 + the index in nodes_ of the last node of that
  // name and of the one before it, for sharing; 0 = none yet.
  struct LastNodes {
    uint32_t last = 0, before = 0;
  };
  std::vector<LastNodes> last_node_;
  // Nodes of names that have three or more, by a hash of (name, type, inputs) -> index in nodes_.
  absl::flat_hash_map<uint64_t, uint32_t> multi_nodes_;
  // AddStep(), task ids as added (remapped by Finish); in blocks: an XSpace may mark millions.
  struct MarkedStep {
    uint32_t task;
    TimeNs start, end;
  };
  BlockVector<MarkedStep> explicit_steps_;
  // The time range of the ops added since the last EndInput() (through AddOp or Absorb), and
  // each ended input's range.
  struct InputRange {
    std::string name;
    TimeNs start = INT64_MAX, end = INT64_MIN;  // ns; empty while start > end
    void Add(TimeNs s, TimeNs e) { start = std::min(start, s), end = std::max(end, e); }
  };
  InputRange open_input_;
  std::vector<InputRange> inputs_ended_;
  // Per capture (SetCaptures): what its inputs are, for the notes ("run '<name>'", file names).
  std::vector<std::vector<std::string>> capture_names_;
  std::vector<TimeNs> run_starts_;    // SplitRuns(): ns, ascending; empty when not split
  std::set<std::string> host_tasks_;  // MarkHostTask(): "job/replica/index"
  std::unordered_map<std::string, uint32_t> task_index_;    // "job/replica/index" -> task
  std::unordered_map<std::string, uint32_t> device_index_;  // canonical name -> device
};

}  // namespace tfdiag
