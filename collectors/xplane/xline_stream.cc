#include "collectors/xplane/xline_stream.h"

#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>

#include "collectors/xplane/tf2_events.h"
#include "collectors/xplane/xplane.pb.h"

namespace tfdiag {

namespace {

using google::protobuf::internal::WireFormatLite;
using google::protobuf::io::CodedInputStream;

constexpr int kVarint = 0, kFixed64 = 1, kLen = 2;

// Reads the next tag inside the current limit: false at the limit; a corrupt tag or data cut
// short sets `*bad`.
bool NextTag(CodedInputStream* cis, uint32_t* tag, bool* bad) {
  *tag = cis->ReadTagNoLastTag();
  if (*tag != 0) return true;
  *bad = cis->BytesUntilLimit() != 0;
  return false;
}

bool ReadInt64(CodedInputStream* cis, int64_t* v) {
  uint64_t u = 0;
  if (!cis->ReadVarint64(&u)) return false;
  *v = static_cast<int64_t>(u);
  return true;
}

// One XStat (at the stream's current limit): collects it into `e` when its metadata id is one
// asked for. The value oneof's last field wins, as in a parsed message.
bool ReadStat(CodedInputStream* cis, const WireStatIds& ids, WireEvent* e, std::string* scratch) {
  const int64_t group_stat = ids.group, tf_op_stat = ids.tf_op;
  int64_t id = 0;
  int value_case = 0;  // field number of the oneof's value
  uint64_t num = 0;
  scratch->clear();
  uint32_t tag;
  bool bad = false;
  while (NextTag(cis, &tag, &bad)) {
    const uint32_t field = tag >> 3;
    const int wt = static_cast<int>(tag & 7);
    if (field == 1 && wt == kVarint) {
      if (!ReadInt64(cis, &id)) return false;
    } else if ((field == 3 || field == 4 || field == 7) && wt == kVarint) {
      if (!cis->ReadVarint64(&num)) return false;
      value_case = static_cast<int>(field);
    } else if ((field == 5 || field == 6) && wt == kLen) {
      uint32_t len = 0;
      if (!cis->ReadVarint32(&len) || !cis->ReadString(scratch, static_cast<int>(len)))
        return false;
      value_case = static_cast<int>(field);
    } else if (field == 2 && wt == kFixed64) {
      if (!cis->Skip(8)) return false;
      value_case = 2;
    } else if (!WireFormatLite::SkipField(cis, tag)) {
      return false;
    }
  }
  if (bad) return false;
  if (id == group_stat && group_stat >= 0) {
    e->groups.push_back(value_case == 3 || value_case == 4 ? static_cast<int64_t>(num) : 0);
  }
  if (id < 0) return true;
  const bool is_int = value_case == 3 || value_case == 4;
  if (id == ids.correlation && is_int) {
    e->has_correlation = true;
    e->correlation = static_cast<int64_t>(num);
  }
  if ((id == ids.root && is_int && num != 0) || id == ids.step_num || id == ids.step_name) {
    e->marker = true;
  }
  if (id == ids.step_name) e->step_name = true;
  if (id == ids.async && is_int && num != 0) e->async = true;
  if (id == ids.rendezvous && (value_case == 5 || value_case == 7)) {
    e->rendezvous_key = value_case == 5 ? *scratch : std::string();
    e->rendezvous_ref = value_case == 7 ? static_cast<int64_t>(num) : -1;
  }
  if (id == ids.annotation && (value_case == 5 || value_case == 7)) {
    e->annotation = value_case == 5 ? *scratch : std::string();
    e->annotation_ref = value_case == 7 ? static_cast<int64_t>(num) : -1;
  }
  if (id == tf_op_stat && tf_op_stat >= 0) {
    if (value_case == 7) {
      e->tf_ops.emplace_back();
      e->tf_op_refs.push_back(static_cast<int64_t>(num));
    } else {
      e->tf_ops.push_back(value_case == 5 ? *scratch : std::string());
      e->tf_op_refs.push_back(-1);
    }
  }
  return true;
}

// One XEvent (at the stream's current limit) into `e`.
bool ReadEvent(CodedInputStream* cis, const WireStatIds& ids, WireEvent* e, std::string* scratch) {
  e->data = WireEvent::kNone;
  e->metadata_id = e->offset_ps = e->duration_ps = 0;
  e->groups.clear();
  e->tf_ops.clear();
  e->tf_op_refs.clear();
  e->has_correlation = e->marker = e->async = e->step_name = false;
  e->correlation = 0;
  e->rendezvous_key.clear();
  e->rendezvous_ref = -1;
  e->annotation.clear();
  e->annotation_ref = -1;
  uint32_t tag;
  bool bad = false;
  while (NextTag(cis, &tag, &bad)) {
    const uint32_t field = tag >> 3;
    const int wt = static_cast<int>(tag & 7);
    if (field == 1 && wt == kVarint) {
      if (!ReadInt64(cis, &e->metadata_id)) return false;
    } else if (field == 2 && wt == kVarint) {
      if (!ReadInt64(cis, &e->offset_ps)) return false;
      e->data = WireEvent::kOffset;
    } else if (field == 5 && wt == kVarint) {
      int64_t n = 0;
      if (!ReadInt64(cis, &n)) return false;
      e->data = WireEvent::kOccurrences;
      e->offset_ps = 0;
    } else if (field == 3 && wt == kVarint) {
      if (!ReadInt64(cis, &e->duration_ps)) return false;
    } else if (field == 4 && wt == kLen) {
      uint32_t len = 0;
      if (!cis->ReadVarint32(&len)) return false;
      const auto limit = cis->PushLimit(static_cast<int>(len));
      if (!ReadStat(cis, ids, e, scratch) || cis->BytesUntilLimit() != 0) {
        return false;
      }
      cis->PopLimit(limit);
    } else if (!WireFormatLite::SkipField(cis, tag)) {
      return false;
    }
  }
  return !bad;
}

// A line's start, ns since the epoch: beyond 2^62 (year 2116) it is corrupt, and an event's start
// (this plus offset_ps / 1000, at most 2^63 / 1000) and end (plus duration_ps / 1000) then stay
// far from INT64_MAX, so no sum of them overflows. The TF1/TF2 JSON readers bound their times the
// same way (collectors/timeline/trace_events.cc).
constexpr int64_t kMaxLineTimestampNs = (int64_t{1} << 62) - 1;

// Pass 1 over a line's bytes (the stream limited to them, `base` their file offset): its name
// and timestamp, wherever they are among the events, and the events counted.
Status LineHead(CodedInputStream* cis, int64_t base, ProtoFieldStream* in,
                const std::string& expected, const std::string& what, WireLineHead* head) {
  uint32_t tag;
  bool bad = false;
  while (NextTag(cis, &tag, &bad)) {
    const uint32_t field = tag >> 3;
    const int wt = static_cast<int>(tag & 7);
    bool ok = true;
    if (field == 2 && wt == kLen) {
      uint32_t len = 0;
      ok = cis->ReadVarint32(&len) && cis->ReadString(&head->name, static_cast<int>(len));
    } else if (field == 3 && wt == kVarint) {
      const int at = cis->CurrentPosition();
      ok = ReadInt64(cis, &head->timestamp_ns);
      if (ok && (head->timestamp_ns < 0 || head->timestamp_ns > kMaxLineTimestampNs)) {
        return in->Error(base + at,
                         fmt::format("expected {}'s timestamp_ns (ns since the epoch) in "
                                     "[0, 2^62), got {}",
                                     what, head->timestamp_ns));
      }
    } else if (field == 4 && wt == kLen) {
      uint32_t len = 0;
      ok = cis->ReadVarint32(&len) && cis->Skip(static_cast<int>(len));
      ++head->events;
    } else {
      ok = WireFormatLite::SkipField(cis, tag);
    }
    if (!ok) return in->Error(base + cis->CurrentPosition(), expected);
  }
  if (bad) return in->Error(base + cis->CurrentPosition(), expected);
  return OkStatus();
}

// Pass 2: the events, one at a time.
Status LineEvents(CodedInputStream* cis, int64_t base, ProtoFieldStream* in,
                  const std::string& expected, const std::string& what, const WireStatIds& ids,
                  const WireLineHead& head,
                  const std::function<void(const WireLineHead&, const WireEvent&)>& on_event) {
  WireEvent e;
  std::string scratch;
  uint32_t tag;
  bool bad = false;
  while (NextTag(cis, &tag, &bad)) {
    const int at = cis->CurrentPosition();
    if (tag != ((4u << 3) | kLen)) {
      if (!WireFormatLite::SkipField(cis, tag)) return in->Error(base + at, expected);
      continue;
    }
    uint32_t len = 0;
    if (!cis->ReadVarint32(&len)) return in->Error(base + at, expected);
    const auto limit = cis->PushLimit(static_cast<int>(len));
    if (!ReadEvent(cis, ids, &e, &scratch) || cis->BytesUntilLimit() != 0) {
      return in->Error(base + at,
                       "expected an XEvent in " + what + " (corrupt data or another message type)");
    }
    cis->PopLimit(limit);
    on_event(head, e);
  }
  if (bad) return in->Error(base + cis->CurrentPosition(), expected);
  return OkStatus();
}

// Lines up to this size are read into memory once and decoded from there (two passes over the
// file would re-read its buffer per line); larger ones are read twice off the file.
constexpr int64_t kLineInMemory = 4 << 20;

}  // namespace

Status ReadXLineStreaming(
    ProtoFieldStream* in, const ProtoFieldStream::Field& f, const WireStatIds& ids,
    const std::string& what, WireLineHead* head,
    const std::function<bool(const WireLineHead&)>& on_head,
    const std::function<void(const WireLineHead&, const WireEvent&)>& on_event) {
  head->name.clear();
  head->timestamp_ns = 0;
  head->events = 0;
  const std::string expected = "expected " + what + ", an XLine (corrupt data)";
  if (f.length <= kLineInMemory) {
    thread_local std::string bytes;
    TFDIAG_RETURN_IF_ERROR(in->ReadBytes(f, &bytes));
    const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
    const int n = static_cast<int>(bytes.size());
    CodedInputStream c1(data, n);
    c1.PushLimit(n);
    TFDIAG_RETURN_IF_ERROR(LineHead(&c1, f.payload, in, expected, what, head));
    if (!on_head(*head) || head->events == 0) return OkStatus();
    CodedInputStream c2(data, n);
    c2.PushLimit(n);
    return LineEvents(&c2, f.payload, in, expected, what, ids, *head, on_event);
  }
  TFDIAG_RETURN_IF_ERROR(in->ReadMessage(
      f, [&](CodedInputStream* cis) { return LineHead(cis, f.payload, in, expected, what, head); },
      what));
  if (!on_head(*head) || head->events == 0) return OkStatus();
  const int64_t after = in->position();
  TFDIAG_RETURN_IF_ERROR(in->Seek(f.payload));
  TFDIAG_RETURN_IF_ERROR(in->ReadMessage(
      f,
      [&](CodedInputStream* cis) {
        return LineEvents(cis, f.payload, in, expected, what, ids, *head, on_event);
      },
      what));
  return in->position() == after ? OkStatus() : in->Error(f.payload, expected);
}

WireStatIds PlaneStatIds(const xplane::XPlane& plane) {
  WireStatIds ids;
  for (const auto& [id, sm] : plane.stat_metadata()) {
    switch (ClassifyTf2Stat(sm.name())) {
      case Tf2Stat::kGroupId:
        ids.group = id;
        break;
      case Tf2Stat::kTfOp:
        ids.tf_op = id;
        break;
      case Tf2Stat::kCorrelationId:
        ids.correlation = id;
        break;
      case Tf2Stat::kIsRoot:
        ids.root = id;
        break;
      case Tf2Stat::kStepNum:
        ids.step_num = id;
        break;
      case Tf2Stat::kStepName:
        ids.step_name = id;
        break;
      case Tf2Stat::kIsAsync:
        ids.async = id;
        break;
      case Tf2Stat::kRendezvousKey:
        ids.rendezvous = id;
        break;
      case Tf2Stat::kAnnotation:
        ids.annotation = id;
        break;
      case Tf2Stat::kOther:
        break;
    }
  }
  return ids;
}

}  // namespace tfdiag
