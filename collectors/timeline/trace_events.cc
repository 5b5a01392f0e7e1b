// TraceHandler: turning one collected event into Capture rows, and the end-of-file mapping of
// pids to devices. See trace_handler.h.
#include <algorithm>

#include "collectors/timeline/trace_handler.h"
#include "collectors/xplane/step_breakdown.h"
#include "collectors/xplane/tf2_events.h"
#include "collectors/xplane/tf2_iterators.h"
#include "core/device_name.h"

namespace tfdiag {

namespace {

// Timestamps beyond +-2^62 ns (146 years) are nonsense and would overflow end = ts + dur.
constexpr int64_t kMaxTs = (int64_t{1} << 62) - 1;

uint16_t Lane(int64_t tid) {
  return static_cast<uint16_t>(std::clamp<int64_t>(tid, 0, UINT16_MAX));
}

}  // namespace

void TraceHandler::EmitEvent() {
  if (!ev_.bad.empty()) {
    Skip(ev_.bad.c_str());
    return;
  }
  if (!ev_.has_ph) {
    if (ev_.empty) {
      ++b_->stats().ignored["empty {} event"];
    } else {
      Skip("event without 'ph'");
    }
    return;
  }
  switch (ev_.ph) {
    case 'X':
    case 'B': {
      if (!ev_.has_pid) return Skip("op event without 'pid'");
      if (!ev_.has_ts) return Skip("op event without 'ts'");
      if (ev_.ph == 'X' && !ev_.has_dur) return Skip("X event without 'dur'");
      if (ev_.dur < 0) return Skip("X event with negative 'dur'");
      if (ev_.ts > kMaxTs || ev_.ts < -kMaxTs || ev_.dur > kMaxTs - std::max<int64_t>(ev_.ts, 0)) {
        return Skip("op event with 'ts' or 'dur' out of range (|ns| >= 2^62)");
      }
      if (tf2x_ && ev_.ph == 'X') return RecordTf2Event();
      // Node name and op type: TF1 args.name / args.op; TF2 long_name "node:Type"; else name.
      std::string_view node = ev_.arg_name.view(), type = ev_.arg_op.view();
      if (node.empty() && !ev_.long_name.empty()) {
        std::string_view ln = ev_.long_name.view();
        size_t colon = ln.rfind(':');
        node = ln.substr(0, colon);
        if (type.empty() && colon != std::string_view::npos) type = ln.substr(colon + 1);
      }
      if (node.empty()) node = ev_.name.view();
      if (type.empty()) type = ev_.name.view();
      StrId name_id = b_->Intern(node), type_id = b_->Intern(type);
      uint32_t slot = Slot(ev_.pid);
      if (slot >= kMaxDevices) return Skip("op on a pid past the 65535th of the file");
      if (ev_.ph == 'B') {
        open_b_[(uint64_t{slot} << 32) ^ static_cast<uint32_t>(ev_.tid)].push_back(
            {ev_.ts, slot, Lane(ev_.tid), name_id, type_id});
        return;
      }
      input_ids_.clear();
      for (size_t i = 0; i < ev_.n_inputs; ++i)
        input_ids_.push_back(b_->Intern(ev_.inputs[i].view()));
      b_->AddOp(ev_.ts, ev_.dur, slot, Lane(ev_.tid), name_id, type_id, input_ids_.data(),
                input_ids_.size());
      ++ops_;
      return;
    }
    case 'E': {
      if (!ev_.has_pid || !ev_.has_ts) return Skip("E event without 'pid' or 'ts'");
      if (ev_.ts > kMaxTs || ev_.ts < -kMaxTs)
        return Skip("op event with 'ts' or 'dur' out of range (|ns| >= 2^62)");
      CloseB(Slot(ev_.pid), ev_.tid, ev_.ts, deferred_);
      return;
    }
    case 'M':
      if (ev_.name.view() == "process_name" && ev_.has_pid) {
        const std::string_view process = ev_.arg_name.view();
        process_names_[ev_.pid] = std::string(process);
        Slot(ev_.pid);
        if (process.size() > 8 && process.substr(process.size() - 8) == " Compute") tf1_ = true;
        // An XSpace plane's name (TF1 names a device "/job:... Compute"): the trace-viewer JSON.
        if (IsTf2PlaneName(process) && process.find(' ') == std::string_view::npos) tf2x_ = true;
      } else if (ev_.name.view() == "thread_name" && ev_.has_pid) {
        thread_names_[{ev_.pid, ev_.tid}] = std::string(ev_.arg_name.view());
        stream_cache_valid_ = false;
        ++b_->stats().ignored["metadata thread_name"];
      } else {
        ++b_->stats().ignored["metadata " + std::string(ev_.name.view())];
      }
      return;
    case 's':
    case 't':
    case 'f': {
      if (!ev_.has_pid || !ev_.has_ts || !ev_.has_id) return Skip("flow event without pid/ts/id");
      std::string key = std::string(ev_.cat.view()) + '\x1f' + std::string(ev_.id.view());
      uint32_t slot = Slot(ev_.pid);
      if (ev_.ph == 's') {
        flow_starts_[key] = {ev_.ts, slot, Lane(ev_.tid), b_->Intern(ev_.name.view()), 0};
        return;
      }
      EndFlow(std::move(key), ev_.name.view(), slot, ev_.tid, ev_.ts, deferred_);
      return;
    }
    case 'O':
      if (ev_.has_pid && ev_.requested_bytes >= 0 && !ev_.name.empty()) {
        TensorRow t;
        t.name = b_->Intern(ev_.name.view());
        t.device = Slot(ev_.pid);
        t.bytes = ev_.requested_bytes;
        b_->AddTensor(t);
      } else {
        ++b_->stats().ignored["object snapshot without requested_bytes"];
      }
      return;
    case 'N':
    case 'D':
      ++b_->stats().ignored["tensor object create/delete"];
      return;
    case 'C':
      ++b_->stats().ignored["counter"];
      return;
    default:
      ++b_->stats().ignored[fmt::format("phase '{}'", ev_.ph)];
      return;
  }
}

void TraceHandler::RecordTf2Event() {
  Tf2Rec r{OnWallClock(ev_.ts, session_wall_ns_),
           ev_.dur,
           ev_.pid,
           ev_.tid,
           ev_.group,
           ev_.corr,
           0,
           0,
           0,
           0};
  const std::string_view name = ev_.name.view(), long_name = ev_.long_name.view();
  if (ev_.has_group) {
    // XProf classifies an event by its XEvent metadata name: long_name when the display name
    // differs (an op's "<node>:<type>").
    const std::string_view full = long_name.empty() ? name : long_name;
    const auto type = [](XprofEventType t) { return static_cast<uint16_t>(t); };
    r.xprof = static_cast<uint16_t>(
        type(ClassifyXprofHostEvent(full, true, ev_.has_corr, ev_.step_name)) |
        type(ClassifyXprofHostEvent(full, false, ev_.has_corr, ev_.step_name)) << 4 |
        type(ClassifyXprofDeviceEvent(full)) << 8);
  }
  std::string_view node, type;
  if (Tf2OpOf(name, long_name, &node, &type)) {
    r.flags |= kRecOp;
    r.name = b_->Intern(node);
    r.type = b_->Intern(type);
    RendezvousKey key;
    if (IsTransferOpType(type) &&
        RendezvousKeyOfEvent(long_name.empty() ? name : long_name, ev_.rendezvous.view(), &key)) {
      keyed_.push_back({r.ts, ev_.pid, std::string(key.src_device), std::string(key.dst_device),
                        std::string(key.tensor)});
    }
  } else {
    // The XEvent metadata name: long_name when the display name differs.
    const std::string_view full = long_name.empty() ? name : long_name;
    if (IsStepMarkerName(full)) r.flags |= kRecMarker;
    if (IsTfDataFunctionName(full)) r.flags |= kRecTfData;
    if (full.substr(0, 6) == "Memcpy") r.flags |= kRecMemcpy;
    if (IsInputIteratorName(full)) {  // a tf.data stage
      r.flags |= kRecIterator;
      r.name = r.type = b_->Intern(full);
    }
    // Whether the event's thread is a GPU stream, looked up once per run of one thread's events.
    if (!stream_cache_valid_ || stream_cache_pid_ != ev_.pid || stream_cache_tid_ != ev_.tid) {
      auto t = thread_names_.find({ev_.pid, ev_.tid});
      stream_cache_ = t != thread_names_.end() && ClassifyTf2Line(t->second) == Tf2Line::kStream;
      stream_cache_pid_ = ev_.pid;
      stream_cache_tid_ = ev_.tid;
      stream_cache_valid_ = true;
    }
    if (stream_cache_) {
      r.name = r.type = b_->Intern(full);  // a kernel or memcpy: its name is kept
      // A kernel's TF op: its tf_op stat, else its annotation (a memcpy keeps its own type, as
      // the XSpace reader has it).
      if (ParseTfOpName(ev_.tf_op.view(), &node, &type) ||
          (!(r.flags & kRecMemcpy) && TfOpOfAnnotation(ev_.annotation.view(), &node, &type))) {
        r.name = b_->Intern(node);
        r.type = b_->Intern(type);
        r.flags |= kRecTied;
      }
    }
  }
  if (ev_.has_group) r.flags |= kRecGroup;
  if (ev_.has_corr) r.flags |= kRecCorr;
  if (ev_.marker) r.flags |= kRecMarker;
  if (ev_.async) r.flags |= kRecAsync;
  tf2_recs_.push_back(r);
}

void TraceHandler::CloseB(uint32_t slot, int64_t tid, int64_t ts, bool defer) {
  auto it = open_b_.find((uint64_t{slot} << 32) ^ static_cast<uint32_t>(tid));
  if (it == open_b_.end() || it->second.empty()) {
    if (defer) return deferred_events_.push_back({ts, slot, tid, "", ""});
    return Skip("E event without a matching B");
  }
  Pending p = it->second.back();
  it->second.pop_back();
  if (ts < p.ts) return Skip("E event before its B");
  b_->AddOp(p.ts, ts - p.ts, p.slot, p.lane, p.name, p.type, nullptr, 0);
  ++ops_;
}

void TraceHandler::EndFlow(std::string key, std::string_view name, uint32_t slot, int64_t tid,
                           int64_t ts, bool defer) {
  auto it = flow_starts_.find(key);
  if (it == flow_starts_.end()) {
    if (defer) {
      return deferred_events_.push_back({ts, slot, tid, std::move(key), std::string(name)});
    }
    // Its start may sit in another file of the job: CaptureBuilder pairs them (AddOpenFlow).
    return orphan_ends_.push_back({std::move(key), std::string(name), slot, ts});
  }
  FlowRow f;
  f.src_ts = it->second.ts;
  f.src_device = it->second.slot;
  f.dst_ts = ts;
  f.dst_device = slot;
  f.name = it->second.name;
  b_->AddFlow(f);
  // One arrow per start, as TensorFlow writes them (one s and one t per id); dropping the start
  // keeps memory flat on files with millions of arrows.
  flow_starts_.erase(it);
}

bool TraceHandler::BetweenBareArrayEvents() const {
  return top_array_ && stack_.size() == 1 && stack_.back() == kEvents;
}

std::vector<uint32_t> TraceHandler::SlotMap(const TraceHandler& chunk) {
  std::vector<uint32_t> slot_map(chunk.pids_.size());
  for (size_t k = 0; k < chunk.pids_.size(); ++k) slot_map[k] = Slot(chunk.pids_[k]);
  return slot_map;
}

size_t TraceHandler::AddSlotsOf(const TraceHandler& chunk) {
  for (int64_t pid : chunk.pids_) Slot(pid);
  return pids_.size();
}

void TraceHandler::MergeChunk(TraceHandler&& chunk, CaptureBuilder&& chunk_builder, int threads) {
  const std::vector<uint32_t> slot_map = SlotMap(chunk);
  const std::vector<StrId> sid = b_->Absorb(std::move(chunk_builder), slot_map, threads);
  MergeState(std::move(chunk), slot_map, sid);
}

void TraceHandler::MergeChunk(TraceHandler&& chunk, CaptureBuilder* chunk_builder,
                              std::vector<StrId>* sid) {
  const std::vector<uint32_t> slot_map = SlotMap(chunk);
  b_->AbsorbRows(chunk_builder, slot_map, sid);
  MergeState(std::move(chunk), slot_map, *sid);
}

void TraceHandler::MergeState(TraceHandler&& chunk, const std::vector<uint32_t>& slot_map,
                              const std::vector<StrId>& sid) {
  for (auto& [pid, name] : chunk.process_names_) process_names_[pid] = std::move(name);
  // Partners from earlier chunks, in the order the chunk met them.
  for (const Deferred& d : chunk.deferred_events_) {
    const uint32_t slot = slot_map[d.slot];
    if (d.flow_key.empty()) {
      CloseB(slot, d.tid, d.ts, false);
    } else {
      EndFlow(d.flow_key, d.flow_name, slot, d.tid, d.ts, false);
    }
  }
  // What the chunk leaves open continues into the next chunk.
  for (auto& [key, stack] : chunk.open_b_) {
    const uint64_t tid_bits = key & 0xffffffffu;
    auto& mine = open_b_[(uint64_t{slot_map[key >> 32]} << 32) | tid_bits];
    for (Pending p : stack) {
      p.slot = slot_map[p.slot];
      p.name = sid[p.name];
      p.type = sid[p.type];
      mine.push_back(p);
    }
  }
  for (auto& [key, p] : chunk.flow_starts_) {
    Pending q = p;
    q.slot = slot_map[q.slot];
    q.name = sid[q.name];
    flow_starts_[key] = q;
  }
  events_ += chunk.events_;
  ops_ += chunk.ops_;
  skipped_ += chunk.skipped_;
  tf1_ |= chunk.tf1_;
  tf2_ |= chunk.tf2_;
  tf2x_ |= chunk.tf2x_;
  for (auto& [key, name] : chunk.thread_names_) thread_names_[key] = std::move(name);
  stream_cache_valid_ = false;
  for (Tf2Rec r : chunk.tf2_recs_) {
    r.name = sid[r.name];
    r.type = sid[r.type];
    tf2_recs_.push_back(r);
  }
  chunk.tf2_recs_ = {};
  for (KeyedTransfer& t : chunk.keyed_) keyed_.push_back(std::move(t));
  chunk.keyed_ = {};
}

}  // namespace tfdiag
