#include "collectors/timeline/trace_handler.h"

#include <charconv>

#include "collectors/timeline/timeline_reader.h"
#include "collectors/xplane/tf2_events.h"
#include "core/input_limits.h"

namespace tfdiag {

namespace {

bool ParseInt64(std::string_view s, int64_t* out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  if (ec == std::errc() && p == s.data() + s.size()) return true;
  // An integral value written as a float ("3.0") is accepted.
  int64_t ns;
  if (ParseMicrosAsNanos(s, &ns) && ns % 1000 == 0) {
    *out = ns / 1000;
    return true;
  }
  return false;
}

constexpr size_t kMaxDepth = 1000;

// Index N of "inputN", or -1.
int InputIndex(std::string_view key) {
  if (key.size() < 6 || key.substr(0, 5) != "input") return -1;
  int n = 0;
  auto [p, ec] = std::from_chars(key.data() + 5, key.data() + key.size(), n);
  if (ec != std::errc() || p != key.data() + key.size() || n < 0 || n > 4096) return -1;
  return n;
}

}  // namespace

TraceHandler::TraceHandler(CaptureBuilder* builder) : b_(builder) {
  first_op_ = b_->op_count();
  first_flow_ = b_->flow_count();
  first_tensor_ = b_->tensor_count();
}

bool TraceHandler::Fail(std::string reason) {
  abort_reason_ = std::move(reason);
  return false;
}

void TraceHandler::ResetEvent() {
  // Field by field, so the strings keep their capacity from one event to the next.
  ev_.ph = 0;
  ev_.has_ph = ev_.has_pid = ev_.has_tid = ev_.has_ts = ev_.has_dur = ev_.has_id = false;
  ev_.empty = true;
  ev_.pid = ev_.tid = ev_.ts = ev_.dur = 0;
  ev_.id.clear();
  ev_.name.clear();
  ev_.cat.clear();
  ev_.arg_name.clear();
  ev_.arg_op.clear();
  ev_.long_name.clear();
  ev_.tf_op.clear();
  ev_.annotation.clear();
  ev_.rendezvous.clear();
  ev_.bad.clear();
  ev_.n_inputs = 0;
  for (Text& in : ev_.inputs) in.clear();
  ev_.requested_bytes = -1;
  ev_.has_group = ev_.has_corr = ev_.marker = ev_.async = ev_.step_name = false;
  ev_.group = ev_.corr = 0;
}

const char* TraceHandler::KeyName(KeyId k) {
  static const char* const kNames[] = {"?",
                                       "ph",
                                       "ts",
                                       "dur",
                                       "pid",
                                       "tid",
                                       "name",
                                       "cat",
                                       "id",
                                       "args",
                                       "snapshot",
                                       "traceEvents",
                                       "metadata",
                                       "displayTimeUnit",
                                       "tensor_description",
                                       "op",
                                       tf2_stat::kLongName.data(),
                                       "inputN",
                                       tf2_stat::kGroupId.data(),
                                       tf2_stat::kCorrelationId.data(),
                                       tf2_stat::kIsRoot.data(),
                                       tf2_stat::kStepNum.data(),
                                       tf2_stat::kStepName.data(),
                                       tf2_stat::kIsAsync.data(),
                                       tf2_stat::kTfOp.data(),
                                       tf2_stat::kAnnotation.data(),
                                       tf2_stat::kRendezvousKey.data()};
  return kNames[k];
}

// Key() switches on a key's length first: the TF2 stat names' lengths (tf2_events.h).
static_assert(tf2_stat::kIsRoot.size() == 2 && tf2_stat::kIsAsync.size() == 2 &&
              tf2_stat::kTfOp.size() == 5 && tf2_stat::kGroupId.size() == 8 &&
              tf2_stat::kStepNum.size() == 8 && tf2_stat::kLongName.size() == 9 &&
              tf2_stat::kStepName.size() == 9 && tf2_stat::kAnnotation.size() == 10 &&
              tf2_stat::kCorrelationId.size() == 14);

bool TraceHandler::Key(const char* s, rapidjson::SizeType n, bool) {
  if (n > kMaxJsonStringBytes) [[unlikely]]
    return StringTooLong(n);
  std::string_view k(s, n);
  key_ = kKeyOther;
  switch (n) {
    case 2:
      if (k == tf2_stat::kIsRoot)
        key_ = kKeyIsRoot;
      else if (k == tf2_stat::kIsAsync)
        key_ = kKeyIsAsync;
      else if (k == "ph")
        key_ = kKeyPh;
      else if (k == "ts")
        key_ = kKeyTs;
      else if (k == "id")
        key_ = kKeyId;
      else if (k == "op")
        key_ = kKeyOp;
      break;
    case 3:
      if (k == "dur")
        key_ = kKeyDur;
      else if (k == "pid")
        key_ = kKeyPid;
      else if (k == "tid")
        key_ = kKeyTid;
      else if (k == "cat")
        key_ = kKeyCat;
      else if (k == tf2_stat::kKey)
        key_ = kKeyRendezvousKey;
      break;
    case 4:
      if (k == "name")
        key_ = kKeyName;
      else if (k == "args")
        key_ = kKeyArgs;
      break;
    case 5:
      if (k == tf2_stat::kTfOp) key_ = kKeyTfOp;
      break;
    case 8:
      if (k == "snapshot")
        key_ = kKeySnapshot;
      else if (k == "metadata")
        key_ = kKeyMetadata;
      else if (k == tf2_stat::kGroupId)
        key_ = kKeyGroupId;
      else if (k == tf2_stat::kStepNum)
        key_ = kKeyStepNum;
      break;
    case 9:
      if (k == tf2_stat::kLongName)
        key_ = kKeyLongName;
      else if (k == tf2_stat::kStepName)
        key_ = kKeyStepName;
      break;
    case 14:
      if (k == tf2_stat::kCorrelationId)
        key_ = kKeyCorrelationId;
      else if (k == tf2_stat::kRendezvousKey)
        key_ = kKeyRendezvousKey;
      break;
    case 10:
      if (k == tf2_stat::kAnnotation) key_ = kKeyAnnotation;
      break;
    case 11:
      if (k == "traceEvents") key_ = kKeyTraceEvents;
      break;
    case 15:
      if (k == "displayTimeUnit") key_ = kKeyDisplayTimeUnit;
      break;
    case 18:
      if (k == "tensor_description") key_ = kKeyTensorDescription;
      break;
    default:
      break;
  }
  if (key_ == kKeyOther && n > 5 && k.compare(0, 5, "input") == 0) {
    input_index_ = InputIndex(k);
    if (input_index_ >= 0) key_ = kKeyInput;
  }
  return true;
}

bool TraceHandler::Push(State s) {
  // RapidJSON's Reader recurses once per nesting level: bound it, or a file of '[' overflows the
  // stack. Trace events nest a few levels deep.
  if (stack_.size() >= kMaxDepth) {
    return Fail(fmt::format("nesting deeper than {} levels", kMaxDepth));
  }
  stack_.push_back(s);
  key_ = kKeyOther;
  return true;
}

bool TraceHandler::StartObject() {
  if (stack_.empty()) return Push(kTopObject);
  switch (stack_.back()) {
    case kEvents:
      ResetEvent();
      ++events_;
      return Push(kEvent);
    case kEvent:
      ev_.empty = false;
      if (key_ == kKeyArgs) return Push(kArgs);
      return Push(kSkip);
    case kArgs:
      if (key_ == kKeySnapshot) return Push(kSnapshot);
      return Push(kSkip);
    case kTopObject:
      if (key_ == kKeyTraceEvents)
        return Fail("traceEvents: expected an array of events, got an object");
      if (key_ == kKeyMetadata) tf2_ = true;
      return Push(kSkip);
    default:
      return Push(kSkip);
  }
}

bool TraceHandler::EndObject(rapidjson::SizeType) {
  State s = stack_.back();
  stack_.pop_back();
  if (s == kEvent) EmitEvent();
  return true;
}

bool TraceHandler::StartArray() {
  if (stack_.empty()) {
    top_array_ = true;
    saw_events_ = true;
    return Push(kEvents);
  }
  switch (stack_.back()) {
    case kTopObject:
      if (key_ == kKeyTraceEvents) {
        saw_events_ = true;
        return Push(kEvents);
      }
      return Push(kSkip);
    case kEvents:
      ++events_;
      Skip("event is an array, expected an object");
      return Push(kSkip);
    case kEvent:
      ev_.empty = false;
      return Push(kSkip);
    default:
      return Push(kSkip);
  }
}

bool TraceHandler::EndArray(rapidjson::SizeType) {
  if (stack_.back() == kEvents && tell_) events_end_ = static_cast<int64_t>(tell_());
  stack_.pop_back();
  return true;
}

bool TraceHandler::StringTooLong(size_t n) {
  return Fail(fmt::format("a string of {} bytes; the limit for one JSON string is {} MiB", n,
                          kMaxJsonStringBytes >> 20));
}

bool TraceHandler::Scalar(ValueKind kind, std::string_view text) {
  if (text.size() > kMaxJsonStringBytes) [[unlikely]]
    return StringTooLong(text.size());
  if (stack_.empty()) {
    return Fail("expected a JSON object with traceEvents or an array of events, got a scalar");
  }
  switch (stack_.back()) {
    case kTopObject:
      if (key_ == kKeyTraceEvents) {
        return Fail("traceEvents: expected an array of events, got a scalar");
      }
      if (key_ == kKeyDisplayTimeUnit) tf2_ = true;
      return true;
    case kEvents:
      ++events_;
      Skip("event is not an object");
      return true;
    case kEvent:
      ev_.empty = false;
      EventField(kind, text);
      return true;
    case kArgs:
      ArgsField(kind, text);
      return true;
    case kSnapshot:
      if (key_ == kKeyTensorDescription && kind == kString) {
        ev_.requested_bytes = RequestedBytesFromDescription(text);
      }
      return true;
    case kSkip:
      return true;
  }
  return true;
}

void TraceHandler::EventField(ValueKind kind, std::string_view text) {
  auto number = [&](int64_t* out, bool micros, bool* has) {
    bool ok = (kind == kNumber || kind == kString) &&
              (micros ? ParseMicrosAsNanos(text, out) : ParseInt64(text, out));
    if (ok) {
      *has = true;
    } else if (ev_.bad.empty()) {
      ev_.bad = fmt::format("field '{}' is not a number", KeyName(key_));
    }
  };
  switch (key_) {
    case kKeyPh:
      if (kind == kString && text.size() == 1) {
        ev_.ph = text[0];
        ev_.has_ph = true;
      } else if (ev_.bad.empty()) {
        ev_.bad = "field 'ph' is not a one-letter string";
      }
      break;
    case kKeyTs:
      number(&ev_.ts, true, &ev_.has_ts);
      break;
    case kKeyDur:
      number(&ev_.dur, true, &ev_.has_dur);
      break;
    case kKeyPid:
      number(&ev_.pid, false, &ev_.has_pid);
      break;
    case kKeyTid:
      number(&ev_.tid, false, &ev_.has_tid);
      break;
    case kKeyName:
      if (kind == kString) ev_.name.Set(text, in_place_);
      break;
    case kKeyCat:
      if (kind == kString) ev_.cat.Set(text, in_place_);
      break;
    case kKeyId:
      if (kind == kString || kind == kNumber) {
        ev_.id.Set(text, in_place_);
        ev_.has_id = true;
      }
      break;
    default:
      break;
  }
}

void TraceHandler::ArgsField(ValueKind kind, std::string_view text) {
  if (kind == kString || kind == kNumber) {
    int64_t v = 0;
    switch (key_) {
      case kKeyGroupId:
        ev_.has_group = ParseInt64(text, &ev_.group);
        return;
      case kKeyCorrelationId:
        ev_.has_corr = ParseInt64(text, &ev_.corr);
        return;
      case kKeyIsRoot:
        ev_.marker |= ParseInt64(text, &v) && v != 0;
        return;
      case kKeyStepName:
        ev_.step_name = true;
        ev_.marker = true;
        return;
      case kKeyStepNum:
        ev_.marker = true;
        return;
      case kKeyIsAsync:
        ev_.async |= ParseInt64(text, &v) && v != 0;
        return;
      default:
        break;
    }
  }
  if (kind != kString) return;
  switch (key_) {
    case kKeyName:
      ev_.arg_name.Set(text, in_place_);
      break;
    case kKeyOp:
      ev_.arg_op.Set(text, in_place_);
      break;
    case kKeyLongName:
      ev_.long_name.Set(text, in_place_);
      break;
    case kKeyTfOp:
      ev_.tf_op.Set(text, in_place_);
      break;
    case kKeyAnnotation:
      ev_.annotation.Set(text, in_place_);
      break;
    case kKeyRendezvousKey:
      ev_.rendezvous.Set(text, in_place_);
      break;
    case kKeyTensorDescription:  // snapshot args written without the wrapper
      ev_.requested_bytes = RequestedBytesFromDescription(text);
      break;
    case kKeyInput: {
      size_t idx = static_cast<size_t>(input_index_);
      if (ev_.inputs.size() <= idx) ev_.inputs.resize(idx + 1);
      ev_.inputs[idx].Set(text, in_place_);
      ev_.n_inputs = std::max(ev_.n_inputs, idx + 1);
      break;
    }
    default:
      break;
  }
}

void TraceHandler::Skip(const char* reason) {
  ++b_->stats().skipped[reason];
  ++skipped_;
}

uint32_t TraceHandler::Slot(int64_t pid) {
  // Consecutive events mostly share a pid (one device's ops are written together).
  if (last_slot_ != kNoSlot && pid == last_pid_) return last_slot_;
  auto [it, added] = slot_of_pid_.emplace(pid, static_cast<uint32_t>(pids_.size()));
  if (added) pids_.push_back(pid);
  last_pid_ = pid;
  last_slot_ = it->second;
  return it->second;
}

}  // namespace tfdiag
