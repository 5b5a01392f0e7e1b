#include "collectors/xplane/profile_format.h"

#include <cstdint>

namespace tfdiag {

namespace {

// A protobuf varint at *p (advanced past it); false when it runs past `end` or is too long.
bool Varint(const unsigned char** p, const unsigned char* end, uint64_t* v) {
  *v = 0;
  for (int shift = 0; shift < 64 && *p < end; shift += 7) {
    const unsigned char b = *(*p)++;
    *v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return true;
  }
  return false;
}

bool Printable(unsigned char c) { return c >= 0x20 && c < 0x7f; }

// Skips blanks and '#' comments of protobuf text.
std::string_view SkipTextBlanks(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    if (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
      ++i;
    } else if (s[i] == '#') {
      while (i < s.size() && s[i] != '\n') ++i;
    } else {
      break;
    }
  }
  return s.substr(i);
}

bool StartsWithField(std::string_view s, std::string_view name) {
  if (s.substr(0, name.size()) != name) return false;
  std::string_view rest = SkipTextBlanks(s.substr(name.size()));
  return !rest.empty() && (rest[0] == '{' || rest[0] == ':' || rest[0] == '<');
}

}  // namespace

ProfileFormat SniffProfile(std::string_view head) {
  std::string_view text = SkipTextBlanks(head);
  if (StartsWithField(text, "step_stats")) return ProfileFormat::kRunMetadataText;
  if (StartsWithField(text, "dev_stats")) return ProfileFormat::kStepStatsText;
  const auto* p = reinterpret_cast<const unsigned char*>(head.data());
  const auto* end = p + head.size();
  if (p == end) return ProfileFormat::kNone;
  // Trace may start with its trace_events (field 4, length-delimited: 0x22) holding
  // device_id (0x08), resource_id (0x10) or name (0x1a).
  if (*p == 0x22) {
    ++p;
    uint64_t len = 0;
    if (!Varint(&p, end, &len) || p == end) return ProfileFormat::kNone;
    return (*p == 0x08 || *p == 0x10 || *p == 0x1a || *p == 0x48 || *p == 0x50)
               ? ProfileFormat::kProfilerTrace
               : ProfileFormat::kNone;
  }
  if (*p != 0x0a) return ProfileFormat::kNone;  // field 1, length-delimited, in all four
  ++p;
  uint64_t len = 0;
  if (!Varint(&p, end, &len) || p == end) return ProfileFormat::kNone;
  // Inside field 1.
  const unsigned char tag = *p;
  if (tag == 0x0a) {
    // RunMetadata.step_stats{dev_stats{device...}} or StepStats.dev_stats{device:"/..."}.
    ++p;
    if (!Varint(&p, end, &len) || p == end) return ProfileFormat::kNone;
    if (*p == '/' || (Printable(*p) && *p != 0x0a && *p != 0x12)) return ProfileFormat::kStepStats;
    if (*p == 0x0a || *p == 0x12) return ProfileFormat::kRunMetadata;
    return ProfileFormat::kNone;
  }
  if (tag == 0x12 && len == 0) return ProfileFormat::kNone;
  // XPlane {id = 1 (varint), name = 2 (string)} or Trace.devices entry {key = 1 (varint),
  // value = 2 (Device message: name 0x0a, device_id 0x10, resources 0x1a)}.
  if (tag == 0x08) {
    ++p;
    uint64_t ignored = 0;
    if (!Varint(&p, end, &ignored)) return ProfileFormat::kNone;
    if (p == end) return ProfileFormat::kXSpace;  // only an id seen so far
  }
  if (p == end) return ProfileFormat::kNone;
  if (*p == 0x12) {
    ++p;
    uint64_t n = 0;
    if (!Varint(&p, end, &n)) return ProfileFormat::kNone;
    if (n == 0 || p == end) return ProfileFormat::kXSpace;
    if (*p == 0x0a || *p == 0x10 || *p == 0x1a) return ProfileFormat::kProfilerTrace;
    return Printable(*p) ? ProfileFormat::kXSpace : ProfileFormat::kNone;
  }
  // A plane without a name: lines (0x1a) or event_metadata (0x22), stat_metadata (0x2a).
  if (*p == 0x1a || *p == 0x22 || *p == 0x2a || *p == 0x32) return ProfileFormat::kXSpace;
  return ProfileFormat::kNone;
}

const char* ProfileFormatName(ProfileFormat f) {
  switch (f) {
    case ProfileFormat::kXSpace:
      return "xplane";
    case ProfileFormat::kProfilerTrace:
      return "profiler-trace";
    case ProfileFormat::kRunMetadata:
      return "runmetadata";
    case ProfileFormat::kStepStats:
      return "stepstats";
    case ProfileFormat::kRunMetadataText:
      return "runmetadata-text";
    case ProfileFormat::kStepStatsText:
      return "stepstats-text";
    case ProfileFormat::kNone:
      break;
  }
  return "none";
}

}  // namespace tfdiag
