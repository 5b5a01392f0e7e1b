// TraceHandler: the RapidJSON SAX handler behind ReadTimeline (internal to collectors/timeline).
// It walks the document with a stack of container states, collects one event's fields at a time
// into reusable buffers, and hands complete events to the CaptureBuilder with file-local device
// slots that Finish() maps to devices once every process_name of the file is known.
// Thread-safety: one instance per file being read.
#pragma once

#include <rapidjson/reader.h>

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "collectors/xplane/host_tasks.h"
#include "core/capture_builder.h"
#include "core/status.h"

namespace tfdiag {

class TraceHandler : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, TraceHandler> {
 public:
  explicit TraceHandler(CaptureBuilder* builder);

  // SAX callbacks (numbers arrive as raw text: kParseNumbersAsStringsFlag).
  bool Null() { return Scalar(kNull, {}); }
  bool Bool(bool) { return Scalar(kBool, {}); }
  bool RawNumber(const char* s, rapidjson::SizeType n, bool copy) {
    in_place_ = stable_strings_ && !copy;
    return Scalar(kNumber, {s, n});
  }
  bool String(const char* s, rapidjson::SizeType n, bool copy) {
    in_place_ = stable_strings_ && !copy;  // `copy`: the parser's scratch (unescaped) bytes
    return Scalar(kString, {s, n});
  }
  bool Key(const char* s, rapidjson::SizeType n, bool);
  bool StartObject();
  bool EndObject(rapidjson::SizeType);
  bool StartArray();
  bool EndArray(rapidjson::SizeType);

  // A fault the handler detected itself (e.g. traceEvents is not an array); empty message if
  // the parse stopped for another reason. `offset` is set by the reader.
  const std::string& abort_reason() const { return abort_reason_; }
  // True when the parser stands between two events of a top-level bare array, where a missing
  // closing bracket (or a trailing comma) at the end of the file is allowed.
  bool BetweenBareArrayEvents() const;
  // True when a traceEvents array (or a bare array) was found.
  bool saw_events() const { return saw_events_; }

  // Maps the file's pids to devices, closes open B events, fills `stats`. Call once, after a
  // successful parse. `events` counts every element of traceEvents. `threads` > 1 remaps the
  // rows on that many threads.
  void Finish(FileStats* stats, int threads = 1);

  // Chunked (parallel) import of one file: a chunk handler defers E events without a B and flow
  // ends without a start, since their partners may sit in an earlier chunk.
  void set_deferred(bool deferred) { deferred_ = deferred; }
  // The strings handed to String()/Key() stay valid and unchanged until the end of the event that
  // holds them (a parse over spans in place): they are viewed, not copied.
  void set_stable_strings(bool stable) { stable_strings_ = stable; }
  // Stream offset (Tell) just after the ']' that closed the events array, or -1.
  int64_t events_end() const { return events_end_; }
  // Folds the state of `chunk` (a later chunk of the same file, whose rows this handler's builder
  // has not yet absorbed) into this handler and absorbs `chunk_builder` into this builder.
  // `threads` > 1 copies the rows on that many threads.
  void MergeChunk(TraceHandler&& chunk, CaptureBuilder&& chunk_builder, int threads = 1);
  // The same for a chunk builder that is filled again afterwards (CaptureBuilder::AbsorbRows):
  // `sid` caches the map from its string ids to this builder's across merges.
  void MergeChunk(TraceHandler&& chunk, CaptureBuilder* chunk_builder, std::vector<StrId>* sid);

  // Numbers `chunk`'s pids in this (merging) handler's slots, as MergeChunk(chunk) does first,
  // and returns the number of slots then held. Slots are the file's pids in order of first
  // appearance; an op on slot kMaxDevices or later is skipped (OpRow::device has 16 bits), so a
  // merge to more than kMaxDevices slots must give way to the sequential reader, which skips
  // exactly the ops it should.
  size_t AddSlotsOf(const TraceHandler& chunk);
  // The file is the TF2 trace-viewer JSON of an XSpace (process names "/host:CPU",
  // "/device:GPU:0"): its X events are read with tf2_events.h's rules at Finish(), which needs
  // the whole file, so a chunked import of more than one chunk must give way to the sequential
  // reader.
  bool tf2_xspace() const { return tf2x_; }
  // Where a TF2 trace-viewer JSON's host is mapped to a task (TimelineReadOptions::hosts, notes),
  // and its session's wall time (TimelineReadOptions::session_wall_ns).
  void set_hosts(HostMapper* hosts, std::vector<std::string>* notes, int64_t session_wall_ns = 0) {
    hosts_ = hosts;
    notes_ = notes;
    session_wall_ns_ = session_wall_ns;
  }
  // For the handler that merges chunks: the file did hold an events array.
  void MarkSawEvents() { saw_events_ = true; }
  // The stream offset source for events_end(); set by the reader.
  void set_tell(std::function<size_t()> tell) { tell_ = std::move(tell); }

