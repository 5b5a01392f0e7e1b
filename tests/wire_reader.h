// A small protobuf wire-format reader for tests: an independent reading of the profilers'
// binary files (field numbers from TSL's xplane.proto and TF's trace_events.proto), used to check
// tfdiag's readers, which go through libprotobuf and generated classes.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace tfdiag::test {

// Calls fn(field number, wire type, varint value, payload) for each field of `msg`; payload is
// set for wire type 2 only. Returns false on malformed data.
inline bool WalkFields(std::string_view msg,
                       const std::function<void(uint32_t, int, uint64_t, std::string_view)>& fn) {
  size_t i = 0;
  auto varint = [&](uint64_t* v) {
    *v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (i >= msg.size()) return false;
      const uint8_t b = static_cast<uint8_t>(msg[i++]);
      *v |= uint64_t{b & 0x7fu} << shift;
      if (!(b & 0x80)) return true;
    }
    return false;
  };
  while (i < msg.size()) {
    uint64_t tag = 0;
    if (!varint(&tag)) return false;
    const uint32_t field = static_cast<uint32_t>(tag >> 3);
    const int wt = static_cast<int>(tag & 7);
    uint64_t v = 0;
    std::string_view payload;
    if (wt == 0) {
      if (!varint(&v)) return false;
    } else if (wt == 1) {
      if (i + 8 > msg.size()) return false;
      i += 8;
    } else if (wt == 5) {
      if (i + 4 > msg.size()) return false;
      i += 4;
    } else if (wt == 2) {
      if (!varint(&v) || v > msg.size() - i) return false;
      payload = msg.substr(i, v);
      i += v;
    } else {
      return false;
    }
    fn(field, wt, v, payload);
  }
  return true;
}

// One entry of an XPlane's event_metadata or stat_metadata map (XPlane fields 4 and 5): a map
// entry {key = 1, value = 2: XEventMetadata/XStatMetadata {name = 2}}. Sets *key and *name.
inline void MetadataEntry(std::string_view entry, int64_t* key, std::string* name) {
  WalkFields(entry, [&](uint32_t ef, int, uint64_t x, std::string_view ev) {
    if (ef == 1) *key = static_cast<int64_t>(x);
    if (ef == 2) {
      WalkFields(ev, [&](uint32_t mf, int, uint64_t, std::string_view mv) {
        if (mf == 2) *name = std::string(mv);
      });
    }
  });
}

}  // namespace tfdiag::test
