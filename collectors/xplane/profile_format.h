// Telling the profilers' protobuf files apart by content (never by extension), as the timeline
// reader does for JSON: a TF2 XSpace (`<host>.xplane.pb`), a TF 2.0-2.1 profiler Trace
// (`<host>.trace`), a TF1 RunMetadata or bare StepStats, binary or text (`str(run_metadata)`).
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace tfdiag {

enum class ProfileFormat {
  kNone,             // not one of these (JSON, a bundle, a manifest, garbage)
  kXSpace,           // tensorflow.profiler.XSpace, binary
  kProfilerTrace,    // tensorflow.profiler.Trace, binary
  kRunMetadata,      // tensorflow.RunMetadata, binary
  kStepStats,        // tensorflow.StepStats, binary
  kRunMetadataText,  // RunMetadata in protobuf text format ("step_stats { dev_stats { ...")
  kStepStatsText,    // StepStats in protobuf text format ("dev_stats { ...")
};

// Looks at the first bytes of a file (`head`, 256 are plenty; fewer when the file is shorter).
// Binary messages are recognised by the shape of their first nested fields (field numbers and
// wire types of the schemas in xplane.proto, trace.proto and run_metadata.proto): a RunMetadata
// starts with step_stats{dev_stats{device:"/..."}}, an XSpace with planes{id?, name:"..."}, a
// Trace with devices{key, value:Device{...}} or trace_events.
ProfileFormat SniffProfile(std::string_view head);

// "xplane", "profiler-trace", "runmetadata", ... for FileStats::format and messages.
const char* ProfileFormatName(ProfileFormat f);

}  // namespace tfdiag