 private:
  enum ValueKind { kNull, kBool, kNumber, kString };
  enum State : uint8_t { kTopObject, kEvents, kEvent, kArgs, kSnapshot, kSkip };
  // Keys tfdiag reads, classified once in Key() instead of compared at every value.
  enum KeyId : uint8_t {
    kKeyOther,
    kKeyPh,
    kKeyTs,
    kKeyDur,
    kKeyPid,
    kKeyTid,
    kKeyName,
    kKeyCat,
    kKeyId,
    kKeyArgs,
    kKeySnapshot,
    kKeyTraceEvents,
    kKeyMetadata,
    kKeyDisplayTimeUnit,
    kKeyTensorDescription,
    kKeyOp,
    kKeyLongName,
    kKeyInput,
    // TF2 trace-viewer args (XStat names, collectors/xplane/tf2_events.h).
    kKeyGroupId,
    kKeyCorrelationId,
    kKeyIsRoot,
    kKeyStepNum,
    kKeyStepName,
    kKeyIsAsync,
    kKeyTfOp,
    kKeyAnnotation,
    kKeyRendezvousKey  // "rendezvous_key" or "key": a transfer's rendezvous key
  };
  static const char* KeyName(KeyId k);

  // A string field of the current event: a view of the parser's bytes where they stay in place
  // until the event ends (set_stable_strings), else a copy.
  class Text {
   public:
    void Set(std::string_view t, bool in_place) {
      in_place_ = in_place;
      if (in_place) {
        view_ = t;
      } else {
        copy_.assign(t);
      }
    }
    void clear() {
      in_place_ = true;
      view_ = {};
    }
    std::string_view view() const { return in_place_ ? view_ : std::string_view(copy_); }
    bool empty() const { return view().empty(); }

   private:
    bool in_place_ = true;
    std::string_view view_;
    std::string copy_;
  };

  struct Event {
    char ph = 0;
    bool has_ph = false, has_pid = false, has_tid = false, has_ts = false, has_dur = false;
    bool has_id = false, empty = true;
    int64_t pid = 0, tid = 0, ts = 0, dur = 0;
    Text id, name, cat, arg_name, arg_op, long_name;
    // TF2 trace-viewer stats: group_id, correlation_id; `marker`: _r != 0, step_num or
    // step_name present; `step_name`: step_name present; `async`: _a != 0.
    bool has_group = false, has_corr = false, marker = false, async = false, step_name = false;
    int64_t group = 0, corr = 0;
    Text tf_op;       // a kernel's "tf_op" stat (TF >= 2.5)
    Text annotation;  // a kernel's "annotation" stat (TfOpOfAnnotation)
    Text rendezvous;  // a transfer's rendezvous key stat (tf2_events.h RendezvousKey)
    std::string bad;
    std::vector<Text> inputs;
    size_t n_inputs = 0;
    int64_t requested_bytes = -1;
  };
  struct Pending {  // an open B event or a flow start
    int64_t ts;
    uint32_t slot;
    uint16_t lane;
    StrId name, type;
  };
  struct Deferred {  // an E event or a flow end whose partner was not in this chunk
    int64_t ts;
    uint32_t slot;
    int64_t tid;
    std::string flow_key;   // cat + '\x1f' + id for flow ends; "" for E events
    std::string flow_name;  // the flow end's name
  };
  struct OrphanEnd {  // a flow end without a start in this file (its start may be in another)
    std::string key, name;
    uint32_t slot;
    int64_t ts;
  };

  bool Scalar(ValueKind kind, std::string_view text);
  bool Push(State s);
  void ResetEvent();
  void EventField(ValueKind kind, std::string_view text);
  void ArgsField(ValueKind kind, std::string_view text);
  void EmitEvent();
  // Pairs an E (at ts ns on slot/tid) with the latest open B, or defers or skips it.
  void CloseB(uint32_t slot, int64_t tid, int64_t ts, bool defer);
  // Pairs a flow end with its start (key = cat + '\x1f' + id), or defers or skips it.
  void EndFlow(std::string key, std::string_view name, uint32_t slot, int64_t tid, int64_t ts,
               bool defer);
  // Finish()'s parts: hands the flow ends left unpaired to the builder (their devices from `map`,
  // slot -> device); describes a file that gave no ops.
  void HandOverOpenFlows(const std::vector<uint32_t>& map);
  std::string NoOpsNote(const std::vector<bool>& no_device) const;
  void Skip(const char* reason);
  uint32_t Slot(int64_t pid);
  bool Fail(std::string reason);
  // Fails with "a string of <n> bytes; the limit for one JSON string is 16 MiB".
  bool StringTooLong(size_t n);

