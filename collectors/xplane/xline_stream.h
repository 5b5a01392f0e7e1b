// One XLine read off the wire without building its XEvent messages, so that a line of millions
// of events (a host thread over a long capture) costs one event at a time, not the generated
// objects of the whole line (about 6x its wire size). Field numbers are xplane.proto's
// (TSL's tsl/profiler/protobuf/xplane.proto): XLine name=2, timestamp_ns=3, events=4; XEvent
// metadata_id=1, offset_ps=2 | num_occurrences=5 (a oneof), duration_ps=3, stats=4; XStat
// metadata_id=1, uint64_value=3, int64_value=4, str_value=5, ref_value=7 (a oneof with
// double_value=2, bytes_value=6). As libprotobuf parses them: fields of another wire type than
// the schema's are skipped as unknown, the last value of a scalar or oneof wins, unknown
// fields are skipped.
// Thread-safety: not thread-safe (reads the caller's stream).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "collectors/xplane/proto_stream.h"
#include "core/status.h"

namespace tfdiag {

// What a line says besides its events.
struct WireLineHead {
  std::string name;
  int64_t timestamp_ns = 0;
  int64_t events = 0;  // XLine.events elements
};

// The stat metadata ids (XPlane.stat_metadata keys) a reader asks for; -1: none. Names in
// tf2_events.h (Tf2Stat).
struct WireStatIds {
  int64_t group = -1, tf_op = -1, correlation = -1;
  int64_t root = -1, step_num = -1, step_name = -1, async = -1;
  int64_t rendezvous = -1;  // a transfer's rendezvous key (str_value)
  int64_t annotation = -1;  // a kernel's annotation stack (str_value or ref_value)
};

namespace xplane {
class XPlane;  // collectors/xplane/xplane.proto
}  // namespace xplane

// The ids of `plane`'s stat metadata that WireStatIds names, by their names (tf2_events.h
// ClassifyTf2Stat); -1 for each the plane lacks.
WireStatIds PlaneStatIds(const xplane::XPlane& plane);

// One XEvent, with the values of the stats the reader asked for.
struct WireEvent {
  enum Data : uint8_t { kNone, kOffset, kOccurrences } data = kNone;  // the oneof's case
  int64_t metadata_id = 0;
  int64_t offset_ps = 0, duration_ps = 0;
  // Values of the stats whose metadata id is `group` (int64_value or uint64_value, 0 for
  // another value case), in order.
  std::vector<int64_t> groups;
  // The stats whose metadata id is `tf_op`, in order: str_value, or for a ref_value the
  // referenced XStatMetadata id (tf_op_refs, -1 for a str_value).
  std::vector<std::string> tf_ops;
  std::vector<int64_t> tf_op_refs;
  // `correlation`: an int correlation stat's value (the last one). `marker`: a non-zero int
  // `root` stat, or any `step_num` / `step_name` stat. `async`: a non-zero int `async` stat.
  // `step_name`: a `step_name` stat (group_events.cc's implicit step marker, XProf's
  // kImplicitHostStepMarker).
  bool has_correlation = false, marker = false, async = false, step_name = false;
  int64_t correlation = 0;
  // The `rendezvous` stat (the last one): its str_value, or for a ref_value the referenced
  // XStatMetadata id (rendezvous_ref; -1 for a str_value or none).
  std::string rendezvous_key;
  int64_t rendezvous_ref = -1;
  // The `annotation` stat (the last one), as the rendezvous key: str_value or ref_value id.
  std::string annotation;
  int64_t annotation_ref = -1;
};

// Reads the XLine at `f` (a field of wire type 2 just read by in->Next) in two passes over its
// bytes: `head` first (events skipped and counted), then, when `on_head(head)` returns true and
// the line has events, `on_event` for each event in order; the stream is left after the line.
// A line of up to 4 MiB is read into a buffer once (peak: its bytes); a larger one is read twice
// off the file (peak: one XEvent).
// `ids`: the stat metadata ids to collect. `what` names the line in
// errors ("XSpace.planes[2].lines element"): kInvalidInput "<file>: byte N: expected ..." for
// corrupt or truncated data.
Status ReadXLineStreaming(
    ProtoFieldStream* in, const ProtoFieldStream::Field& f, const WireStatIds& ids,
    const std::string& what, WireLineHead* head,
    const std::function<bool(const WireLineHead&)>& on_head,
    const std::function<void(const WireLineHead&, const WireEvent&)>& on_event);

}  // namespace tfdiag
