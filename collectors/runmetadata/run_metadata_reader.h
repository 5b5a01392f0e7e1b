// Reader of TF1's RunMetadata / StepStats (session.run(..., options=RunOptions(trace_level=
// FULL_TRACE), run_metadata=md), then md.SerializeToString() or str(md) / text_format) into a
// CaptureBuilder, producing the rows the timeline reader produces for the timeline that
// tensorflow/python/client/timeline.py makes of the same StepStats:
//   - one op per NodeExecStats of each DeviceStepStats: start all_start_micros (all_start_nanos
//     when the micros are 0), duration all_end_rel_micros, lane thread_id; name and type and
//     inputs from timeline_label "<node> = <Type>(<in0>, <in1>, ...)" (timeline.py
//     _parse_op_label); on GPU tracer devices (".../stream:N", ".../memcpy") name and type from
//     "<node>:<Type>" after "@@" (_parse_kernel_label); node "RecvTensor" has type RecvTensor;
//   - what the timeline throws away: each RecvTensor's label "[<N>B] <edge> from <src> to <dst>"
//     ("[%.1fMB] " from 0.1 MB up, MB = 2^20 bytes; worker_cache_logger.cc) becomes a transfer of
//     the producer node (edge "edge_<id>_<node>") from the src device to the dst device
//     (a FlowRow) and its size (a TensorRow on the src device), so the Capture's cross-task edges
//     carry bytes (EdgeRow::bytes) and a hot PS comes with the bytes it served.
//   - each node's outputs' sizes (NodeExecStats.output[].tensor_description.allocation_description
//     .requested_bytes, what timeline.py's show_memory draws) as TensorRows named "<node>" (slot
//     0) or "<node>:<slot>" on the node's device, once per size a tensor has: the variables' and
//     the gathered rows' sizes that a timeline gives only with show_memory.
// Binary files are read one DeviceStepStats at a time (the RunMetadata may repeat step_stats:
// occurrences merge as protobuf does); text files too, each `dev_stats { ... }` block found by a
// small scanner (text_blocks.h) and parsed by libprotobuf's TextFormat (unknown fields skipped),
// so memory follows the largest device block, not the file.
// Thread-safety: reentrant.
#pragma once

#include <string>

#include "collectors/xplane/profile_format.h"
#include "core/capture_builder.h"
#include "core/status.h"

namespace tfdiag {

// `format`: kRunMetadata, kStepStats, kRunMetadataText or kStepStatsText (SniffProfile).
// Errors (kInvalidInput): "<file>: byte <N>: <what was expected>" (text: "<file>: line L column
// C: ..."); kIo when the file cannot be read.
Status ReadRunMetadata(const std::string& path, ProfileFormat format, CaptureBuilder* builder);

// Parses a RecvTensor timeline label; false when it has another form. bytes: the exact count for
// "[<N>B]", N * 2^20 rounded for "[<x.y>MB]".
bool ParseRecvTensorLabel(std::string_view label, int64_t* bytes, std::string_view* edge,
                          std::string_view* src, std::string_view* dst);

}  // namespace tfdiag