  CaptureBuilder* b_;
  std::vector<State> stack_;
  KeyId key_ = kKeyOther;
  int input_index_ = -1;  // N of the current "inputN" key
  Event ev_;
  bool deferred_ = false;
  bool stable_strings_ = false;
  bool in_place_ = false;  // the current scalar's text may be viewed (stable, not unescaped)
  // MergeChunk's part after the rows: pid names, B/E pairs and flows across the boundary.
  void MergeState(TraceHandler&& chunk, const std::vector<uint32_t>& slot_map,
                  const std::vector<StrId>& sid);
  std::vector<uint32_t> SlotMap(const TraceHandler& chunk);

  int64_t events_end_ = -1;
  std::function<size_t()> tell_;
  std::vector<Deferred> deferred_events_;
  std::vector<OrphanEnd> orphan_ends_;
  int64_t horovod_negotiations_ = -1;  // a Horovod timeline's negotiations; -1 not one
  bool saw_events_ = false, top_array_ = false, tf2_ = false, tf1_ = false;
  std::string abort_reason_;
  int64_t events_ = 0, ops_ = 0, skipped_ = 0;
  size_t first_op_, first_flow_, first_tensor_;
  std::unordered_map<int64_t, uint32_t> slot_of_pid_;
  std::vector<int64_t> pids_;  // slot -> pid
  static constexpr uint32_t kNoSlot = UINT32_MAX;
  int64_t last_pid_ = 0;  // Slot()'s one-entry cache
  uint32_t last_slot_ = kNoSlot;
  std::unordered_map<int64_t, std::string> process_names_;
  std::unordered_map<uint64_t, std::vector<Pending>> open_b_;  // (slot, tid) -> stack
  std::unordered_map<std::string, Pending> flow_starts_;       // cat + id -> start
  std::vector<StrId> input_ids_;

  // TF2 trace-viewer JSON of an XSpace (tf2_xspace()): its X events, held until Finish().
  struct Tf2Rec {
    int64_t ts, dur, pid, tid, group, corr;
    StrId name, type;  // an op's node and type; else the event's name (long_name first) twice
    uint16_t flags;    // kRec* below
    // XProf's event types (collectors/xplane/step_breakdown.h) by the event's full name: bits
    // 0-3 a host event's with a device, 4-7 without one, 8-11 a GPU stream event's.
    uint16_t xprof = 0;
  };
  enum : uint16_t {
    kRecOp = 1,
    kRecGroup = 2,
    kRecCorr = 4,
    kRecMarker = 8,
    kRecAsync = 16,
    kRecTfData = 32,
    kRecMemcpy = 64,
    kRecTied = 128,      // a kernel typed by its own tf_op stat
    kRecIterator = 256,  // a tf.data pipeline stage's GetNext (tf2_iterators.h): name its path
  };
  void RecordTf2Event();
  // Finish()'s part for a TF2 trace-viewer JSON: ops, kernels tied to their TF ops, steps.
  void FinishTf2(FileStats* stats);
  // Indexes of tf2_recs_ by (pid, tid), each thread's in start order, the enclosing event first
  // (the nesting that ties a launch to its op and a FunctionRun to its tf.data function); equal
  // records in file order. O(n) plus a sort of the runs of one thread's records when each run is
  // in order and a thread's runs follow each other, as TF writes them; else a stable sort of the
  // records.
  std::vector<uint32_t> Tf2Order() const;
  bool tf2x_ = false;
  HostMapper* hosts_ = nullptr;
  std::vector<std::string>* notes_ = nullptr;
  int64_t session_wall_ns_ = 0;
  std::set<int64_t> gpu_planes_;  // TF2 XSpace JSON: pids of GPU planes (IsTf2GpuPlane)
  int64_t tf2_host_events_ = 0;   // TF2 XSpace JSON: X events on host processes that are no op
  std::vector<Tf2Rec> tf2_recs_;
  // TF2 transfer events whose rendezvous key parsed (RendezvousKeyOfEvent): Finish() adds each as
  // a flow from the key's source device to the event's device, once the pids are devices.
  struct KeyedTransfer {
    int64_t ts, pid;
    std::string src_device, dst_device, tensor;
  };
  std::vector<KeyedTransfer> keyed_;
  std::map<std::pair<int64_t, int64_t>, std::string> thread_names_;  // (pid, tid) -> name
  // RecordTf2Event: whether the last (pid, tid) looked up is a GPU stream's thread.
  int64_t stream_cache_pid_ = 0, stream_cache_tid_ = 0;
  bool stream_cache_ = false, stream_cache_valid_ = false;
};

// Adds `n` lone UTF-16 surrogate escapes (read as U+FFFD by the fast tokenizer) to the import
// notes' ignored counts of `builder`.
inline void CountLoneSurrogates(size_t n, CaptureBuilder* builder) {
  if (n > 0) {
    builder->stats().ignored["lone UTF-16 surrogate in a string (read as U+FFFD)"] +=
        static_cast<int64_t>(n);
  }
}

}  // namespace tfdiag
