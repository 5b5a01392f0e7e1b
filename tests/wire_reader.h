// A small protobuf wire-format reader for tests: an independent reading of the profilers'
// binary files (field numbers from TSL's xplane.proto and TF's trace_events.proto), used to check
// tfdiag's readers, which go through libprotobuf and generated classes.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

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

// One event of an XSpace as the wire walk sees it: its metadata name, its line's name, its span
// in ns (line timestamp + offset), its int stats by stat name.
struct WEvent {
  std::string name, line;
  int64_t start_ns = 0, end_ns = 0;
  std::map<std::string, int64_t> ints;  // int stats by stat name
};
// One plane (XSpace field 1): its name and every event of its lines, line by line.
struct WPlane {
  std::string name;
  std::vector<WEvent> events;
};

// The planes of an XSpace file's bytes (malformed parts are skipped).
inline std::vector<WPlane> WalkPlanes(std::string_view file) {
  std::vector<WPlane> planes;
  WalkFields(file, [&](uint32_t f, int wt, uint64_t, std::string_view plane) {
    if (f != 1 || wt != 2) return;
    WPlane p;
    std::map<int64_t, std::string> em, sm;
    std::vector<std::string_view> lines;
    WalkFields(plane, [&](uint32_t pf, int, uint64_t, std::string_view v) {
      if (pf == 2) p.name = std::string(v);
      if (pf == 3) lines.push_back(v);
      if (pf == 4 || pf == 5) {  // map entry {key = 1, value = 2 {name = 2}}
        int64_t key = 0;
        std::string name;
        MetadataEntry(v, &key, &name);
        (pf == 4 ? em : sm)[key] = name;
      }
    });
    for (std::string_view l : lines) {
      std::string lname;
      int64_t ts = 0;
      std::vector<std::string_view> evs;
      WalkFields(l, [&](uint32_t lf, int, uint64_t x, std::string_view lv) {
        if (lf == 2) lname = std::string(lv);
        if (lf == 3) ts = static_cast<int64_t>(x);
        if (lf == 4) evs.push_back(lv);
      });
      for (std::string_view ev : evs) {
        WEvent e;
        e.line = lname;
        int64_t off = 0, dur = 0;
        WalkFields(ev, [&](uint32_t ef, int ewt, uint64_t x, std::string_view sv) {
          if (ef == 1) e.name = em[static_cast<int64_t>(x)];
          if (ef == 2) off = static_cast<int64_t>(x);
          if (ef == 3) dur = static_cast<int64_t>(x);
          if (ef == 4 && ewt == 2) {
            int64_t id = -1, val = 0;
            bool is_int = false;
            WalkFields(sv, [&](uint32_t xf, int, uint64_t xv, std::string_view) {
              if (xf == 1) id = static_cast<int64_t>(xv);
              if (xf == 3 || xf == 4) {
                val = static_cast<int64_t>(xv);
                is_int = true;
              }
            });
            if (is_int) e.ints[sm[id]] = val;
          }
        });
        e.start_ns = ts + off / 1000;
        e.end_ns = e.start_ns + dur / 1000;
        p.events.push_back(std::move(e));
      }
    }
    planes.push_back(std::move(p));
  });
  return planes;
}

}  // namespace tfdiag::test
